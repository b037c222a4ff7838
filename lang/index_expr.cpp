// Integer expressions that are not tensor values: index expressions inside
// reads (affine in the indices: `2*y + ky`, `N - 1 - i`), the bounds of where
// clauses (size expressions: `(H - 9) / 2 + 1`) and loop bounds (constants).
// One evaluator serves all three; what a name may be depends on the context.
#include <cmath>
#include <functional>

#include "lang/check_internal.h"

namespace tenet::lang::detail {

namespace {

using ir::SizeExpr;

// sum(coef * name) + offset, with a bound on the magnitude of its constants
// (kept below kMaxConstant so later products cannot overflow).
struct Lin {
  std::vector<std::pair<std::string, int64_t>> terms;  // in order of appearance
  SizeExpr offset;
  double mag = 0;

  void add_term(const std::string& name, int64_t c) {
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (it->first != name) continue;
      it->second += c;
      if (it->second == 0) terms.erase(it);
      return;
    }
    if (c != 0) terms.push_back({name, c});
  }
};

// Why an expression is not of the required form: a span to point at and a
// reason, or `silent` when the problem was reported already.
struct Failure {
  Span span;
  std::string why;
  bool silent = false;
};

struct NameMeaning {
  enum Kind { Index, Loop, Size, Invalid, Silent } kind = Invalid;
  std::string ir;   // Index, Loop
  int64_t lo = 0;   // Loop: the source value is ir + lo
  SizeExpr size;    // Size
  std::string why;  // Invalid
};
using Resolver = std::function<NameMeaning(const ast::Expr&)>;

class Evaluator {
 public:
  Evaluator(const SourceFile& file, Resolver resolve) : file_(file), resolve_(std::move(resolve)) {}

  std::optional<Lin> eval(const ast::Expr& e) {
    switch (e.kind) {
      case ast::ExprKind::Number:
        return number(e);
      case ast::ExprKind::Name:
        return name(e);
      case ast::ExprKind::Unary:
        if (e.op == "-" && e.args.size() == 1) {
          auto a = eval(*e.args[0]);
          if (!a) return a;
          for (auto& t : a->terms) t.second = -t.second;
          a->offset = -a->offset;
          return a;
        }
        break;
      case ast::ExprKind::Binary:
        if (e.args.size() == 2 && (e.op == "+" || e.op == "-" || e.op == "*" || e.op == "/"))
          return binary(e);
        break;
      case ast::ExprKind::Access:
        return fail(e, "reads the tensor " + quote(e.name));
      default:
        break;
    }
    return fail(e, "is not a sum of integer multiples of indices and sizes");
  }

  Failure failure;

 private:
  std::optional<Lin> fail(const ast::Expr& e, const std::string& why) {
    failure = Failure{e.span, quote(text(e)) + " " + why, false};
    return std::nullopt;
  }
  std::string text(const ast::Expr& e) const { return std::string(file_.slice(e.span)); }

  std::optional<Lin> checked(const ast::Expr& e, Lin r) {
    if (r.mag > double(kMaxConstant) || !size_is_moderate(r.offset))
      return fail(e, "has constants that are too large");
    return r;
  }

  std::optional<Lin> number(const ast::Expr& e) {
    if (!e.is_integer || e.number != std::floor(e.number)) return fail(e, "is not an integer");
    if (std::fabs(e.number) > double(kMaxConstant)) return fail(e, "is too large");
    Lin r;
    r.offset = SizeExpr(int64_t(e.number));
    r.mag = std::fabs(e.number);
    return r;
  }

  std::optional<Lin> name(const ast::Expr& e) {
    NameMeaning m = resolve_(e);
    Lin r;
    switch (m.kind) {
      case NameMeaning::Index:
        r.add_term(m.ir, 1);
        r.mag = 1;
        return r;
      case NameMeaning::Loop:
        r.add_term(m.ir, 1);
        r.offset = SizeExpr(m.lo);
        r.mag = 1 + std::fabs(double(m.lo));
        return r;
      case NameMeaning::Size:
        r.offset = m.size;
        r.mag = 1;
        return checked(e, r);
      case NameMeaning::Silent:
        failure = Failure{e.span, "", true};
        return std::nullopt;
      case NameMeaning::Invalid:
        return fail(e, m.why);
    }
    return std::nullopt;
  }

  std::optional<Lin> binary(const ast::Expr& e) {
    auto a = eval(*e.args[0]);
    if (!a) return a;
    auto b = eval(*e.args[1]);
    if (!b) return b;
    Lin r;
    if (e.op == "+" || e.op == "-") {
      int64_t sign = e.op == "+" ? 1 : -1;
      r = *a;
      for (const auto& [n, c] : b->terms) r.add_term(n, sign * c);
      r.offset = sign > 0 ? a->offset + b->offset : a->offset - b->offset;
      r.mag = a->mag + b->mag;
      return checked(e, r);
    }
    if (e.op == "*") {
      if (!a->terms.empty() && !b->terms.empty()) return fail(e, "multiplies two indices");
      if (a->terms.empty() && b->terms.empty()) {
        r.offset = a->offset * b->offset;
        r.mag = a->mag * b->mag;
        return checked(e, r);
      }
      const Lin& scalar = a->terms.empty() ? *a : *b;
      const Lin& var = a->terms.empty() ? *b : *a;
      std::optional<int64_t> k = scalar.offset.constant();
      if (!k) return fail(e, "multiplies an index by a size, not by a constant");
      r.mag = scalar.mag * var.mag;
      if (r.mag > double(kMaxConstant)) return fail(e, "has constants that are too large");
      for (const auto& [n, c] : var.terms) r.add_term(n, c * *k);
      r.offset = var.offset * SizeExpr(*k);
      return checked(e, r);
    }
    // '/': floor division of a size expression by a positive constant.
    if (!a->terms.empty() || !b->terms.empty()) return fail(e, "divides an index");
    std::optional<int64_t> d = b->offset.constant();
    if (!d) return fail(e, "divides by a size, not by a constant");
    if (*d <= 0) return fail(e, "divides by zero or a negative number");
    r.offset = SizeExpr::floordiv(a->offset, *d);
    r.mag = a->mag;
    return checked(e, r);
  }

  const SourceFile& file_;
  Resolver resolve_;
};

}  // namespace

std::optional<ir::Affine> Lowerer::affine(const ast::Expr& e, StmtInfo& st) {
  Evaluator ev(file(), [&](const ast::Expr& n) {
    NameMeaning m;
    auto ix = st.index_of.find(n.name);
    if (ix != st.index_of.end()) {
      m.kind = NameMeaning::Index;
      m.ir = st.indices[ix->second].ir_name;
    } else if (const LoopVar* l = find_loop(n.name)) {
      m.kind = NameMeaning::Loop;
      m.ir = l->ir_name;
      m.lo = l->lo;
    } else if (auto s = env_.sizes.find(n.name); s != env_.sizes.end()) {
      m.kind = NameMeaning::Size;
      m.size = s->second;
    } else {
      m.kind = NameMeaning::Silent;  // a name collect_indices already rejected
    }
    return m;
  });
  std::optional<Lin> r = ev.eval(e);
  if (!r) return std::nullopt;  // a computed index (types.cpp)
  ir::Affine a;
  a.terms = std::move(r->terms);
  a.offset = r->offset;
  return a;
}

std::optional<ir::SizeExpr> Lowerer::size_expr(const ast::Expr& e, const char* context,
                                               const StmtInfo* st) {
  Evaluator ev(file(), [&](const ast::Expr& n) {
    NameMeaning m;
    auto s = env_.sizes.find(n.name);
    if (s != env_.sizes.end()) {
      m.kind = NameMeaning::Size;
      m.size = s->second;
      return m;
    }
    m.kind = NameMeaning::Invalid;
    if (st && st->index_of.count(n.name)) {
      m.why = "is an index";
    } else if (find_loop(n.name)) {
      m.why = "is a loop variable";
    } else if (scopes_.find(n.name)) {
      m.why = "is a tensor";
    } else if (find_function(n.name) || ast::is_builtin(n.name)) {
      m.why = "is a function";
    } else if (env_.may_add_sizes) {
      // A size used only in where clauses: a size parameter given at run time.
      m.kind = NameMeaning::Size;
      m.size = SizeExpr::sym(n.name);
      env_.sizes[n.name] = m.size;
      env_.size_decl[n.name] = n.span;
      env_.fb->size_param(n.name);
    } else {
      m.why = "is not a size parameter of " + quote(env_.fn->name.name);
    }
    return m;
  });
  std::optional<Lin> r = ev.eval(e);
  if (r && !r->terms.empty()) {
    ev.failure = Failure{e.span, quote(text(e.span)) + " uses an index", false};
    r.reset();
  }
  if (!r) {
    if (!ev.failure.silent) {
      Diagnostic& d = error(e.span, std::string(context) + " must be size expressions");
      d.notes.push_back({ev.failure.span, ev.failure.why});
    }
    return std::nullopt;
  }
  return r->offset;
}

std::optional<int64_t> Lowerer::loop_bound(const ast::Expr& e) {
  Evaluator ev(file(), [&](const ast::Expr& n) {
    NameMeaning m;
    m.kind = NameMeaning::Invalid;
    if (env_.sizes.count(n.name))
      m.why = "is a size parameter, known only at run time";
    else if (find_loop(n.name))
      m.why = "is a loop variable";
    else
      m.why = "is not a constant";
    return m;
  });
  std::optional<Lin> r = ev.eval(e);
  std::optional<int64_t> value;
  if (r) value = r->offset.constant();
  if (!value) {
    if (r) ev.failure = Failure{e.span, quote(text(e.span)) + " is not a constant", false};
    Diagnostic& d = error(e.span, "the trip count of a loop must be a constant");
    d.notes.push_back({ev.failure.span, ev.failure.why});
    return std::nullopt;
  }
  return value;
}

}  // namespace tenet::lang::detail
