// The CPU target (target.h): x86/OpenMP loop schedules, C++17 printing and
// the host JIT.
#include "codegen/cpp.h"
#include "driver/target.h"
#include "jit/jit.h"
#include "passes/schedule.h"
#include "support/error.h"

namespace tenet::driver {

namespace {

void generate_cpp(Compilation& c, const Request& r) {
  c.cpp = codegen::emit_cpp(lowered_functions(c), r.cpp);
}

Target make_cpp_target() {
  Target t;
  t.name = "cpp";
  t.summary = "C++17 with OpenMP, built and loaded by the host JIT (jit/jit.h)";
  t.language = "C++";
  t.passes = {
      {"schedule", "choose loop orders and shared loop nests (annotations for lowering)",
       passes::schedule},
  };
  t.lowering = [](const Request& r) {
    LoweringOptions o;
    o.pack_budget_bytes = r.cpp.pack_budget_bytes;
    o.loops.parallel = r.cpp.openmp;
    o.loops.parallel_min_work = r.cpp.parallel_min_work;
    o.loops.index_checks = r.cpp.index_checks;
    return o;
  };
  t.tail = {
      {"cpp", "lowered IR -> one C++17 unit, header and source (codegen/cpp.h)", Form::Code,
       generate_cpp},
  };
  t.print = [](const Compilation& c) { return print_cpp(*c.cpp); };
  t.load_request = [](Request& r, const jit::JitOptions& options) {
    r.cpp = options.cpp;
    r.cpp.profile = r.cpp.profile || jit::profile_requested();
  };
  t.load = [](const Compilation& c, const jit::JitOptions& options) {
    TENET_ASSERT(c.cpp, "the cpp target loads a compilation that ran its cpp stage");
    return jit::jit_compile_unit(*c.cpp, c.optimised, c.function_names(), options);
  };
  return t;
}

}  // namespace

const Target& cpp_target() {
  static const Target target = make_cpp_target();
  return target;
}

}  // namespace tenet::driver
