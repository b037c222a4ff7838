// The checker's driver. The language rules it enforces, in one place (the
// files that implement each are named in check_internal.h):
//
//  1. Names. `T(i, j) op= e` declares its index variables: the left-side names,
//     every name inside the index expressions of reads on the right that is
//     not a size parameter or loop variable, and where-clause names. A bare
//     name in an expression is, in this order: an index variable (int64), a
//     loop variable (int64), a tensor in scope (must have rank 0), a size
//     parameter (int64), else "unknown name". Index expressions are affine
//     (sums of integer multiples of indices and loop variables plus a size
//     expression: `2*y + ky`, `N - 1 - i`) or computed: any other integer
//     expression (`I(i, k)`, `i % 4`), checked at run time. Size parameters are the
//     names used as dimensions of parameters and declared outputs, plus names
//     that appear only in where clauses (given at run time).
//  2. SSA. Assigning to a tensor already in scope (TC's redefinition) defines
//     a new SSA version ("y.1") with the same rank, shape and element type;
//     reads see the latest version before them in program order, and an
//     output is its last version. `T += e` adds onto the existing T (a Sum
//     with init = the previous version, reducing the right-only indices;
//     `max=`, `min=`, `*=` likewise with Max, Min, Prod). In
//     a loop body, assigning (or `+=`) a tensor defined before the loop makes
//     it loop-carried; a body definition mentioned after the loop is a
//     live-out (its last iteration's value) and is in scope after the loop.
//     Tensors may not be named like size parameters, loop variables,
//     functions or builtins; indices not like tensors in scope; inputs are
//     never assigned.
//  3. Outputs must be defined (or be inputs); declared output types and
//     shapes must match what is computed.
//  4. Ranks: every read has one index per dimension; an updated tensor keeps
//     its rank, element type and shape.
//  5. Types: a statement's type is its right side's. Number literals take the
//     other operand's type; a right side of literals only takes the target's
//     type (existing tensor or declared output), else float32. An integer
//     meeting a float is converted to the float's type (TC's promotion);
//     float32 and float64 do not mix (a cast is suggested); integers of
//     different widths promote to the wider (int32 label vs int64 index), a
//     signed and an unsigned one to the signed type that holds both (uint32
//     and int32 give int64), or uint64 when none does (C++'s rule).
//     abs/fabs/fmax/fmin/max/min take any numbers, the other math builtins
//     need floats, '%' integers. Comparisons give bool; && || ! and the
//     condition of select or '?:' need bool. A bool meeting a number counts
//     as 0/1 of the number's type (two bools in arithmetic: int32, as in C);
//     a bool right side makes a bool tensor, which is never reduced or
//     accumulated onto. float16 tensors are read as float32 and everything
//     is computed in float32; a float16 target rounds what it stores (once,
//     after any reduction), and a right side that is a cast `float16(e)` makes
//     a float16 tensor.
//  6. Ranges (Tensor Comprehensions' rule, ranges.cpp): where clauses, then
//     target dimensions (left indices of an updated tensor or declared
//     output), then plain uses x(.., i, ..) (the min of their sizes; all equal
//     to a target dimension), then affine
//     reads solved for their one unknown index (the largest hi keeping every
//     read in bounds; several candidates: their min; lo is 0 unless the read
//     is below 0 there for every size, then the least lo in bounds, outside
//     select branches). Unsolvable indices are
//     errors. Left indices start at 0 (the error's note gives the rewrite);
//     empty ranges and unguarded reads out of bounds for every size with
//     which the statement runs (size_proof.h) are errors. Guarded reads
//     x?(..) read 0 outside and neither constrain nor get checked. Reads in a
//     branch of select or '?:' are conditional: they constrain only indices
//     no other read does, and are errors only when out of bounds wherever
//     they are read (their condition may exclude the positions outside).
//  7. Reductions reduce exactly the right-only indices (a reduction with none
//     starts from its identity and combines the value once: TC's `+=!` with
//     no reduced index); an `=` with some is an error, and so is an index
//     twice on the left.
//  8. Calls are inlined by lowering the callee's body again with its size
//     parameters bound to the argument shapes (inline.cpp); the callee is
//     first checked on its own, so its errors are reported once. Recursion,
//     arity, rank, type and size mismatches and unbound callee sizes are
//     errors.
//     A reshape `y = reshape(x, sizes...)` (reshape.cpp) takes size
//     expressions; the element count must be provably the same for every
//     size (ir/reshape.h), else an error naming both shapes and counts.
//  9. Loops have constant bounds lo:hi (trip hi - lo > 0); the loop variable
//     is an int64 value (and may appear in index expressions).
// 10. Scalars are rank-0 tensors: `loss +=! ...`, `loss() +=! ...`, `float lr`.
// 11. Each Compute carries its statement's text and span; values carry the
//     span that defined them.
// 12. Errors are collected (checking goes on with the next statement and the
//     next function) and thrown together, sorted by position, as one
//     CompileError. A program without errors comes with its warnings and
//     notes, sorted the same way: an ignored reduction hint `<=> ...`, an
//     index that takes the smaller range of its uses (rule 6). Inlined
//     bodies report none (their function did, once, when checked alone).
#include "lang/check.h"

#include <algorithm>

#include "lang/check_internal.h"
#include "lang/parser.h"
#include "support/error.h"

namespace tenet::lang {

namespace detail {

ModuleChecker::ModuleChecker(const ast::File& program, const SourceFile& file)
    : program_(program), diags_(file) {}

const ast::Function* ModuleChecker::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.fn;
}

bool ModuleChecker::spend_inline_budget(int64_t n) {
  if (n > inline_budget_) return false;
  inline_budget_ -= n;
  return true;
}

const ModuleChecker::Entry* ModuleChecker::checked(const std::string& name, const ast::Ident& call,
                                                   Diagnostics& sink) {
  auto it = entries_.find(name);
  if (it == entries_.end()) return nullptr;
  Entry& e = it->second;
  if (e.state == Entry::State::Checking) {
    std::string chain;
    auto from = std::find(stack_.begin(), stack_.end(), name);
    for (auto s = from; s != stack_.end(); ++s) chain += *s + " -> ";
    Diagnostic& d = sink.error(call.span, "recursive call of " + quote(name) +
                                              ": calls are inlined, so a function cannot call "
                                              "itself, directly or through others");
    d.notes.push_back({e.fn->name.span, "the calls go " + chain + name});
    return nullptr;
  }
  if (e.state == Entry::State::Unchecked) {
    if (stack_.size() >= size_t(kMaxCallDepth)) {
      sink.error(call.span,
                 "calls nest too deeply (more than " + std::to_string(kMaxCallDepth) + " levels)");
      return nullptr;
    }
    check_function(*e.fn);
  }
  return e.state == Entry::State::Ok ? &e : nullptr;
}

namespace {

/// Checks a function's signature and binds it for lowering: its size
/// parameters, its parameters and the outputs its caller supplies.
struct Signature {
  const ModuleChecker& module;
  const ast::Function& fn;
  FunctionEnv& env;
  ir::FunctionBuilder& fb;
  Diagnostics& diags;
  bool ok = true;  // no error reported

  Diagnostic& fail(Span span, const std::string& message) {
    ok = false;
    return diags.error(span, message);
  }

  /// Adds a size parameter named at `span`.
  void add_size(const std::string& name, Span span) {
    env.sizes[name] = ir::SizeExpr::sym(name);
    env.size_decl[name] = span;
    fb.size_param(name);
  }

  /// The named dimensions of `dims` become size parameters; constant ones are checked.
  void declare_dims(const std::vector<ast::Dim>& dims) {
    for (const ast::Dim& d : dims) {
      if (d.name.empty()) {
        if (d.value < 1 || d.value > kMaxConstant)
          fail(d.span, "a dimension must be between 1 and " + std::to_string(kMaxConstant) +
                           ", not " + std::to_string(d.value));
      } else if (!env.sizes.count(d.name)) {
        add_size(d.name, d.span);
      }
    }
  }

  /// Size parameters: the named dimensions of parameters and declared outputs,
  /// then the names that appear only in where bounds (sizes given at run time).
  void declare_sizes() {
    for (const ast::Param& p : fn.params) declare_dims(p.dims);
    for (const ast::Output& o : fn.outputs) declare_dims(o.dims);
    // Where sizes are found up front so that every statement sees them as
    // sizes, not just later ones.
    std::set<std::string> not_sizes;
    for (const ast::Param& p : fn.params) not_sizes.insert(p.name.name);
    std::vector<std::string> assigned;
    collect_assigned(fn.body, assigned);
    not_sizes.insert(assigned.begin(), assigned.end());
    collect_loop_vars(fn.body, not_sizes);
    for (const auto& [name, value] : env.sizes) not_sizes.insert(name);
    std::vector<ast::Ident> where_sizes;
    collect_where_sizes(fn.body, not_sizes, where_sizes);
    for (const ast::Ident& id : where_sizes) {
      if (module.find(id.name)) continue;  // a function's name (looked up, not copied per function)
      add_size(id.name, id.span);
    }
  }

  /// Whether a tensor may be named `name`: not defined before (at `previous`),
  /// not a size parameter, a function or a builtin.
  bool tensor_name_ok(const ast::Ident& name, Span previous, const char* what) {
    if (previous.valid) {
      Diagnostic& d =
          fail(name.span, std::string("redefinition of ") + what + " " + quote(name.name));
      d.notes.push_back({previous, "previous definition is here"});
      return false;
    }
    std::string clash, note_text;
    Span note;
    if (env.sizes.count(name.name)) {
      clash = "a size parameter";
      note = env.size_decl[name.name];
      note_text = quote(name.name) + " is a size parameter here";
    } else if (const ast::Function* f = module.find(name.name)) {
      clash = "a function";
      note = f->name.span;
      note_text = "the function is defined here";
    } else if (ast::is_builtin(name.name)) {
      clash = "a builtin function";
    }
    if (clash.empty()) return true;
    Diagnostic& d = fail(name.span, "redefinition of " + quote(name.name) + ": " + what +
                                        " cannot have the name of " + clash);
    if (note.valid) d.notes.push_back({note, note_text});
    return false;
  }

  /// Binds each parameter to an input of the IR; returns where each is declared.
  std::map<std::string, Span> bind_params(Lowerer& lowerer) {
    std::map<std::string, Span> seen;
    for (const ast::Param& p : fn.params) {
      Span span = Span::join(p.type_span, p.name.span);
      if (!tensor_name_ok(p.name, seen.count(p.name.name) ? seen[p.name.name] : Span{},
                          "a parameter"))
        continue;
      seen[p.name.name] = p.name.span;
      if (p.dims.size() > size_t(kMaxIndices)) {
        fail(p.name.span, "parameter " + quote(p.name.name) + " has rank " +
                              std::to_string(p.dims.size()) + ", the limit is " +
                              std::to_string(kMaxIndices));
        lowerer.bind_input(p.name.name, nullptr, span);
        continue;
      }
      lowerer.bind_input(p.name.name, fb.input(p.name.name, p.type, shape_of(p.dims), span), span);
    }
    return seen;
  }

  /// Declared outputs: each named once, each of a rank within the limit.
  void check_outputs() {
    std::map<std::string, Span> outputs_seen;
    for (const ast::Output& o : fn.outputs) {
      if (auto prev = outputs_seen.find(o.name.name); prev != outputs_seen.end()) {
        Diagnostic& d = fail(o.name.span, "redefinition of output " + quote(o.name.name));
        d.notes.push_back({prev->second, "previous definition is here"});
      }
      outputs_seen.emplace(o.name.name, o.name.span);
      if (o.dims.size() > size_t(kMaxIndices))
        fail(o.name.span, "output " + quote(o.name.name) + " has rank " +
                              std::to_string(o.dims.size()) + ", the limit is " +
                              std::to_string(kMaxIndices));
    }
  }

  /// Outputs the caller supplies with their initial value (`y(i) += x(i)` with
  /// y declared but not yet defined) are inputs of the IR too, after the
  /// parameters; the output of the same name updates them (ir::Function).
  void bind_caller_outputs(Lowerer& lowerer, std::map<std::string, Span>& seen) {
    for (const ast::Output& o : fn.outputs) {
      if (seen.count(o.name.name) || !updates_caller_output(fn, o) ||
          o.dims.size() > size_t(kMaxIndices))
        continue;
      seen[o.name.name] = o.name.span;
      lowerer.bind_initial(
          o.name.name, fb.input(o.name.name, o.type, shape_of(o.dims), o.name.span), o.name.span);
    }
  }

  /// The IR shape of declared dimensions.
  static std::vector<ir::SizeExpr> shape_of(const std::vector<ast::Dim>& dims) {
    std::vector<ir::SizeExpr> shape;
    for (const ast::Dim& d : dims)
      shape.push_back(d.name.empty() ? ir::SizeExpr(d.value) : ir::SizeExpr::sym(d.name));
    return shape;
  }
};

}  // namespace

void ModuleChecker::check_function(const ast::Function& fn) {
  Entry& entry = entries_.at(fn.name.name);
  entry.state = Entry::State::Checking;
  stack_.push_back(fn.name.name);

  ir::FunctionBuilder fb(fn.name.name, fn.span);
  FunctionEnv env;
  env.fn = &fn;
  env.fb = &fb;
  env.diags = &diags_;
  env.may_add_sizes = true;
  Signature signature{*this, fn, env, fb, diags_};
  signature.declare_sizes();
  Lowerer lowerer(*this, env);
  std::map<std::string, Span> seen = signature.bind_params(lowerer);
  signature.check_outputs();
  signature.bind_caller_outputs(lowerer, seen);

  std::vector<ir::ValuePtr> outputs = lowerer.run();
  const bool ok = signature.ok && !lowerer.failed();
  if (ok) {
    for (size_t i = 0; i < outputs.size(); ++i)
      fb.output(outputs[i], i < fn.outputs.size() ? fn.outputs[i].name.name : "");
    entry.ir = fb.finish();
    entry.statements = lowerer.statements();
    entry.call_height = lowerer.call_height();
  }
  entry.state = ok ? Entry::State::Ok : Entry::State::Failed;
  stack_.pop_back();
}

Checked ModuleChecker::run() {
  std::vector<const ast::Function*> order;
  for (const ast::Function& fn : program_.functions) {
    auto it = entries_.find(fn.name.name);
    if (it != entries_.end()) {
      Diagnostic& d = diags_.error(fn.name.span, "redefinition of function " + quote(fn.name.name));
      d.notes.push_back({it->second.fn->name.span, "previous definition is here"});
      continue;
    }
    if (ast::is_builtin(fn.name.name)) {
      diags_.error(fn.name.span, "redefinition of " + quote(fn.name.name) +
                                     ": a function cannot have the name of a builtin function");
      continue;
    }
    entries_[fn.name.name].fn = &fn;
    order.push_back(&fn);
  }
  for (const ast::Function* fn : order)
    if (entries_.at(fn->name.name).state == Entry::State::Unchecked) check_function(*fn);

  // Report in source order: callees are checked when first called. Errors
  // alone when there are any; otherwise the warnings and notes.
  const bool failed = diags_.has_errors();
  std::vector<Diagnostic> reported;
  for (const Diagnostic& d : diags_.all())
    if (failed == (d.severity == Severity::Error)) reported.push_back(d);
  std::stable_sort(reported.begin(), reported.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.span.begin < b.span.begin;
  });
  if (failed) throw CompileError(render_all(diags_.file(), reported));
  Checked checked;
  checked.warnings = std::move(reported);
  for (const ast::Function* fn : order) {
    Entry& e = entries_.at(fn->name.name);
    TENET_ASSERT(e.state == Entry::State::Ok,
                 "function " << fn->name.name << " failed without a diagnostic");
    checked.module.functions.push_back(std::move(e.ir));
  }
  return checked;
}

}  // namespace detail

Checked check(const ast::File& program, const SourceFile& file) {
  return detail::ModuleChecker(program, file).run();
}

ir::Module compile_source(const SourceFile& file) {
  return check(parse(file), file).module;
}

}  // namespace tenet::lang
