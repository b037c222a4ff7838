#include "tools/commands.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "codegen/aot.h"
#include "codegen/cpp.h"
#include "codegen/jit.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "lang/ast.h"
#include "lang/check.h"
#include "lang/parser.h"
#include "passes/pipeline.h"
#include "support/error.h"
#include "support/npy.h"
#include "tools/args.h"

namespace tenet::cli {

namespace {

/// A checked program: its source, AST, and IR after the pipeline (or a stage).
struct Program {
  std::unique_ptr<SourceFile> file;
  ast::Program ast;
  ir::Module module;
};

std::string require_file(const Args& a) {
  if (a.positional().size() != 1)
    throw UsageError("expected one FILE argument (see --help)");
  return a.positional()[0];
}

Program load(const std::string& path, const std::string& dump_after,
             const std::string& stop_after = "") {
  Program p;
  p.file = std::make_unique<SourceFile>(SourceFile::read(path));
  p.ast = lang::parse(*p.file);
  p.module = lang::check(p.ast, *p.file);
  passes::PipelineOptions options;
  options.dump_after = passes::parse_dump_after(dump_after);
  options.stop_after = stop_after;
  passes::run_pipeline(p.module, options);
  return p;
}

void collect_calls(const std::vector<ast::StmtPtr>& body, std::set<std::string>& called) {
  for (const auto& s : body) {
    if (s->kind == ast::StmtKind::Call) called.insert(s->callee.name);
    if (s->kind == ast::StmtKind::For) collect_calls(s->body, called);
  }
}

/// The function named by --fn, or the file's one entry function (a def that no
/// other def calls).
const ir::Function& select_function(const Program& p, const std::string& name) {
  std::string names;
  for (const auto& f : p.module.functions) names += (names.empty() ? "" : ", ") + f.name;
  if (!name.empty()) {
    if (const ir::Function* f = p.module.find(name)) return *f;
    throw UsageError("no function '" + name + "' in " + p.file->path() + " (functions: " + names +
                     ")");
  }
  std::set<std::string> called;
  for (const auto& f : p.ast.functions) collect_calls(f.body, called);
  std::vector<const ir::Function*> entries;
  for (const auto& f : p.module.functions)
    if (!called.count(f.name)) entries.push_back(&f);
  if (entries.size() == 1) return *entries[0];
  if (p.module.functions.empty()) throw UsageError(p.file->path() + " defines no function");
  std::string entry_names;
  for (auto* f : entries) entry_names += (entry_names.empty() ? "" : ", ") + f->name;
  throw UsageError(p.file->path() + " has several entry functions (" + entry_names +
                   "); choose one with --fn NAME");
}

ir::SizeBindings parse_sizes(const std::string& spec) {
  ir::SizeBindings sizes;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--sizes expects NAME=VALUE[,NAME=VALUE...], got '" + item + "'");
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 0)
      throw UsageError("--sizes: '" + value + "' is not a non-negative integer (for " + name +
                       ")");
    sizes[name] = v;
  }
  return sizes;
}

void add_common_options(Args& a) {
  a.option("dump-after", "PASS[,PASS]|all",
           "print the IR after the named passes to stderr (also TENET_DUMP_AFTER)");
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void print_tensor_summary(std::ostream& os, const std::string& name, const Tensor& t) {
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    sum += v;
    sum_sq += v * v;
  }
  os << "output " << name << ": " << t.describe() << "\n";
  os << "  checksum: " << fmt(sum) << " " << fmt(sum_sq) << "\n";
  os << "  values:";
  int64_t shown = std::min<int64_t>(t.numel(), 8);
  for (int64_t i = 0; i < shown; ++i) os << " " << fmt(t.get(i));
  if (t.numel() > shown) os << " ...";
  os << "\n";
}

}  // namespace

int cmd_check(const std::vector<std::string>& argv) {
  Args a("check", "FILE", "Parses and checks FILE; prints its functions' signatures.");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  Program p = load(require_file(a), a.get("dump-after"), "check");
  for (const auto& f : p.module.functions) {
    std::cout << f.name << "(";
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const auto& v = *f.inputs[i];
      std::cout << (i ? ", " : "") << v.name << ": " << type_name(v.type) << "[";
      for (size_t d = 0; d < v.shape.size(); ++d) std::cout << (d ? ", " : "") << v.shape[d].str();
      std::cout << "]";
    }
    std::cout << ") -> (";
    for (size_t i = 0; i < f.outputs.size(); ++i) {
      const auto& v = *f.outputs[i];
      std::cout << (i ? ", " : "") << v.name << ": " << type_name(v.type) << "[";
      for (size_t d = 0; d < v.shape.size(); ++d) std::cout << (d ? ", " : "") << v.shape[d].str();
      std::cout << "]";
    }
    std::cout << ")\n";
  }
  std::cout << p.file->path() << ": ok\n";
  return 0;
}

int cmd_print(const std::vector<std::string>& argv) {
  Args a("print", "FILE [--stage STAGE] [--fn NAME]",
         "Prints FILE at a stage of the pipeline:\n"
         "  parse   the source as parsed, normalised\n"
         "  check   the IR made by the checker\n"
         "  PASS    the IR after that pass of the pipeline\n"
         "  ir      the IR after the whole pipeline\n"
         "  cpp     the generated C++");
  a.option("stage", "STAGE", "parse | check | PASS | ir | cpp", "ir");
  a.option("fn", "NAME", "print only this function (IR and C++ stages)");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  std::string path = require_file(a), stage = a.get("stage");
  if (stage == "parse") {
    SourceFile file = SourceFile::read(path);
    std::cout << ast::print(lang::parse(file));
    return 0;
  }
  std::string stop = (stage == "ir" || stage == "cpp") ? "" : stage;
  Program p = load(path, a.get("dump-after"), stop);
  std::vector<std::string> fns;
  if (a.is_set("fn")) {
    fns.push_back(select_function(p, a.get("fn")).name);
  } else {
    for (const auto& f : p.module.functions) fns.push_back(f.name);
  }
  if (stage == "cpp") {
    codegen::CppUnit unit = codegen::emit_cpp(p.module, fns, codegen::CppOptions{});
    std::cout << "// ----- " << unit.header_name << " -----\n"
              << unit.header << "// ----- " << unit.source_name << " -----\n"
              << unit.source;
    return 0;
  }
  for (const auto& name : fns) std::cout << ir::print(*p.module.find(name));
  return 0;
}

int cmd_run(const std::vector<std::string>& argv) {
  Args a("run", "FILE [options]",
         "Runs a function of FILE on random inputs (from --seed) or on given ones\n"
         "(--inputs DIR with one NAME.npy per input) and prints each output's shape,\n"
         "a checksum line (sum, sum of squares) and its first values.");
  a.option("fn", "NAME", "the function to run (needed when FILE has several entry functions)");
  a.option("sizes", "N=V,...", "size parameters, e.g. B=2,N=3");
  a.option("seed", "S", "seed of the random inputs", "0");
  a.option("inputs", "DIR", "read inputs from DIR/<input>.npy instead of random values");
  a.option("backend", "interp|cpp", "the reference interpreter or JIT-compiled C++", "interp");
  a.option("save", "DIR", "also write each output to DIR/<output>.npy");
  a.flag("float64", "interpreter: compute every float in float64");
  a.flag("verbose", "print compiler commands and cache hits");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  Program p = load(require_file(a), a.get("dump-after"));
  const ir::Function& fn = select_function(p, a.get("fn"));
  ir::SizeBindings given = parse_sizes(a.get("sizes"));
  char* end = nullptr;
  std::string seed_text = a.get("seed");
  unsigned long long seed = std::strtoull(seed_text.c_str(), &end, 10);
  if (seed_text.empty() || *end != '\0') throw UsageError("--seed expects an integer");

  std::vector<Tensor> inputs;
  if (a.is_set("inputs")) {
    for (const auto& in : fn.inputs)
      inputs.push_back(read_npy(a.get("inputs") + "/" + in->name + ".npy"));
  } else {
    for (const auto& in : fn.inputs)
      for (const auto& d : in->shape)
        for (const auto& sym : d.symbols())
          if (!given.count(sym))
            throw UsageError("size parameter '" + sym + "' of input '" + in->name +
                             "' is not bound; give it with --sizes " + sym +
                             "=... (or pass --inputs DIR)");
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
    print_tensor_summary(std::cout, fn.outputs[i]->name, outputs[i]);
    if (a.is_set("save")) {
      std::filesystem::create_directories(a.get("save"));
      write_npy(a.get("save") + "/" + fn.outputs[i]->name + ".npy", outputs[i]);
    }
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
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.get("target") != "cpp")
    throw UsageError("--target must be 'cpp' (CUDA is not implemented yet)");
  if (!a.is_set("o")) throw UsageError("emit needs an output directory: -o DIR");
  Program p = load(require_file(a), a.get("dump-after"));
  std::vector<std::string> fns;
  if (a.is_set("fn")) {
    fns.push_back(select_function(p, a.get("fn")).name);
  } else {
    for (const auto& f : p.module.functions) fns.push_back(f.name);
  }
  codegen::CppOptions options;
  options.openmp = !a.is_set("no-openmp");
  codegen::emit_project(p.module, fns, a.get("o"), options);
  std::cout << "wrote " << a.get("o") << " (" << fns.size() << " function"
            << (fns.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

}  // namespace tenet::cli
