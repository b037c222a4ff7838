// The subcommands check, print, run and emit (commands.h).
#include "tools/commands.h"

#include <iostream>

#include "codegen/aot.h"
#include "codegen/cpp.h"
#include "codegen/jit.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "lang/ast.h"
#include "lang/parser.h"
#include "lang/unparse.h"
#include "support/error.h"
#include "support/npy.h"
#include "tools/args.h"
#include "tools/grad_commands.h"
#include "tools/program.h"

namespace tenet::cli {

int cmd_check(const std::vector<std::string>& argv) {
  Args a("check", "FILE", "Parses and checks FILE; prints its functions' signatures.");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  Program p = load(require_file(a), a.get("dump-after"), "check");
  // "name: float32[B, N]" for a value shown under a user-facing name.
  auto describe = [](const std::string& name, const ir::Value& v) {
    std::string text = name + ": " + std::string(type_name(v.type)) + "[";
    for (size_t d = 0; d < v.shape.size(); ++d) text += (d ? ", " : "") + v.shape[d].str();
    return text + "]";
  };
  for (const auto& f : p.module.functions) {
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
         "Prints FILE at a stage of the pipeline:\n"
         "  parse   the source as parsed, normalised\n"
         "  check   the IR made by the checker\n"
         "  PASS    the IR after that pass of the pipeline\n"
         "  ir      the IR after the whole pipeline\n"
         "  source  the IR after the whole pipeline, printed back as source\n"
         "  cpp     the generated C++\n"
         "With --grad FN, prints the gradient program of FN: at stage source (the\n"
         "default) as automatic differentiation derived it, at stages ir and cpp\n"
         "after the pipeline, at stage PASS after that pass.");
  a.option("stage", "STAGE", "parse | check | PASS | ir | source | cpp", "ir");
  a.option("fn", "NAME", "print only this function (IR, source and C++ stages)");
  a.option("grad", "FN", "print the gradient program of function FN");
  add_grad_request_options(a);
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.is_set("grad")) {
    if (a.is_set("fn")) throw UsageError("--grad names the function; --fn is not needed");
    return print_gradient(a);
  }
  if (a.is_set("wrt") || a.is_set("output") || a.is_set("vjp"))
    throw UsageError("--wrt, --output and --vjp apply with --grad FN only");
  std::string path = require_file(a), stage = a.get("stage");
  if (stage == "parse") {
    SourceFile file = SourceFile::read(path);
    std::cout << ast::print(lang::parse(file));
    return 0;
  }
  bool whole = stage == "ir" || stage == "cpp" || stage == "source";
  Program p = load(path, a.get("dump-after"), whole ? "" : stage);
  std::vector<std::string> fns = chosen_functions(p, a.get("fn"));
  if (stage == "cpp") {
    codegen::CppUnit unit = codegen::emit_cpp(p.module, fns, codegen::CppOptions{});
    std::cout << "// ----- " << unit.header_name << " -----\n"
              << unit.header << "// ----- " << unit.source_name << " -----\n"
              << unit.source;
    return 0;
  }
  for (size_t i = 0; i < fns.size(); ++i) {
    const ir::Function& f = *p.module.find(fns[i]);
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
  a.option("backend", "interp|cpp", "the reference interpreter or JIT-compiled C++", "interp");
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
  Program p = load(require_file(a), a.get("dump-after"));
  const ir::Function& fn = select_function(p, a.get("fn"));
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
  } else if (backend == "cpp") {
    if (a.is_set("float64")) throw UsageError("--float64 applies to --backend interp only");
    codegen::JitOptions options;
    options.verbose = a.is_set("verbose");
    codegen::CompiledFunction compiled = codegen::jit_compile(p.module, fn.name, options);
    outputs = compiled.run(inputs, given);
  } else {
    throw UsageError("--backend must be 'interp' or 'cpp', not '" + backend + "'");
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

int cmd_emit(const std::vector<std::string>& argv) {
  Args a("emit", "FILE --target cpp -o DIR [--fn NAME]",
         "Writes standalone C++17 sources for FILE's functions, with the runtime\n"
         "headers they need and a CMakeLists.txt that builds them on their own.");
  a.option("target", "cpp", "the code generator", "cpp");
  a.option("o", "DIR", "output directory");
  a.option("fn", "NAME", "emit only this function (default: every function)");
  a.flag("no-openmp", "emit serial code");
  a.flag("overwrite", "replace the files of a project already in DIR");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.get("target") != "cpp")
    throw UsageError("--target must be 'cpp' (CUDA is not implemented yet)");
  if (!a.is_set("o")) throw UsageError("emit needs an output directory: -o DIR");
  Program p = load(require_file(a), a.get("dump-after"));
  std::vector<std::string> fns = chosen_functions(p, a.get("fn"));
  codegen::CppOptions options;
  options.openmp = !a.is_set("no-openmp");
  codegen::emit_project(p.module, fns, a.get("o"), options, a.is_set("overwrite"));
  std::cout << "wrote " << a.get("o") << " (" << fns.size() << " function"
            << (fns.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

}  // namespace tenet::cli
