/// \file
/// Symbolic sizes: integer expressions over size parameters (B, N, H, ...).
///
/// A SizeExpr is kept in a normal form: a constant plus a sorted sum of
/// coefficient * atom, where an atom is a symbol or a non-linear term
/// (floordiv by a positive constant, min, max, a product of non-constants).
/// Two SizeExprs that normalise the same compare equal, so `H - 9 + 1` and
/// `H - 8` are one size. '/' in the text form is floor division.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tenet::ir {

class SizeExpr;
using SizeBindings = std::map<std::string, int64_t>;

struct SizeAtom;

class SizeExpr {
 public:
  SizeExpr() = default;
  SizeExpr(int64_t c) : constant_(c) {}  // NOLINT: implicit from integers on purpose
  static SizeExpr sym(const std::string& name);

  friend SizeExpr operator+(const SizeExpr& a, const SizeExpr& b);
  friend SizeExpr operator-(const SizeExpr& a, const SizeExpr& b);
  friend SizeExpr operator*(const SizeExpr& a, const SizeExpr& b);
  friend SizeExpr operator-(const SizeExpr& a) { return SizeExpr(0) - a; }
  /// Floor division by a positive constant.
  static SizeExpr floordiv(const SizeExpr& a, int64_t divisor);
  static SizeExpr min(const SizeExpr& a, const SizeExpr& b);
  static SizeExpr max(const SizeExpr& a, const SizeExpr& b);

  bool is_constant() const { return terms_.empty(); }
  std::optional<int64_t> constant() const;
  /// The single symbol this is, if it is exactly one symbol.
  std::optional<std::string> as_symbol() const;

  /// The normal form, for analyses that reason about sizes (the checker's
  /// bounds proofs, lang/size_proof.h): the constant, and each non-constant
  /// term as an atom with its coefficient.
  struct Atom {
    enum Kind { Sym, FloorDiv, Min, Max, Mul } kind;
    std::string key;             // canonical text: equal atoms have equal keys
    std::vector<SizeExpr> args;  // FloorDiv: {a}; Min, Max, Mul: {a, b}
    int64_t divisor = 1;         // FloorDiv
  };
  int64_t constant_term() const { return constant_; }
  std::vector<std::pair<Atom, int64_t>> atoms() const;

  /// Evaluates under bindings; throws BindError naming an unbound symbol.
  int64_t eval(const SizeBindings& sizes) const;
  SizeExpr substitute(const std::map<std::string, SizeExpr>& repl) const;
  std::set<std::string> symbols() const;

  /// Canonical text: "B", "2*N + 1", "(H - 9) / 2 + 1", "min(N, M)".
  std::string str() const;
  /// C expression over int64_t variables named after the symbols.
  std::string c_str() const { return str(); }

  friend bool operator==(const SizeExpr& a, const SizeExpr& b);
  friend bool operator!=(const SizeExpr& a, const SizeExpr& b) { return !(a == b); }
  /// A total order on normal forms (for use as a map key).
  friend bool operator<(const SizeExpr& a, const SizeExpr& b) { return a.key() < b.key(); }

  const std::string& key() const;

 private:
  friend struct SizeAtom;
  using Term = std::pair<std::shared_ptr<const SizeAtom>, int64_t>;
  static SizeExpr from_atom(std::shared_ptr<const SizeAtom> atom);
  void normalise();

  int64_t constant_ = 0;
  std::vector<Term> terms_;  // sorted by atom key, no zero coefficients
  mutable std::shared_ptr<std::string> key_;
};

/// a - b when it is a known constant (e.g. N+1 vs N gives 1), else nullopt.
std::optional<int64_t> const_difference(const SizeExpr& a, const SizeExpr& b);
/// True only when a <= b is provable (constant difference, or both constant).
bool provably_le(const SizeExpr& a, const SizeExpr& b);

}  // namespace tenet::ir
