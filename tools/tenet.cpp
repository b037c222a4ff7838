// The `tenet` command line: check, print, run, gradcheck, emit, opt, and
// train, eval, predict.
//
// Every user error (bad program, bad input, bad flag) prints a diagnostic on
// stderr and exits with status 1; an internal compiler error exits with 2.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/tenet_parallel.h"
#include "support/child_processes.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "tools/grad_commands.h"
#include "tools/train_commands.h"

namespace {

const char* kUsage = R"(usage: tenet <command> [options]

Tenet compiles tensor programs written in index notation.

commands:
  check FILE             check a program and report its errors
  print FILE             print a program at a stage of the pipeline (source, IR, C++);
                         with --grad FN, the gradient program of FN
  run FILE               run a function on random or given inputs (interpreter or compiled);
                         with --grad, forward and backward
  gradcheck FILE         check a function's gradients against finite differences, and
                         the compiled gradients against the interpreter
  emit FILE              write standalone C++ sources and a CMakeLists.txt
  opt FILE.ir            run named optimisation passes on printed IR
  train MODEL            train a model on MNIST (checkpoints, resume, test accuracy per epoch)
  eval MODEL             test accuracy and loss of a trained model
  predict MODEL          predicted classes and scores of images

Run 'tenet <command> --help' for a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  tenet::settle_openmp_waiting(argv);  // first: it may start this program again
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "tenet 0.1.0\n";
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  // SIGINT, SIGTERM or SIGHUP during a JIT compile also end the compiler.
  tenet::end_children_on_signals();
  try {
    if (command == "check") return tenet::cli::cmd_check(args);
    if (command == "print") return tenet::cli::cmd_print(args);
    if (command == "run") return tenet::cli::cmd_run(args);
    if (command == "gradcheck") return tenet::cli::cmd_gradcheck(args);
    if (command == "emit") return tenet::cli::cmd_emit(args);
    if (command == "opt") return tenet::cli::cmd_opt(args);
    if (command == "train") return tenet::cli::cmd_train(args);
    if (command == "eval") return tenet::cli::cmd_eval(args);
    if (command == "predict") return tenet::cli::cmd_predict(args);
    std::cerr << "error: unknown command '" << command << "'\n\n" << kUsage;
    return 1;
  } catch (const tenet::CompileError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const tenet::BindError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const tenet::cli::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave or the environment set up (a file where a folder
    // should be, no permission): their error, though a message naming the
    // option is better (each command checks its paths first).
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const tenet::InternalError& e) {
    std::cerr << e.what() << "\nThis is a bug in Tenet; please report it with the input.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
}
