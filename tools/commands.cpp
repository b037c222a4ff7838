// The subcommands check, print, run and emit (commands.h).
#include "tools/commands.h"

#include <fstream>
#include <iostream>

#include "driver/driver.h"
#include "driver/front_end.h"
#include "extension/torch_project.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "jit/aot.h"
#include "jit/jit.h"
#include "lang/ast.h"
#include "lang/check.h"
#include "lang/unparse.h"
#include "lower/loops.h"
#include "support/error.h"
#include "support/npy.h"
#include "tools/args.h"
#include "tools/grad_commands.h"
#include "tools/program.h"
#include "train/standalone_project.h"

namespace tenet::cli {

int cmd_check(const std::vector<std::string>& argv) {
  Args a("check", "FILE", "Parses and checks FILE; prints its functions' signatures.");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  driver::Compilation p = front_end(require_file(a), a.get("dump-after"));
  // "name: float32[B, N]" for a value shown under a user-facing name.
  auto describe = [](const std::string& name, const ir::Value& v) {
    std::string text = name + ": " + std::string(type_name(v.type)) + "[";
    for (size_t d = 0; d < v.shape.size(); ++d) text += (d ? ", " : "") + v.shape[d].str();
    return text + "]";
  };
  for (const auto& f : p.checked->functions) {
    std::cout << f.name << "(";
    for (size_t i = 0; i < f.inputs.size(); ++i)
      std::cout << (i ? ", " : "") << describe(f.inputs[i]->name, *f.inputs[i]);
    std::cout << ") -> (";
    for (size_t i = 0; i < f.outputs.size(); ++i)
      std::cout << (i ? ", " : "") << describe(f.output_names[i], *f.outputs[i]);
    std::cout << ")\n";
  }
  std::cout << p.file->path() << ": ok\n";
  return 0;
}

int cmd_print(const std::vector<std::string>& argv) {
  Args a("print", "FILE [--stage STAGE] [--fn NAME] | FILE --grad FN [--stage STAGE]",
         "Prints FILE at a stage of the compiler:\n"
         "  parse   the source as parsed, normalised\n"
         "  check   the IR made by the checker\n"
         "  retype  the IR of the chosen functions (--fn), before AD\n"
         "  ad      the same after automatic differentiation (with --grad)\n"
         "  PASS    the IR after that optimisation pass\n"
         "  ir      the IR after every optimisation pass\n"
         "  source  the IR after every optimisation pass, printed back as source\n"
         "  cpp     the generated C++ (of the target cpp, the default)\n"
         "With --grad FN, prints the gradient program of FN: at stage source (the\n"
         "default) as automatic differentiation derived it, at the other stages as\n"
         "without --grad (check and retype show FN itself).\n"
         "Stages: " +
             driver::stage_names() + ".");
  a.option("stage", "STAGE", "a stage, ir or source", "ir");
  add_target_option(a);
  a.option("fn", "NAME", "print only this function (IR, source and C++ stages)");
  a.option("grad", "FN", "print the gradient program of function FN");
  add_grad_request_options(a);
  a.option("half", "forward|backward",
           "with --vjp: one half of the program, cut after the optimisation passes: the "
           "forward returning what the backward reads, or the backward taking it");
  add_static_sizes_option(a);
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.is_set("grad")) {
    if (a.is_set("fn")) throw UsageError("--grad names the function; --fn is not needed");
    return print_gradient(a);
  }
  if (a.is_set("wrt") || a.is_set("output") || a.is_set("vjp"))
    throw UsageError("--wrt, --output and --vjp apply with --grad FN only");
  std::string path = require_file(a), stage = a.get("stage"), target = a.get("target");
  if (stage == "loops") stage = "lower_loops";  // the loop tree's short name
  driver::Request r = request(path, a.get("dump-after"), target);
  r.static_sizes = static_sizes(a);
  bool whole = stage == "ir" || stage == "source";
  r.stop_after = whole ? "" : stage;
  if (stage == driver::stage::kParse) {
    // Only the parser runs: a program that does not check prints too.
    std::cout << ast::print(*driver::compile(r).ast);
    return 0;
  }
  // An unknown stage before any work.
  r.emit_code = !whole && driver::find_stage(stage, target).form == driver::Form::Code;
  driver::Compilation front = front_end(path, a.get("dump-after"), target);
  for (const std::string& name : chosen_functions(front, a.get("fn")))
    r.functions.push_back({name, std::nullopt});
  driver::Compilation c = compile_after(front, r);
  if (r.emit_code) {
    std::cout << driver::find_target(target).print(c);
    return 0;
  }
  if (c.lowered && driver::find_stage(stage, target).form == driver::Form::Loops) {
    for (const lower::LoweredFunction& f : c.lowered->functions)
      std::cout << lower::print(f.loops, *f.function);
    return 0;
  }
  if (c.lowered) {
    for (const lower::LoweredFunction& f : c.lowered->functions) std::cout << lower::print(f);
    return 0;
  }
  for (size_t i = 0; i < r.functions.size(); ++i) {
    const ir::Function& f = *c.ir().find(r.functions[i].name);
    if (stage == "source")
      std::cout << (i ? "\n" : "") << lang::unparse(f);
    else
      std::cout << ir::print(f);
  }
  return 0;
}

int cmd_run(const std::vector<std::string>& argv) {
  Args a("run", "FILE [options]",
         "Runs a function of FILE on random inputs (from --seed) or on given ones\n"
         "(--inputs DIR with one NAME.npy per input) and prints each output's shape,\n"
         "a checksum line (sum, sum of squares) and its first values.\n"
         "With --grad, runs its gradient program instead: the forward outputs, then\n"
         "one gradient d_<input> per differentiated input (with --vjp, the random\n"
         "cotangents d_<output> come after the inputs, drawn from the same seed).");
  a.option("fn", "NAME", "the function to run (needed when FILE has several entry functions)");
  a.option("sizes", "N=V,...", "size parameters, e.g. B=2,N=3");
  a.option("seed", "S", "seed of the random inputs", "0");
  a.option("inputs", "DIR",
           "read inputs from DIR/<input>.npy instead of random values (with --grad --vjp, "
           "also the cotangents DIR/d_<output>.npy)");
  add_backend_option(a);
  a.option("save", "DIR", "also write each output (and gradient) to DIR/<name>.npy");
  a.flag("float64", "interpreter: compute every float in float64");
  a.flag("grad", "run forward and backward: the gradient program of the function");
  add_grad_request_options(a);
  a.flag("verbose", "print compiler commands and cache hits");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (!a.is_set("grad") && (a.is_set("wrt") || a.is_set("output") || a.is_set("vjp")))
    throw UsageError("--wrt, --output and --vjp apply with --grad only");
  prepare_save_folder(a);
  if (a.is_set("grad")) return run_gradient(a);
  std::string path = require_file(a);
  const std::string target = code_target(a);
  driver::Compilation front = front_end(path, a.get("dump-after"), target);
  driver::Request r = request(path, a.get("dump-after"), target);
  r.functions = {{select_function(front, a.get("fn")).name, std::nullopt}};
  const driver::Compilation p = compile_after(front, r);
  const ir::Function& fn = p.optimised.functions.at(0);
  ir::SizeBindings given = parse_sizes(a.get("sizes"));
  uint64_t seed = parse_seed(a.get("seed"));

  std::vector<Tensor> inputs;
  if (a.is_set("inputs")) {
    for (const auto& in : fn.inputs)
      inputs.push_back(read_npy(a.get("inputs") + "/" + in->name + ".npy"));
  } else {
    require_sizes(fn, given, true);
    inputs = ir::random_inputs(fn, given, seed);
  }

  std::string backend = a.get("backend");
  std::vector<Tensor> outputs;
  if (backend == "interp") {
    ir::InterpOptions options;
    if (a.is_set("float64")) options.float_type = ElemType::F64;
    outputs = ir::interpret(fn, inputs, given, options);
  } else {
    if (a.is_set("float64")) throw UsageError("--float64 applies to --backend interp only");
    jit::JitOptions options;
    options.verbose = a.is_set("verbose");
    outputs = driver::load(r, p, options).at(0).run(inputs, given);
  }

  std::cout << "function " << fn.name << " (backend " << backend << ")\n";
  for (size_t i = 0; i < fn.inputs.size(); ++i)
    std::cout << "input " << fn.inputs[i]->name << ": " << inputs[i].describe() << "\n";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = fn.output_names[i];
    print_tensor_summary(std::cout, "output", name, outputs[i]);
    if (a.is_set("save")) write_npy(a.get("save") + "/" + name + ".npy", outputs[i]);
  }
  return 0;
}

namespace {

/// `tenet emit FILE --target torch -o DIR`: a PyTorch C++ extension.
int emit_torch(const Args& a) {
  if (a.is_set("train"))
    throw UsageError("--train projects are standalone programs: --target torch emits operators");
  if (!a.is_set("o")) throw UsageError("emit needs an output directory: -o DIR");
  extension::TorchProjectOptions options;
  options.ns = a.get("namespace");
  if (a.is_set("fn")) options.functions = {a.get("fn")};
  options.name = a.get("name");
  for (const auto& [name, value] : parse_sizes(a.get("sizes"))) options.sizes[name] = value;
  options.openmp = !a.is_set("no-openmp");
  options.index_checks = !a.is_set("no-index-checks");
  options.overwrite = a.is_set("overwrite");
  const std::string path = require_file(a);
  const extension::TorchProject p =
      extension::emit_torch_project(path, std::nullopt, a.get("o"), options);
  std::cout << "wrote " << a.get("o") << " (PyTorch extension " << p.ns << ":";
  for (const std::string& op : p.operators) std::cout << " " << op;
  std::cout << ")\n";
  return 0;
}

}  // namespace

int cmd_emit(const std::vector<std::string>& argv) {
  Args a("emit", "FILE --target cpp|cuda|torch -o DIR [--fn NAME | --train]",
         "Writes standalone C++17 sources for FILE's functions, with the runtime\n"
         "headers they need and a CMakeLists.txt that builds them on their own (with\n"
         "--target cuda: host code and CUDA kernels, built with the CUDA toolkit); with\n"
         "--train, a project that trains and runs the model with no Python or Tenet;\n"
         "with --target torch, a PyTorch C++ extension: each function an operator\n"
         "with autograd from its derived backward (docs/python.md).");
  a.option("target", "cpp|cuda|torch",
           "the code generator: C++ for the CPU, CUDA, or a PyTorch extension", "cpp");
  a.option("namespace", "NS",
           "--target torch: the operators' namespace (torch.ops.NS; default: FILE's stem)");
  a.option("name", "OP", "--target torch: the operator's name (default: the function's)");
  a.option("sizes", "N=V,...", "--target torch: fix size parameters no input's shape determines");
  a.option("o", "DIR", "output directory");
  a.option("fn", "NAME", "emit only this function (default: every function)");
  a.flag("no-openmp", "emit serial code");
  a.flag("no-index-checks",
         "release code: no run-time check of computed indices (data-dependent reads); one "
         "out of range then reads outside its tensor");
  a.flag("overwrite", "replace the files of a project already in DIR");
  a.flag("train",
         "a project that trains and runs the model (its # @train directives): a C API, and "
         "train and predict programs (docs/standalone.md)");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.get("target") == "torch") return emit_torch(a);
  for (const char* torch_only : {"namespace", "name", "sizes"})
    if (a.is_set(torch_only))
      throw UsageError(std::string("--") + torch_only + " is for --target torch");
  // An unknown target lists the known ones; a project is for the CPU or CUDA.
  const std::string target = driver::find_target(a.get("target")).name;
  if (target != "cpp" && target != "cuda" && !(target == "cuda-emulated" && a.is_set("train")))
    throw UsageError(
        "tenet emit writes projects for the CPU or CUDA: --target must be 'cpp' or "
        "'cuda' (or 'cuda-emulated' with --train)");
  if (!a.is_set("o")) throw UsageError("emit needs an output directory: -o DIR");
  std::string path = require_file(a);
  if (a.is_set("train")) {
    if (a.is_set("fn"))
      throw UsageError(
          "--fn and --train do not go together: --train emits the "
          "functions the @train and @eval directives name");
    train::StandaloneOptions options;
    options.openmp = !a.is_set("no-openmp");
    options.index_checks = !a.is_set("no-index-checks");
    options.overwrite = a.is_set("overwrite");
    options.target = target;
    const std::string name = train::emit_standalone_project(path, a.get("o"), options);
    std::cout << "wrote " << a.get("o") << " (" << name << "_train.h, train, predict)\n";
    return 0;
  }
  driver::Compilation front = front_end(path, a.get("dump-after"), target);
  driver::Request r = request(path, a.get("dump-after"), target);
  std::vector<std::string> fns = chosen_functions(front, a.get("fn"));
  for (const std::string& name : fns) r.functions.push_back({name, std::nullopt});
  r.emit_code = true;
  r.cpp.openmp = !a.is_set("no-openmp");
  r.cpp.index_checks = !a.is_set("no-index-checks");
  const driver::Compilation p = compile_after(front, r);
  jit::emit_project(*p.cpp, p.optimised.functions.front(), a.get("o"), a.is_set("overwrite"));
  std::cout << "wrote " << a.get("o") << " (" << fns.size() << " function"
            << (fns.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

int cmd_opt(const std::vector<std::string>& argv) {
  Args a("opt", "FILE.ir --passes=A,B,C [-o OUT]",
         "Parses FILE.ir (the IR's text form, as --dump-after and print --stage show\n"
         "it), runs the named optimisation passes in the given order, verifying the\n"
         "IR after each, and prints the result.\n"
         "Passes: " +
             driver::pass_names() + ".");
  a.option("passes", "A,B,C", "the passes to run, in order (none: print FILE.ir back)");
  a.option("o", "OUT", "write the IR to OUT instead of stdout");
  if (!a.parse(argv)) return 0;
  ir::Module m = ir::parse_ir(SourceFile::read(require_file(a)));
  driver::run_passes(m, parse_list(a.get("passes")));
  const std::string text = ir::print(m);
  if (!a.is_set("o")) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(a.get("o"), std::ios::binary);
  out << text;
  if (!out.flush()) throw UsageError("-o: cannot write '" + a.get("o") + "'");
  return 0;
}

}  // namespace tenet::cli
