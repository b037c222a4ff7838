// The algebra of affine index forms (affine.h).
#include "ir/affine.h"

#include <algorithm>
#include <cmath>

#include "ir/builder.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

/// Adds coef * index to `terms` (in place if the index is there, else at the end).
void add_term(std::vector<std::pair<std::string, int64_t>>& terms, const std::string& index,
              int64_t coef) {
  for (auto& term : terms)
    if (term.first == index) {
      term.second += coef;
      return;
    }
  terms.push_back({index, coef});
}

Affine without_zeros(Affine a) {
  std::erase_if(a.terms, [](const auto& term) { return term.second == 0; });
  return a;
}

}  // namespace

Affine affine_const(const SizeExpr& offset) {
  return Affine{{}, offset};
}

Affine operator+(const Affine& a, const Affine& b) {
  Affine r = a;
  for (const auto& [index, coef] : b.terms) add_term(r.terms, index, coef);
  r.offset = a.offset + b.offset;
  return without_zeros(std::move(r));
}

Affine operator-(const Affine& a) {
  return a * -1;
}

Affine operator-(const Affine& a, const Affine& b) {
  return a + -b;
}

Affine operator*(const Affine& a, int64_t factor) {
  if (factor == 0) return affine_const(0);
  Affine r = a;
  for (auto& term : r.terms) term.second *= factor;
  r.offset = a.offset * SizeExpr(factor);
  return r;
}

bool equal(const Affine& a, const Affine& b) {
  if (a.offset != b.offset || a.terms.size() != b.terms.size()) return false;
  for (const auto& [index, coef] : a.terms)
    if (b.coef(index) != coef) return false;
  return true;
}

bool identical(const Affine& a, const Affine& b) {
  return a.terms == b.terms && a.offset == b.offset;
}

bool mentions(const Affine& a, const std::set<std::string>& indices) {
  for (const auto& term : a.terms)
    if (indices.count(term.first)) return true;
  return false;
}

Affine sorted(Affine a) {
  std::sort(a.terms.begin(), a.terms.end());
  return a;
}

Affine substitute(const Affine& a, const std::map<std::string, Affine>& repl) {
  Affine r = affine_const(a.offset);
  for (const auto& [index, coef] : a.terms) {
    auto it = repl.find(index);
    if (it == repl.end()) {
      add_term(r.terms, index, coef);
      continue;
    }
    for (const auto& [inner, c] : it->second.terms) add_term(r.terms, inner, coef * c);
    r.offset = r.offset + SizeExpr(coef) * it->second.offset;
  }
  return without_zeros(std::move(r));
}

std::vector<Affine> substitute(const std::vector<Affine>& indices,
                               const std::map<std::string, Affine>& repl) {
  std::vector<Affine> out;
  for (const Affine& a : indices) out.push_back(substitute(a, repl));
  return out;
}

Affine solve(const Affine& a, const std::string& index, const Affine& target) {
  // a = c*index + rest with c = +-1, so index = c * (target - rest).
  const int64_t c = a.coef(index);
  TENET_ASSERT(c == 1 || c == -1,
               "solve: " << index << " has coefficient " << c << " in " << a.str());
  const Affine rest = a - Affine::var(index) * c;
  return (target - rest) * c;
}

std::optional<Affine> linear_form(const Expr& e) {
  if (e->type != ElemType::I64) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Const:
      if (e->value != std::floor(e->value) || std::fabs(e->value) > 1e15) return std::nullopt;
      return affine_const(int64_t(e->value));
    case ExprKind::Index:
      return Affine::var(e->index);
    case ExprKind::Size:
      return affine_const(e->size);
    case ExprKind::Unary:
      if (e->unop != UnOp::Neg) return std::nullopt;
      if (auto a = linear_form(e->args[0])) return -*a;
      return std::nullopt;
    case ExprKind::Binary: {
      const BinOp op = e->binop;
      if (op != BinOp::Add && op != BinOp::Sub && op != BinOp::Mul) return std::nullopt;
      auto a = linear_form(e->args[0]), b = linear_form(e->args[1]);
      if (!a || !b) return std::nullopt;
      if (op == BinOp::Add) return *a + *b;
      if (op == BinOp::Sub) return *a - *b;
      // A product: one side without indices, a constant unless the other has none either.
      if (a->terms.empty() && b->terms.empty()) return affine_const(a->offset * b->offset);
      if (b->terms.empty() && b->offset.constant()) return *a * *b->offset.constant();
      if (a->terms.empty() && a->offset.constant()) return *b * *a->offset.constant();
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Affine> nonnegative_form(const Expr& cmp) {
  if (cmp->kind != ExprKind::Binary) return std::nullopt;
  const BinOp op = cmp->binop;
  if (op != BinOp::Lt && op != BinOp::Le && op != BinOp::Gt && op != BinOp::Ge) return std::nullopt;
  auto a = linear_form(cmp->args[0]), b = linear_form(cmp->args[1]);
  if (!a || !b) return std::nullopt;
  const Affine one = affine_const(1);
  switch (op) {
    case BinOp::Ge:
      return *a - *b;
    case BinOp::Gt:
      return *a - *b - one;
    case BinOp::Le:
      return *b - *a;
    default:  // Lt
      return *b - *a - one;
  }
}

std::optional<Affine> affine_in(const SizeExpr& e, const std::vector<std::string>& indices,
                                std::string* why) {
  auto fail = [&](std::string message) -> std::optional<Affine> {
    if (why) *why = std::move(message);
    return std::nullopt;
  };
  const std::set<std::string> symbols = e.symbols();
  std::map<std::string, SizeExpr> zero;
  for (const std::string& index : indices)
    if (symbols.count(index)) zero[index] = SizeExpr(0);
  Affine a = affine_const(e.substitute(zero));
  SizeExpr rebuilt = a.offset;
  for (const std::string& index : indices) {
    if (!zero.count(index) || a.coef(index) != 0) continue;
    auto one = zero;
    one[index] = SizeExpr(1);
    const std::optional<int64_t> coef = (e.substitute(one) - a.offset).constant();
    if (!coef) return fail("index expression is not affine in '" + index + "'");
    if (*coef != 0) a.terms.push_back({index, *coef});
    rebuilt = rebuilt + SizeExpr::sym(index) * SizeExpr(*coef);
  }
  if (rebuilt != e) return fail("index expression is not affine: " + e.str());
  return a;
}

Expr affine_value(const Affine& a) {
  auto constant = [](int64_t k) { return make_const(double(k), ElemType::I64); };
  Expr sum;
  for (const auto& [index, coef] : a.terms) {
    const int64_t mag = coef < 0 ? -coef : coef;
    Expr term = make_index(index);
    if (mag != 1) term = make_binary(BinOp::Mul, constant(mag), term);
    if (!sum)
      sum = coef < 0 ? make_unary(UnOp::Neg, term) : term;
    else
      sum = make_binary(coef < 0 ? BinOp::Sub : BinOp::Add, sum, term);
  }
  if (!sum) {
    if (auto k = a.offset.constant()) return constant(*k);
    return make_size(a.offset);
  }
  if (auto k = a.offset.constant()) {
    if (*k > 0) sum = make_binary(BinOp::Add, sum, constant(*k));
    if (*k < 0) sum = make_binary(BinOp::Sub, sum, constant(-*k));
    return sum;
  }
  if (a.offset.str()[0] == '-')  // g - 2*S, not g + -2*S
    return make_binary(BinOp::Sub, sum, make_size(-a.offset));
  return make_binary(BinOp::Add, sum, make_size(a.offset));
}

char index_step_op(const ExprNode& e) {
  if (e.args.empty() || e.args[0]->type != ElemType::I64) return 0;
  if (e.kind == ExprKind::Unary) return e.unop == UnOp::Neg ? '~' : 0;
  if (e.kind != ExprKind::Binary) return 0;
  switch (e.binop) {
    case BinOp::Add:
      return '+';
    case BinOp::Sub:
      return '-';
    case BinOp::Mul:
      return '*';
    case BinOp::Div:
      return '/';
    case BinOp::Rem:
      return '%';
    default:
      return 0;
  }
}

Expr index_value(const ExprNode& read, size_t d) {
  return read.is_computed(d) ? read.computed[d] : affine_value(read.indices[d]);
}

std::vector<Expr> index_values(const ExprNode& read) {
  std::vector<Expr> out;
  for (size_t d = 0; d < read.indices.size(); ++d) out.push_back(index_value(read, d));
  return out;
}

std::vector<Affine> plain_indices(const std::vector<Dim>& dims) {
  std::vector<Affine> out;
  for (const Dim& d : dims) out.push_back(Affine::var(d.index));
  return out;
}

}  // namespace tenet::ir
