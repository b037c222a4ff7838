// Reshape statements `y = reshape(x, sizes...)` (docs/language.md,
// "Reshape"): the sizes are size expressions, the element count must stay
// the same for every size (ir/reshape.h proves it), and the statement is
// lowered to the reshape read of x, marked for AD and the code generators.
#include <cctype>

#include "ir/builder.h"
#include "ir/reshape.h"
#include "lang/check_internal.h"

namespace tenet::lang::detail {

namespace {

std::string bracketed(const std::vector<ir::SizeExpr>& shape) {
  std::string text;
  for (const ir::SizeExpr& d : shape) text += (text.empty() ? "" : ", ") + d.str();
  return "[" + text + "]";
}

}  // namespace

void Lowerer::reshape(const ast::Stmt& s) {
  const ast::Ident& result = s.results[0];
  const ast::Ident& arg = s.args[0];
  Target t = resolve_target(result, ast::AssignOp::Assign);
  auto give_up = [&](int rank) { bind_result(result, t, nullptr, rank, false); };
  const int rank = int(s.sizes.size());
  bool ok = t.kind != Target::Invalid;

  const Binding* source = scopes_.find(arg.name);
  if (!source) {
    const bool known = env_.sizes.count(arg.name) || find_loop(arg.name);
    error(arg.span, known ? "reshape takes a tensor, but " + quote(arg.name) + " is " +
                                (find_loop(arg.name) ? "a loop variable" : "a size parameter")
                          : "unknown name " + quote(arg.name));
    return give_up(rank);
  }
  if (!source->ok()) return give_up(rank);

  // The sizes: size expressions over this function's size parameters (no
  // new ones: nothing would give them a value).
  std::vector<ir::SizeExpr> shape;
  const bool may_add_sizes = env_.may_add_sizes;
  env_.may_add_sizes = false;
  for (const ast::ExprPtr& e : s.sizes) {
    std::optional<ir::SizeExpr> size = size_expr(*e, "the sizes of a reshape", nullptr);
    if (size) shape.push_back(*size);
    ok &= size.has_value();
  }
  env_.may_add_sizes = may_add_sizes;
  if (!ok) return give_up(rank);

  const ir::ValuePtr& x = source->value;
  if (!ir::same_element_count(x->shape, shape)) {
    Diagnostic& d =
        error(Span::of(s.callee.span.begin, s.span.end),
              "reshape of " + quote(arg.name) + " " + bracketed(x->shape) + " into " +
                  bracketed(shape) + " changes the number of elements (" +
                  ir::element_count_text(x->shape) + " vs " + ir::element_count_text(shape) + ")");
    d.notes.push_back({source->decl, quote(arg.name) + " is defined here"});
    return give_up(rank);
  }
  if (t.kind == Target::Update && t.existing.ok() &&
      (t.existing.value->type != x->type || t.existing.value->shape != shape)) {
    Diagnostic& d =
        error(result.span, std::string(t.existing.value->type != x->type ? "type" : "size") +
                               " mismatch: " + quote(result.name) + " is " +
                               shape_text(t.existing.value->type, t.existing.value->shape) +
                               " but the reshape is " + shape_text(x->type, shape));
    d.notes.push_back({t.existing.decl, quote(result.name) + " is defined here"});
    return give_up(rank);
  }

  // One index per dimension, named after its size where that is one symbol
  // (B -> b), clear of enclosing loop variables.
  std::vector<ir::Dim> out;
  std::set<std::string> taken = ir_loop_vars_;
  for (int d = 0; d < rank; ++d) {
    std::string base = "i" + std::to_string(d);
    if (auto sym = shape[size_t(d)].as_symbol()) {
      base.clear();
      for (char c : *sym) base += char(std::tolower(static_cast<unsigned char>(c)));
    }
    std::string name = base;
    for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    out.push_back(ir::Dim{name, 0, shape[size_t(d)]});
  }
  auto renamed = env_.rename.find(result.name);
  const std::string& name = renamed == env_.rename.end() ? result.name : renamed->second;
  ++statements_;
  ir::Expr body = ir::reshape_read(x, out);
  ir::ValuePtr value = env_.fb->compute(name, std::move(out), {}, ir::ReduceOp::None, body, nullptr,
                                        x->type, s.span, text(s.span));
  env_.fb->annotations().reshape = true;
  bind_result(result, t, value, rank, false);
}

}  // namespace tenet::lang::detail
