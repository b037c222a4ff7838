// Proofs about sizes (size_proof.h): Fourier-Motzkin elimination.
//
// Each atom of a size expression (a size parameter, a floor division, a min,
// a max, a product) is a variable; what it means is added as constraints
// (N >= 0; d*q <= a <= d*q + d - 1 for q = a / d; m <= a and m <= b for
// m = min(a, b); the same reversed for max; nothing for a product). To prove
// e >= 0, the facts and e <= -1 must have no solution: variables are
// eliminated one at a time (each pair of a lower and an upper bound of the
// variable gives one constraint without it) until a constraint without
// variables says c >= 0 with c < 0. Integer rounding (dividing a constraint by
// the gcd of its coefficients and flooring the constant) keeps the proofs
// that hold only because sizes are integers, such as N >= 1 from 2*N >= 1.
#include "lang/size_proof.h"

#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <string>

namespace tenet::lang::detail {

namespace {

using ir::SizeExpr;

/// Constraints beyond this many give up (no proof): elimination can grow
/// them quadratically per variable.
constexpr size_t kMaxConstraints = 2000;

int64_t floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  if (a % d != 0 && (a < 0) != (d < 0)) --q;
  return q;
}

/// sum coefs[v] * x_v + constant >= 0.
struct Constraint {
  std::map<int, int64_t> coefs;
  int64_t constant = 0;
};

class System {
 public:
  /// e as a constraint e >= 0 over the atoms (registering new ones).
  Constraint linear(const SizeExpr& e) {
    Constraint c;
    c.constant = e.constant_term();
    for (const auto& [atom, coef] : e.atoms()) add_term(c, atom_id(atom), coef);
    return c;
  }
  void add(Constraint c) { constraints_.push_back(std::move(c)); }
  bool overflowed() const { return overflow_; }

  /// True when the constraints have no rational solution (after rounding).
  bool infeasible() {
    std::vector<Constraint> cs = constraints_;
    for (;;) {
      std::map<std::map<int, int64_t>, int64_t> tightest;  // coefficients -> least constant
      for (Constraint& c : cs) {
        normalise(c);
        if (c.coefs.empty()) {
          if (c.constant < 0) return true;
          continue;
        }
        auto [it, fresh] = tightest.emplace(c.coefs, c.constant);
        if (!fresh) it->second = std::min(it->second, c.constant);
      }
      if (overflow_ || tightest.empty()) return false;
      // Eliminate the variable that makes the fewest new constraints.
      std::map<int, std::pair<size_t, size_t>> sides;  // variable -> (lower, upper) bounds
      for (const auto& [coefs, constant] : tightest)
        for (const auto& [v, a] : coefs) (a > 0 ? sides[v].first : sides[v].second)++;
      int var = sides.begin()->first;
      size_t best = SIZE_MAX;
      for (const auto& [v, n] : sides)
        if (n.first * n.second < best) {
          best = n.first * n.second;
          var = v;
        }
      std::vector<Constraint> lower, upper, next;
      for (const auto& [coefs, constant] : tightest) {
        Constraint c{coefs, constant};
        auto it = c.coefs.find(var);
        if (it == c.coefs.end())
          next.push_back(std::move(c));
        else
          (it->second > 0 ? lower : upper).push_back(std::move(c));
      }
      for (const Constraint& lo : lower)
        for (const Constraint& up : upper) next.push_back(combine(lo, up, var));
      if (next.size() > kMaxConstraints || overflow_) return false;
      cs = std::move(next);
    }
  }

 private:
  int64_t mul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow_ = true;
    return r;
  }
  int64_t plus(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow_ = true;
    return r;
  }
  void add_term(Constraint& c, int v, int64_t coef) {
    int64_t& slot = c.coefs[v];
    slot = plus(slot, coef);
    if (slot == 0) c.coefs.erase(v);
  }
  /// k * c
  Constraint scaled(const Constraint& c, int64_t k) {
    Constraint r;
    r.constant = mul(c.constant, k);
    for (const auto& [v, a] : c.coefs) r.coefs[v] = mul(a, k);
    return r;
  }
  Constraint sum(Constraint a, const Constraint& b) {
    a.constant = plus(a.constant, b.constant);
    for (const auto& [v, k] : b.coefs) add_term(a, v, k);
    return a;
  }
  /// lo has a > 0 and up has b < 0 on var: b' * lo + a * up has 0 on var.
  Constraint combine(const Constraint& lo, const Constraint& up, int var) {
    return sum(scaled(lo, -up.coefs.at(var)), scaled(up, lo.coefs.at(var)));
  }
  void normalise(Constraint& c) {
    int64_t g = 0;
    for (const auto& [v, a] : c.coefs) g = std::gcd(g, a < 0 ? -a : a);
    if (g <= 1) return;
    for (auto& [v, a] : c.coefs) a /= g;
    c.constant = floor_div(c.constant, g);
  }

  int atom_id(const SizeExpr::Atom& atom) {
    auto it = ids_.find(atom.key);
    if (it != ids_.end()) return it->second;
    const int v = int(ids_.size());
    ids_.emplace(atom.key, v);
    Constraint x;
    x.coefs[v] = 1;
    switch (atom.kind) {
      case SizeExpr::Atom::Sym:  // a size parameter: x >= 0
        add(x);
        break;
      case SizeExpr::Atom::FloorDiv: {  // d*x <= a <= d*x + d - 1
        const Constraint a = linear(atom.args[0]);
        const Constraint dx = scaled(x, atom.divisor);
        add(sum(a, scaled(dx, -1)));
        Constraint upper = sum(dx, scaled(a, -1));
        upper.constant = plus(upper.constant, atom.divisor - 1);
        add(upper);
        break;
      }
      case SizeExpr::Atom::Min:  // x <= a, x <= b
      case SizeExpr::Atom::Max:  // x >= a, x >= b
        for (const SizeExpr& arg : atom.args) {
          const Constraint a = linear(arg);
          add(atom.kind == SizeExpr::Atom::Min ? sum(a, scaled(x, -1)) : sum(x, scaled(a, -1)));
        }
        break;
      case SizeExpr::Atom::Mul:  // a product of non-constants: nothing known
        break;
    }
    return v;
  }

  std::map<std::string, int> ids_;
  std::vector<Constraint> constraints_;
  bool overflow_ = false;
};

}  // namespace

bool SizeFacts::proves_nonnegative(const SizeExpr& e) const {
  if (std::optional<int64_t> c = e.constant()) return *c >= 0;
  System system;
  for (const SizeExpr& f : facts_) system.add(system.linear(f));
  // Facts that contradict each other (an empty range) prove nothing here.
  if (!consistent_) consistent_ = !system.infeasible();
  if (!*consistent_) return false;
  Constraint negated = system.linear(SizeExpr(-1) - e);  // e <= -1
  system.add(negated);
  return !system.overflowed() && system.infeasible();
}

}  // namespace tenet::lang::detail
