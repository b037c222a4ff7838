#include "ir/size_expr.h"

#include <algorithm>
#include <sstream>

#include "support/checked.h"
#include "support/error.h"

namespace tenet::ir {

/// A non-constant building block of a SizeExpr. `key` is its canonical text.
struct SizeAtom {
  enum Kind { Sym, FloorDiv, Min, Max, Mul } kind;
  std::string name;            // Sym
  std::vector<SizeExpr> args;  // FloorDiv: {a}; Min/Max/Mul: {a, b} in key order
  int64_t divisor = 1;         // FloorDiv
  std::string key;

  void make_key() {
    switch (kind) {
      case Sym:
        key = name;
        break;
      case FloorDiv: {
        const SizeExpr& a = args[0];
        bool simple = a.terms_.size() == 1 && a.constant_ == 0 && a.terms_[0].second == 1;
        key = (simple ? a.str() : "(" + a.str() + ")") + " / " + std::to_string(divisor);
        break;
      }
      case Min:
        key = "min(" + args[0].str() + ", " + args[1].str() + ")";
        break;
      case Max:
        key = "max(" + args[0].str() + ", " + args[1].str() + ")";
        break;
      case Mul: {
        // A floor division is parenthesised: "M*N / 2" would read as (M*N) / 2.
        auto part = [](const SizeExpr& e) {
          bool simple = e.terms_.size() == 1 && e.constant_ == 0 && e.terms_[0].second == 1 &&
                        e.terms_[0].first->kind != FloorDiv;
          return simple ? e.str() : "(" + e.str() + ")";
        };
        key = part(args[0]) + "*" + part(args[1]);
        break;
      }
    }
  }
};

namespace {

int64_t floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  if ((a % d != 0) && ((a < 0) != (d < 0))) --q;
  return q;
}

std::shared_ptr<const SizeAtom> make_atom(SizeAtom a) {
  a.make_key();
  return std::make_shared<const SizeAtom>(std::move(a));
}

}  // namespace

SizeExpr SizeExpr::from_atom(std::shared_ptr<const SizeAtom> atom) {
  SizeExpr e;
  e.terms_.push_back({std::move(atom), 1});
  return e;
}

static_assert(int(SizeAtom::Sym) == int(SizeExpr::Atom::Sym) &&
                  int(SizeAtom::Mul) == int(SizeExpr::Atom::Mul),
              "SizeExpr::Atom::Kind lists the atom kinds in the same order");

std::vector<std::pair<SizeExpr::Atom, int64_t>> SizeExpr::atoms() const {
  std::vector<std::pair<Atom, int64_t>> out;
  for (const auto& [atom, coef] : terms_)
    out.push_back({Atom{Atom::Kind(atom->kind), atom->key, atom->args, atom->divisor}, coef});
  return out;
}

SizeExpr SizeExpr::sym(const std::string& name) {
  SizeAtom a{SizeAtom::Sym, name, {}, 1, ""};
  return from_atom(make_atom(std::move(a)));
}

void SizeExpr::normalise() {
  std::sort(terms_.begin(), terms_.end(),
            [](const Term& x, const Term& y) { return x.first->key < y.first->key; });
  std::vector<Term> merged;
  for (auto& t : terms_) {
    if (!merged.empty() && merged.back().first->key == t.first->key)
      merged.back().second += t.second;
    else
      merged.push_back(t);
  }
  merged.erase(
      std::remove_if(merged.begin(), merged.end(), [](const Term& t) { return t.second == 0; }),
      merged.end());
  terms_ = std::move(merged);
  key_.reset();
}

SizeExpr operator+(const SizeExpr& a, const SizeExpr& b) {
  SizeExpr r = a;
  r.constant_ += b.constant_;
  r.terms_.insert(r.terms_.end(), b.terms_.begin(), b.terms_.end());
  r.normalise();
  return r;
}

SizeExpr operator-(const SizeExpr& a, const SizeExpr& b) {
  SizeExpr r = a;
  r.constant_ -= b.constant_;
  for (auto t : b.terms_) r.terms_.push_back({t.first, -t.second});
  r.normalise();
  return r;
}

SizeExpr operator*(const SizeExpr& a, const SizeExpr& b) {
  auto scale = [](const SizeExpr& e, int64_t k) {
    SizeExpr r = e;
    r.constant_ *= k;
    for (auto& t : r.terms_) t.second *= k;
    r.normalise();
    return r;
  };
  if (auto c = a.constant()) return scale(b, *c);
  if (auto c = b.constant()) return scale(a, *c);
  SizeAtom atom{SizeAtom::Mul, "", {a, b}, 1, ""};
  if (b.key() < a.key()) std::swap(atom.args[0], atom.args[1]);
  return SizeExpr::from_atom(make_atom(std::move(atom)));
}

SizeExpr SizeExpr::floordiv(const SizeExpr& a, int64_t d) {
  TENET_ASSERT(d > 0, "floordiv by non-positive " << d);
  if (d == 1) return a;
  if (auto c = a.constant()) return SizeExpr(floor_div(*c, d));
  bool exact = std::all_of(a.terms_.begin(), a.terms_.end(),
                           [&](const Term& t) { return t.second % d == 0; });
  if (exact) {
    SizeExpr r = a;
    for (auto& t : r.terms_) t.second /= d;
    r.constant_ = floor_div(a.constant_, d);
    r.key_.reset();
    return r;
  }
  SizeAtom atom{SizeAtom::FloorDiv, "", {a}, d, ""};
  return from_atom(make_atom(std::move(atom)));
}

SizeExpr SizeExpr::min(const SizeExpr& a, const SizeExpr& b) {
  if (auto d = const_difference(a, b)) return *d <= 0 ? a : b;
  SizeAtom atom{SizeAtom::Min, "", {a, b}, 1, ""};
  if (b.key() < a.key()) std::swap(atom.args[0], atom.args[1]);
  return from_atom(make_atom(std::move(atom)));
}

SizeExpr SizeExpr::max(const SizeExpr& a, const SizeExpr& b) {
  if (auto d = const_difference(a, b)) return *d >= 0 ? a : b;
  SizeAtom atom{SizeAtom::Max, "", {a, b}, 1, ""};
  if (b.key() < a.key()) std::swap(atom.args[0], atom.args[1]);
  return from_atom(make_atom(std::move(atom)));
}

std::optional<int64_t> SizeExpr::constant() const {
  if (terms_.empty()) return constant_;
  return std::nullopt;
}

std::optional<std::string> SizeExpr::as_symbol() const {
  if (constant_ == 0 && terms_.size() == 1 && terms_[0].second == 1 &&
      terms_[0].first->kind == SizeAtom::Sym)
    return terms_[0].first->name;
  return std::nullopt;
}

int64_t SizeExpr::eval(const SizeBindings& sizes) const {
  // Sizes come from users (--sizes, input shapes), so every step is checked:
  // a wrapped value would be a wrong extent that loops and allocations trust.
  auto overflow = [&]() -> int64_t {
    std::string values;
    for (const auto& s : symbols()) {
      auto it = sizes.find(s);
      if (it != sizes.end())
        values += (values.empty() ? "" : ", ") + s + " = " + std::to_string(it->second);
    }
    throw BindError("size expression '" + str() + "' overflows a 64-bit integer" +
                    (values.empty() ? "" : " for " + values));
  };
  auto check = [&](std::optional<int64_t> r) { return r ? *r : overflow(); };
  int64_t v = constant_;
  for (const auto& [atom, coef] : terms_) {
    int64_t x = 0;
    switch (atom->kind) {
      case SizeAtom::Sym: {
        auto it = sizes.find(atom->name);
        if (it == sizes.end())
          throw BindError("size parameter '" + atom->name +
                          "' is not bound (give it with --sizes " + atom->name + "=...)");
        x = it->second;
        break;
      }
      case SizeAtom::FloorDiv:
        x = floor_div(atom->args[0].eval(sizes), atom->divisor);
        break;
      case SizeAtom::Min:
        x = std::min(atom->args[0].eval(sizes), atom->args[1].eval(sizes));
        break;
      case SizeAtom::Max:
        x = std::max(atom->args[0].eval(sizes), atom->args[1].eval(sizes));
        break;
      case SizeAtom::Mul:
        x = check(checked_mul(atom->args[0].eval(sizes), atom->args[1].eval(sizes)));
        break;
    }
    v = check(checked_add(v, check(checked_mul(coef, x))));
  }
  return v;
}

SizeExpr SizeExpr::substitute(const std::map<std::string, SizeExpr>& repl) const {
  SizeExpr r(constant_);
  for (const auto& [atom, coef] : terms_) {
    SizeExpr x;
    switch (atom->kind) {
      case SizeAtom::Sym: {
        auto it = repl.find(atom->name);
        x = it == repl.end() ? SizeExpr::sym(atom->name) : it->second;
        break;
      }
      case SizeAtom::FloorDiv:
        x = floordiv(atom->args[0].substitute(repl), atom->divisor);
        break;
      case SizeAtom::Min:
        x = min(atom->args[0].substitute(repl), atom->args[1].substitute(repl));
        break;
      case SizeAtom::Max:
        x = max(atom->args[0].substitute(repl), atom->args[1].substitute(repl));
        break;
      case SizeAtom::Mul:
        x = atom->args[0].substitute(repl) * atom->args[1].substitute(repl);
        break;
    }
    r = r + x * SizeExpr(coef);
  }
  return r;
}

std::set<std::string> SizeExpr::symbols() const {
  std::set<std::string> out;
  for (const auto& [atom, coef] : terms_) {
    if (atom->kind == SizeAtom::Sym) out.insert(atom->name);
    for (const auto& a : atom->args) {
      auto s = a.symbols();
      out.insert(s.begin(), s.end());
    }
  }
  return out;
}

std::string SizeExpr::str() const {
  if (terms_.empty()) return std::to_string(constant_);
  std::ostringstream os;
  bool first = true;
  // Positive terms first ("W - KW + 1", not "-KW + W + 1"); order within each sign is by key.
  std::vector<Term> ordered;
  for (const auto& t : terms_)
    if (t.second > 0) ordered.push_back(t);
  for (const auto& t : terms_)
    if (t.second < 0) ordered.push_back(t);
  for (const auto& [atom, coef] : ordered) {
    int64_t mag = coef < 0 ? -coef : coef;
    if (first)
      os << (coef < 0 ? "-" : "");
    else
      os << (coef < 0 ? " - " : " + ");
    if (mag != 1) os << mag << '*';
    bool needs_paren = mag != 1 && atom->kind == SizeAtom::FloorDiv;
    os << (needs_paren ? "(" : "") << atom->key << (needs_paren ? ")" : "");
    first = false;
  }
  if (constant_ > 0) os << " + " << constant_;
  if (constant_ < 0) os << " - " << -constant_;
  return os.str();
}

const std::string& SizeExpr::key() const {
  if (!key_) key_ = std::make_shared<std::string>(str());
  return *key_;
}

bool operator==(const SizeExpr& a, const SizeExpr& b) {
  if (a.constant_ != b.constant_ || a.terms_.size() != b.terms_.size()) return false;
  return a.key() == b.key();
}

std::optional<int64_t> const_difference(const SizeExpr& a, const SizeExpr& b) {
  return (a - b).constant();
}

bool provably_le(const SizeExpr& a, const SizeExpr& b) {
  auto d = const_difference(a, b);
  return d && *d <= 0;
}

}  // namespace tenet::ir
