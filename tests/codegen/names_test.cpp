// Names of the C/C++/OpenMP/BLAS world as names of a program (issue 13): a
// function named omp_get_thread_num recursed into itself (libgomp's calls
// from the library bound to it), tensors named INT64_MAX or M_PI broke the
// compile (macros). Every name of tests/codegen/data/c_world_names.txt
// (scripts/c_world_names.sh: libc, libm, libgomp, libstdc++ and OpenBLAS
// symbols, the macros of the headers generated code includes, C++ keywords)
// is used as a tensor, a size and an index name, a few JIT compiles of many
// names each, and the results are compared with the interpreter.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "codegen/c_text.h"
#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/builtins.h"
#include "lang/ast.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

/// The names of the list that the language accepts as names of tensors; the
/// others must be its reserved words or builtins (TC's include <cmath> names
/// such as trunc).
const std::vector<std::string>& usable_names() {
  static const std::vector<std::string> names = [] {
    std::set<std::string> reserved;  // ir/builtins.h
    for (std::string_view w : ir::keywords()) reserved.emplace(w);
    for (std::string_view w : ir::type_names()) reserved.emplace(w);
    std::vector<std::string> usable;
    for (const std::string& name :
         read_lines(tenet::testing::source_path("tests/codegen/data/c_world_names.txt"))) {
      EXPECT_EQ(name.rfind("qq", 0), std::string::npos) << "the tests' own names start with qq";
      try {
        lang::compile_source(SourceFile("probe.tn", "def qq_probe(float(qq_N) " + name +
                                                        ") -> (qq_y) { qq_y(qq_i) = " + name +
                                                        "(qq_i) }"));
        usable.push_back(name);
      } catch (const CompileError& e) {
        EXPECT_TRUE(reserved.count(name) || ast::is_builtin(name)) << name << " is rejected:\n"
                                                                   << e.what();
      }
    }
    EXPECT_GT(usable.size(), size_t(4000));
    return usable;
  }();
  return names;
}

/// Compiles quickly (-O0: the programs are long and simple), with GNU extensions,
/// under which "linux" and "unix" are macros (as in an emitted project, whose
/// CMake default is -std=gnu++17).
jit::JitOptions quick_options() {
  jit::JitOptions options = test_jit_options();
  options.flags = {"-O0",   "-fopenmp", "-fwrapv",        "-ffp-contract=off",
                   "-fPIC", "-shared",  "-Wl,-Bsymbolic", "-std=gnu++17"};
  return options;
}

/// Runs `fn` of `source` compiled and interpreted; the outputs must agree.
void expect_runs_like_the_interpreter(const std::string& source, const std::string& fn,
                                      const ir::SizeBindings& sizes) {
  ir::Module m = compile_tn(source);
  ASSERT_FALSE(m.functions.empty());
  jit::CompiledFunction f = driver::jit_compile(m, fn, quick_options());
  expect_matches_interpreter(f, sizes, 13);
}

TEST(WorldNames, AsTensors) {
  // Per three names a, b, c: an input a, a temporary b (a reduction, so that
  // it stays one), an output c.
  const std::vector<std::string>& names = usable_names();
  std::string params, outputs, body;
  for (size_t k = 0; k + 2 < names.size(); k += 3) {
    const std::string &a = names[k], &b = names[k + 1], &c = names[k + 2];
    params += (params.empty() ? "" : ", ") + std::string("float(qq_N, 2) ") + a;
    outputs += (outputs.empty() ? "" : ", ") + c;
    body += "  " + b + "(qq_i) +=! " + a + "(qq_i, qq_j)\n";
    body += "  " + c + "(qq_i, qq_j) = " + a + "(qq_i, qq_j) * " + b + "(qq_i) + " +
            std::to_string(k % 7) + "\n";
  }
  expect_runs_like_the_interpreter(
      "def qq_tensors(" + params + ") -> (" + outputs + ") {\n" + body + "}\n", "qq_tensors",
      {{"qq_N", 3}});
}

TEST(WorldNames, AsSizes) {
  // Per six names: an input of that shape (sizes of 1 and 2, so that it
  // stays small) and an output that also reads two of the sizes as values.
  const std::vector<std::string>& names = usable_names();
  const char* indices[] = {"qq_a", "qq_b", "qq_c", "qq_d", "qq_e", "qq_f"};
  std::string params, outputs, body;
  ir::SizeBindings sizes;
  for (size_t k = 0; k + 5 < names.size(); k += 6) {
    const std::string n = std::to_string(k);
    std::string shape, at;
    for (size_t d = 0; d < 6; ++d) {
      shape += (d ? ", " : "") + names[k + d];
      at += std::string(d ? ", " : "") + indices[d];
      sizes[names[k + d]] = int64_t(1 + (k + d) % 2);
    }
    params += std::string(params.empty() ? "" : ", ") + "float(" + shape + ") qq_x" + n;
    outputs += (outputs.empty() ? "" : ", ") + std::string("qq_y") + n;
    body += "  qq_y" + n + "(" + at + ") = qq_x" + n + "(" + at + ") * float(" + names[k] +
            ") - float(" + names[k + 5] + ")\n";
  }
  expect_runs_like_the_interpreter(
      "def qq_sizes(" + params + ") -> (" + outputs + ") {\n" + body + "}\n", "qq_sizes", sizes);
}

TEST(WorldNames, AsIndicesAndLoopVariables) {
  // Per two names i, j: i an out index, j a summed one, both read as values;
  // a loop over some of them.
  const std::vector<std::string>& names = usable_names();
  std::string outputs, body;
  for (size_t k = 0; k + 1 < names.size(); k += 2) {
    const std::string &i = names[k], &j = names[k + 1], n = std::to_string(k);
    outputs += (outputs.empty() ? "" : ", ") + std::string("qq_y") + n;
    body += "  qq_y" + n + "(" + i + ") +=! qq_x(" + i + ", " + j + ") * float(" + i + " - " + j +
            ")\n";
  }
  std::string loops;
  for (size_t k = 0; k < 40; ++k) {
    const std::string n = std::to_string(k);
    loops += "  qq_s" + n + "(qq_i) = qq_x(qq_i, 0)\n  for " + names[k] + " in 0:2 {\n    qq_s" +
             n + "(qq_i) = qq_s" + n + "(qq_i) * 0.5 + float(" + names[k] + ")\n  }\n";
    outputs += ", qq_s" + n;
  }
  expect_runs_like_the_interpreter(
      "def qq_indices(float(qq_N, qq_M) qq_x) -> (" + outputs + ") {\n" + body + loops + "}\n",
      "qq_indices", {{"qq_N", 3}, {"qq_M", 4}});
}

TEST(WorldNames, AsFunctionsTheSymbolsStayApart) {
  // Every name's symbol is an identifier in Tenet's namespace, with no "__"
  // (the separator of the entry points' suffixes), and distinct names give
  // distinct symbols, also with the suffixes.
  std::set<std::string> symbols;
  std::set<std::string> names(usable_names().begin(), usable_names().end());
  names.insert({"_x", "x_", "__", "a__b", "a_ub", "u", "uu", "u_", "a.b", "a-b"});
  for (const std::string& name : names) {
    ir::Function fn;
    fn.name = name;
    const std::string symbol = c_symbol(fn);
    EXPECT_TRUE(symbol.rfind("tenet_", 0) == 0 || symbol.rfind("tenetx_", 0) == 0) << symbol;
    EXPECT_EQ(symbol.find("__"), std::string::npos) << symbol;
    EXPECT_EQ(detail::sanitize_identifier(symbol), symbol);
    for (const char* suffix : {"", "__packed", "__signature", "__workspace_bytes"})
      EXPECT_TRUE(symbols.insert(symbol + suffix).second) << name << " collides: " << symbol;
  }
}

TEST(WorldNames, AsFunctions) {
  // Each function its own small library (one unit of many functions would
  // take long to compile): the names of OpenMP's runtime, which the
  // generated code itself calls, the examples of issue 13 and a sample of
  // the rest.
  const std::vector<std::string>& names = usable_names();
  std::vector<std::string> chosen = {
      "omp_get_thread_num", "GOMP_parallel", "INT64_MAX", "M_PI",    "HUGE_VAL", "fmaxf",
      "aligned_alloc",      "errno",         "linux",     "runtime", "gemm",     "memcpy"};
  for (size_t k = 0; k < names.size(); k += 97) chosen.push_back(names[k]);
  std::string source;
  std::set<std::string> seen;
  for (const std::string& name : chosen)
    if (seen.insert(name).second)
      source +=
          "def " + name + "(float(qq_N) qq_x) -> (qq_y) { qq_y(qq_i) = qq_x(qq_i) * 2 + 1 }\n";
  ir::Module m = compile_tn(source);
  std::vector<std::string> all;
  for (const auto& f : m.functions) all.push_back(f.name);
  std::vector<jit::CompiledFunction> compiled =
      driver::jit_compile_together(m, all, quick_options());
  for (const jit::CompiledFunction& f : compiled) expect_matches_interpreter(f, {{"qq_N", 5}}, 2);
}

TEST(WorldNames, OmpGetThreadNumRunsAParallelLoop) {
  // The entry point named like the function OpenMP's outlined loop calls:
  // with -Bsymbolic, that call bound to the entry itself, which recursed
  // until the stack overflowed. The real flags, and enough work to go
  // parallel.
  for (const char* name : {"omp_get_thread_num", "GOMP_parallel", "omp_get_num_threads"}) {
    ir::Module m = compile_tn(std::string("def ") + name +
                              "(float(N, K) x) -> (y) {\n  y(i) +=! x(i, k) * x(i, k)\n}\n");
    jit::CompiledFunction f = driver::jit_compile(m, name, test_jit_options());
    expect_matches_interpreter(f, {{"N", 300}, {"K", 200}}, 5);
  }
}

TEST(WorldNames, NoMacroIsInTenetsNamespace) {
  // The protection rests on this: no macro that the headers of generated
  // code define starts with the prefixes of Tenet's identifiers or is one of
  // the names generated code declares for itself. Checked on this system's
  // compiler and headers, whatever the list holds.
  const std::string dir = fresh_folder("names_macros");
  std::ofstream(dir + "/all.cpp") << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n"
                                     "#include <limits>\n#include <new>\n#include <stdint.h>\n"
                                     "#include <stdbool.h>\n#include \"tenet_gemm.h\"\n"
                                     "#include \"tenet_runtime.h\"\n";
  const tenet::testing::CommandResult r = tenet::testing::run_command(
      jit::default_jit_compiler() +
      " -std=gnu++17 -fopenmp -DTENET_GEMM_CBLAS -DTENET_GEMM_DNNL -dM -E -I" + jit::runtime_dir() +
      " " + dir + "/all.cpp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> own = {"acc",     "offsets", "tenants", "workspace", "sizes",
                                     "buffers", "i",       "gemm_m",  "gemm_n",    "gemm_k",
                                     "std",     "tenet",   "int64_t", "nullptr"};
  std::istringstream lines(r.out);
  int macros = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string define, name;
    words >> define >> name;
    name = name.substr(0, name.find('('));
    ++macros;
    EXPECT_NE(name.rfind(detail::kNamePrefix, 0), 0u) << name;
    EXPECT_NE(name.rfind("tenet", 0), 0u) << name;
    EXPECT_FALSE(own.count(name)) << name;
  }
  EXPECT_GT(macros, 100);
}

}  // namespace
}  // namespace tenet::codegen::testing
