// The table of contents of the compiler (driver.h): every stage from source
// text to the target's code, in order, and the loop that runs them.
#include "driver/driver.h"

#include "lower/loops.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "ad/retype.h"
#include "ad/split.h"
#include "driver/front_end.h"
#include "driver/target.h"
#include "ir/printer.h"
#include "ir/specialise.h"
#include "ir/verify.h"
#include "lang/check.h"
#include "lang/parser.h"
#include "lower/lowered.h"
#include "passes/pipeline.h"
#include "support/error.h"

namespace tenet::driver {

namespace {

// The stages, defined below the table.
void parse(Compilation& c, const Request& r);
void check(Compilation& c, const Request& r);
void retype(Compilation& c, const Request& r);
void differentiate(Compilation& c, const Request& r);
void split_halves(Compilation& c, const Request& r);
Stage optimisation(const passes::Pass& pass);
void find_liveness(Compilation& c, const Request& r);
void lower_gemms(Compilation& c, const Request& r);
void lower_scatters(Compilation& c, const Request& r);
void lower_convs(Compilation& c, const Request& r);
void plan_memory(Compilation& c, const Request& r);
void lower_loops(Compilation& c, const Request& r);

}  // namespace

// ---- the table of contents --------------------------------------------------

namespace {

std::vector<Stage> make_table(const Target& target) {
  std::vector<Stage> t = {
      {stage::kParse, "source text -> AST (lang/parser.h)", Form::Ast, parse},
      {stage::kCheck, "AST -> IR: one function per def, calls inlined (lang/check.h)",
       Form::Checked, check},
      {stage::kRetype, "the requested functions, floats in the requested type (ad/retype.h)",
       Form::Derived, retype},
      {stage::kAd, "the requested gradients, reverse mode (ad/grad.h)", Form::Derived,
       differentiate},
  };
  // The optimisation passes, in passes/pipeline.h's order (passes/ owns
  // them), then the target's own (the CPU target's schedule).
  for (const passes::Pass& p : passes::pipeline()) t.push_back(optimisation(p));
  t.push_back({stage::kSplit,
               "a vector-Jacobian program's requested half: the forward returning what the "
               "backward reads, or the backward taking it (ad/split.h)",
               Form::Optimised, split_halves});
  for (const passes::Pass& p : target.passes) t.push_back(optimisation(p));
  // Lowering: shared by every target, typed (lower/).
  t.push_back({"liveness",
               "outputs updated in place made safe (lower/updates.h), the statements that "
               "reach an output (lower/liveness.h)",
               Form::Lowered, find_liveness});
  t.push_back({"lower_gemm", "GEMM plans -> packing, chunks and col2im (lower/gemm.h)",
               Form::Lowered, lower_gemms});
  t.push_back({"lower_scatter", "sums over computed-index masks -> scatters (lower/scatter.h)",
               Form::Lowered, lower_scatters});
  t.push_back({"lower_conv", "convolution plans -> library calls (lower/conv.h)", Form::Lowered,
               lower_convs});
  t.push_back({"plan_memory", "workspace slots, lifetimes, loop carries (lower/memory_plan.h)",
               Form::Lowered, plan_memory});
  t.push_back({"lower_loops", "lowered IR -> the loop tree every backend prints (lower/loops.h)",
               Form::Loops, lower_loops});
  // The target's tail: it prints its code (the CPU target's cpp).
  t.insert(t.end(), target.tail.begin(), target.tail.end());
  return t;
}

}  // namespace

const std::vector<Stage>& stages(const std::string& target) {
  static const std::map<std::string, std::vector<Stage>> tables = [] {
    std::map<std::string, std::vector<Stage>> out;
    for (const Target* t : targets()) out.emplace(t->name, make_table(*t));
    return out;
  }();
  return tables.at(find_target(target).name);
}

namespace {

// ---- the stages ------------------------------------------------------------

void parse(Compilation& c, const Request& r) {
  c.file = std::make_shared<const SourceFile>(r.text ? SourceFile(r.path, *r.text)
                                                     : SourceFile::read(r.path));
  c.ast = std::make_shared<const ast::File>(lang::parse(*c.file));
}

void check(Compilation& c, const Request&) {
  lang::Checked checked = lang::check(*c.ast, *c.file);
  c.checked = std::make_shared<const ir::Module>(std::move(checked.module));
  c.warnings.insert(c.warnings.end(), checked.warnings.begin(), checked.warnings.end());
}

const ir::Function& find_function(const Compilation& c, const std::string& name) {
  if (const ir::Function* f = c.checked->find(name)) return *f;
  std::string names;
  for (const ir::Function& f : c.checked->functions) names += (names.empty() ? "" : ", ") + f.name;
  throw CompileError(c.file->path() + ": error: no function named '" + name +
                     "' (functions: " + names + ")");
}

std::vector<FunctionRequest> requested(const Compilation& c, const Request& r) {
  if (!r.functions.empty()) return r.functions;
  std::vector<FunctionRequest> all;
  for (const ir::Function& f : c.checked->functions) all.push_back({f.name, std::nullopt});
  return all;
}

/// The requested functions, each specialised to the static sizes and in the
/// requested float type. A gradient
/// request is checked here, on the function as declared, so that its errors
/// come first and point into the source.
void retype(Compilation& c, const Request& r) {
  c.derived.functions.clear();
  for (const FunctionRequest& fr : requested(c, r)) {
    const ir::Function& fn = find_function(c, fr.name);
    if (fr.grad) {
      ad::resolve_wrt(fn, *fr.grad, c.file.get());
      ad::resolve_outputs(fn, *fr.grad, c.file.get());
    }
    ir::Function sized = ir::specialise_sizes(fn, r.static_sizes);
    c.derived.functions.push_back(r.float_type ? ad::with_float_type(sized, *r.float_type)
                                               : std::move(sized));
  }
}

/// The gradients; the optimisation passes then work on a copy of the result.
void differentiate(Compilation& c, const Request& r) {
  std::vector<FunctionRequest> functions = requested(c, r);
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].grad)
      c.derived.functions[i] =
          ad::differentiate(c.derived.functions[i], *functions[i].grad, c.file.get());
  for (size_t i = 0; i < functions.size(); ++i)
    if (!functions[i].as.empty()) c.derived.functions[i].name = functions[i].as;
  c.optimised.functions.clear();
  for (const ir::Function& f : c.derived.functions) c.optimised.functions.push_back(f.clone());
}

/// Each function requested as one half of a vector-Jacobian program replaced
/// by that half (ad/split.h), cut after the shared passes.
void split_halves(Compilation& c, const Request& r) {
  std::vector<FunctionRequest> functions = requested(c, r);
  for (size_t i = 0; i < functions.size(); ++i) {
    if (!functions[i].grad || functions[i].grad->half == ad::VjpHalf::Both) continue;
    const ir::Function& declared = find_function(c, functions[i].name);
    ad::SplitVjp halves =
        ad::split_vjp(c.optimised.functions[i], declared.inputs.size(), declared.outputs.size());
    c.optimised.functions[i] = functions[i].grad->half == ad::VjpHalf::Forward
                                   ? std::move(halves.forward)
                                   : std::move(halves.backward);
  }
}

/// An optimisation pass (passes/pipeline.h, or the target's), on every function.
Stage optimisation(const passes::Pass& pass) {
  auto run = [pass](Compilation& c, const Request& r) {
    if (r.skip_passes.count(pass.name)) return;
    for (ir::Function& f : c.optimised.functions) pass.run(f);
  };
  return {pass.name, pass.summary, Form::Optimised, run};
}

/// The lowered forms point into a copy of the optimised module that they
/// share with it, so that a Compilation can be copied.
void find_liveness(Compilation& c, const Request&) {
  auto lowering = std::make_shared<Compilation::Lowering>();
  for (const ir::Function& f : c.optimised.functions) {
    lowering->module.functions.push_back(f.clone());
    lower::separate_updates(lowering->module.functions.back());
  }
  for (const ir::Function& f : lowering->module.functions)
    lowering->functions.push_back(lower::find_liveness(f));
  c.lowered = std::move(lowering);
}

void lower_gemms(Compilation& c, const Request& r) {
  const LoweringOptions options = find_target(r.target).lowering(r);
  for (lower::LoweredFunction& f : c.lowered->functions)
    lower::lower_gemms(f, options.pack_budget_bytes);
}

void lower_convs(Compilation& c, const Request&) {
  for (lower::LoweredFunction& f : c.lowered->functions) lower::lower_convs(f);
}

void lower_scatters(Compilation& c, const Request&) {
  for (lower::LoweredFunction& f : c.lowered->functions) lower::lower_scatters(f);
}

void plan_memory(Compilation& c, const Request&) {
  for (lower::LoweredFunction& f : c.lowered->functions) lower::plan_memory(f);
}

void lower_loops(Compilation& c, const Request& r) {
  const LoweringOptions options = find_target(r.target).lowering(r);
  for (lower::LoweredFunction& f : c.lowered->functions)
    f.loops = lower::lower_loops(f, options.loops);
}

// ---- running them ----------------------------------------------------------

bool asks_for(const std::set<std::string>& set, const Stage& s) {
  return set.count("all") || set.count(s.name);
}

void dump(const Compilation& c, const Stage& s, std::ostream& out) {
  const Target& target = find_target(c.target);
  switch (s.form) {
    case Form::Ast:
      out << "// ----- source after " << s.name << " -----\n" << ast::print(*c.ast);
      break;
    case Form::Lowered:
      out << "// ----- lowered after " << s.name << " -----\n";
      for (const lower::LoweredFunction& f : c.lowered->functions) out << lower::print(f);
      break;
    case Form::Loops:
      out << "// ----- loops after " << s.name << " -----\n";
      for (const lower::LoweredFunction& f : c.lowered->functions)
        out << lower::print(f.loops, *f.function);
      break;
    case Form::Code:
      out << "// ----- " << target.language << " after " << s.name << " -----\n" << target.print(c);
      break;
    default:
      out << "// ----- IR after " << s.name << " -----\n" << ir::print(c.ir());
  }
}

/// The request's dump set with TENET_DUMP_AFTER ("a,b,c") merged in; every
/// name checked.
std::set<std::string> dump_set(const Request& r) {
  std::set<std::string> out = r.dump_after;
  if (const char* env = std::getenv("TENET_DUMP_AFTER")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.insert(item);
  }
  for (const std::string& name : out)
    if (name != "all") find_stage(name, r.target);
  return out;
}

}  // namespace

std::string stage_names(const std::string& target) {
  std::string out;
  for (const Stage& s : stages(target)) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

const Stage& find_stage(const std::string& name, const std::string& target) {
  for (const Stage& s : stages(target))
    if (name == s.name) return s;
  throw UsageError("unknown stage '" + name + "' (stages: " + stage_names(target) + ")");
}

namespace {

size_t index_of(const std::string& name, const std::string& target) {
  return size_t(&find_stage(name, target) - stages(target).data());
}

/// The last optimisation stage of `target`'s table: what lowering starts from.
const char* last_optimisation(const std::string& target) {
  const char* last = nullptr;
  for (const Stage& s : stages(target))
    if (s.form == Form::Optimised) last = s.name;
  return last;
}

bool is_code_stage(const Stage& s) {
  return s.form == Form::Lowered || s.form == Form::Loops || s.form == Form::Code;
}

/// Whether the request asks for code or for a stage that lowers or prints.
bool wants_code(const Request& r, const std::set<std::string>& dump_after) {
  if (r.emit_code || dump_after.count("all")) return true;
  if (!r.stop_after.empty() && is_code_stage(find_stage(r.stop_after, r.target))) return true;
  for (const std::string& name : dump_after)
    if (is_code_stage(find_stage(name, r.target))) return true;
  return false;
}

}  // namespace

const ir::Module& Compilation::ir() const {
  static const ir::Module empty;
  if (stage.empty()) return empty;
  switch (find_stage(stage, target).form) {
    case Form::Ast:
      return empty;
    case Form::Checked:
      return *checked;
    case Form::Derived:
      return derived;
    default:
      return optimised;
  }
}

std::string Compilation::render_warnings() const {
  return file ? render_all(*file, warnings) : "";
}

std::vector<std::string> Compilation::function_names() const {
  std::vector<std::string> out;
  for (const ir::Function& f : derived.functions) out.push_back(f.name);
  return out;
}

Compilation compile(const Request& request) {
  return compile(request, Compilation{});
}

Compilation compile(const Request& request, const Compilation& from) {
  const std::vector<Stage>& table = stages(request.target);
  const std::set<std::string> dump_after = dump_set(request);
  for (const std::string& name : request.skip_passes)
    if (find_stage(name, request.target).form != Form::Optimised || name == stage::kSplit)
      throw UsageError("'" + name + "' is not an optimisation pass");
  std::ostream& out = request.dump_to ? *request.dump_to : std::cerr;

  Compilation c;
  c.file = from.file;
  c.ast = from.ast;
  c.checked = from.checked;
  for (const ir::Function& f : from.derived.functions) c.derived.functions.push_back(f.clone());
  for (const ir::Function& f : from.optimised.functions) c.optimised.functions.push_back(f.clone());
  c.lowered = from.lowered;
  c.cpp = from.cpp;
  c.target = request.target;
  c.stage = from.stage;
  TENET_ASSERT(c.stage.empty() || from.target == request.target ||
                   find_stage(c.stage, request.target).form < Form::Optimised,
               "continuing a compilation for target '" << from.target << "' after '" << c.stage
                                                       << "' for '" << request.target << "'");

  // The lowered forms are shared with `from`: continuing inside the lowering
  // lowers again rather than change them.
  if (!c.stage.empty() && (find_stage(c.stage, c.target).form == Form::Lowered ||
                           find_stage(c.stage, c.target).form == Form::Loops)) {
    c.stage = last_optimisation(c.target);
    c.lowered.reset();
  }
  // Continue after from.stage, up to stop_after.
  size_t next = c.stage.empty() ? 0 : index_of(c.stage, c.target) + 1;
  const size_t end =
      request.stop_after.empty() ? table.size() : index_of(request.stop_after, c.target) + 1;
  for (; next < end; ++next) {
    const Stage& s = table[next];
    // Lowering and the target's tail run only for callers that want code.
    if (is_code_stage(s) && !wants_code(request, dump_after)) break;
    s.run(c, request);
    c.stage = s.name;
    if (s.form != Form::Ast && !is_code_stage(s))
      for (const ir::Function& f : c.ir().functions)
        ir::verify(f, std::string("stage '") + s.name + "'");
    if (asks_for(dump_after, s)) dump(c, s, out);
  }
  return c;
}

std::vector<jit::CompiledFunction> load(const Request& request, const Compilation& c,
                                        const jit::JitOptions& options) {
  const Target& target = find_target(request.target);
  if (c.target == request.target && c.stage == stages(request.target).back().name)
    return target.load(c, options);
  TENET_ASSERT(c.stage == last_optimisation(request.target) ||
                   is_code_stage(find_stage(c.stage, request.target)),
               "load: compiled only up to '" << c.stage << "'");
  Request r = request;
  r.emit_code = true;
  r.stop_after.clear();
  target.load_request(r, options);
  return target.load(compile(r, c), options);
}

namespace {

/// A compilation of hand-made IR, as if the optimisation passes had made it.
Compilation from_ir(const ir::Module& m, const std::vector<std::string>& functions,
                    const std::string& target = kDefaultTarget) {
  Compilation c;
  c.target = target;
  c.stage = last_optimisation(c.target);
  std::vector<const ir::Function*> chosen;
  for (const ir::Function& f : m.functions)
    if (functions.empty()) chosen.push_back(&f);
  for (const std::string& name : functions) {
    chosen.push_back(m.find(name));
    TENET_ASSERT(chosen.back() != nullptr, "no function named '" << name << "' in the module");
  }
  TENET_ASSERT(!chosen.empty(), "no functions to compile");
  for (const ir::Function* f : chosen) {
    c.derived.functions.push_back(f->clone());
    c.optimised.functions.push_back(f->clone());
  }
  return c;
}

}  // namespace

void optimise(ir::Module& m, const std::string& target) {
  std::vector<std::string> all;
  for (const Stage& s : stages(target))
    if (s.form == Form::Optimised && s.name != std::string(stage::kSplit)) all.push_back(s.name);
  run_passes(m, all, target);
}

codegen::CppUnit emit_cpp(const ir::Module& m, const std::vector<std::string>& functions,
                          const codegen::CppOptions& options) {
  Request r;
  r.emit_code = true;
  r.cpp = options;
  return *compile(r, from_ir(m, functions)).cpp;
}

codegen::CppUnit emit_code(const ir::Module& m, const std::vector<std::string>& functions,
                           const std::string& target, const codegen::CppOptions& options) {
  Request r;
  r.target = target;
  r.emit_code = true;
  r.cpp = options;
  const Compilation c = compile(r, from_ir(m, functions, target));
  TENET_ASSERT(c.cpp, "the target " << target << " printed no code");
  return *c.cpp;
}

std::vector<jit::CompiledFunction> jit_compile_together(const ir::Module& m,
                                                        const std::vector<std::string>& functions,
                                                        const jit::JitOptions& options,
                                                        const std::string& target) {
  TENET_ASSERT(!functions.empty(), "jit_compile_together: no function named");
  Request r;
  r.target = target;
  return load(r, from_ir(m, functions, target), options);
}

jit::CompiledFunction jit_compile(const ir::Module& m, const std::string& function,
                                  const jit::JitOptions& options) {
  return jit_compile_together(m, {function}, options).front();
}

namespace {

/// The optimisation passes of `target`'s table, in order.
std::vector<const passes::Pass*> passes_of(const std::string& target) {
  std::vector<const passes::Pass*> out;
  for (const passes::Pass& p : passes::pipeline()) out.push_back(&p);
  for (const passes::Pass& p : find_target(target).passes) out.push_back(&p);
  return out;
}

}  // namespace

std::string pass_names(const std::string& target) {
  std::string out;
  for (const passes::Pass* p : passes_of(target))
    out += (out.empty() ? "" : ", ") + std::string(p->name);
  return out;
}

void run_passes(ir::Module& m, const std::vector<std::string>& names, const std::string& target) {
  const std::vector<const passes::Pass*> known = passes_of(target);
  std::vector<const passes::Pass*> chosen;
  for (const std::string& name : names) {
    chosen.push_back(nullptr);
    for (const passes::Pass* p : known)
      if (name == p->name) chosen.back() = p;
    if (!chosen.back())
      throw UsageError("unknown pass '" + name + "' (passes: " + pass_names(target) + ")");
  }
  for (const passes::Pass* p : chosen)
    for (ir::Function& f : m.functions) {
      p->run(f);
      ir::verify(f, std::string("pass '") + p->name + "'");
    }
}

std::string print_cpp(const codegen::CppUnit& unit) {
  std::string text = "// ----- " + unit.header_name + " -----\n" + unit.header + "// ----- " +
                     unit.source_name + " -----\n" + unit.source;
  if (!unit.kernels_name.empty())
    text += "// ----- " + unit.kernels_name + " -----\n" + unit.kernels;
  return text;
}

}  // namespace tenet::driver
