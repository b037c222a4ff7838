#include "ir/reshape.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ir/builder.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

// ---- element counts as polynomials ------------------------------------------

/// A product of atoms, by canonical key (sorted, with repeats: H*H).
using Monomial = std::vector<std::string>;
/// A polynomial over size atoms; no zero coefficients. Products of size
/// expressions are SizeExpr atoms (B*(C*H) and (B*C)*H differ there), so
/// comparing element counts expands them here.
using Poly = std::map<Monomial, int64_t>;

void add_term(Poly& p, const Monomial& m, int64_t c) {
  int64_t& slot = p[m];
  TENET_ASSERT(!__builtin_add_overflow(slot, c, &slot), "element count overflows");
  if (slot == 0) p.erase(m);
}

Poly times(const Poly& a, const Poly& b) {
  Poly out;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t c = 0;
      TENET_ASSERT(!__builtin_mul_overflow(ca, cb, &c), "element count overflows");
      add_term(out, m, c);
    }
  return out;
}

Poly poly(const SizeExpr& e) {
  Poly p;
  if (e.constant_term() != 0) p[{}] = e.constant_term();
  for (const auto& [atom, coef] : e.atoms()) {
    Poly a;
    if (atom.kind == SizeExpr::Atom::Mul)
      a = times(poly(atom.args[0]), poly(atom.args[1]));
    else
      a[{atom.key}] = 1;
    for (const auto& [m, c] : a) add_term(p, m, c * coef);
  }
  return p;
}

Poly element_count(const std::vector<SizeExpr>& shape, size_t begin, size_t end) {
  Poly p{{{}, 1}};
  for (size_t d = begin; d < end; ++d) p = times(p, poly(shape[d]));
  return p;
}

// ---- the read -----------------------------------------------------------------

Expr i64(const SizeExpr& s) {
  if (auto k = s.constant()) return make_const(double(*k), ElemType::I64);
  return make_size(s);
}

SizeExpr product(const std::vector<SizeExpr>& shape, size_t begin, size_t end) {
  SizeExpr p = 1;
  for (size_t d = begin; d < end; ++d) p = p * shape[d];
  return p;
}

/// The runs of dimensions with equal element counts: boundaries (k, l) where
/// the first k result dimensions hold as many elements as the first l source
/// dimensions, taken greedily (the finest split into runs).
std::vector<std::pair<size_t, size_t>> runs(const std::vector<SizeExpr>& to,
                                            const std::vector<SizeExpr>& from) {
  std::vector<std::pair<size_t, size_t>> bounds{{0, 0}};
  size_t l = 0;
  for (size_t k = 1; k <= to.size() && l < from.size(); ++k) {
    const Poly prefix = element_count(to, 0, k);
    for (size_t m = l + 1; m <= from.size(); ++m)
      if (element_count(from, 0, m) == prefix) {
        bounds.push_back({k, m});
        l = m;
        break;
      }
  }
  if (bounds.back() != std::make_pair(to.size(), from.size()))
    bounds.push_back({to.size(), from.size()});
  return bounds;
}

}  // namespace

bool same_element_count(const std::vector<SizeExpr>& a, const std::vector<SizeExpr>& b) {
  return element_count(a, 0, a.size()) == element_count(b, 0, b.size());
}

std::string element_count_text(const std::vector<SizeExpr>& shape) {
  const Poly p = element_count(shape, 0, shape.size());
  if (p.empty()) return "0";
  std::string text;
  // Highest degree first: "N*T*D + T*D".
  for (auto it = p.rbegin(); it != p.rend(); ++it) {
    const auto& [m, c] = *it;
    std::string term;
    for (const std::string& atom : m) {
      const bool name = std::all_of(atom.begin(), atom.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
      });
      term += (term.empty() ? "" : "*") + (name ? atom : "(" + atom + ")");
    }
    const int64_t magnitude = c < 0 ? -c : c;
    if (term.empty())
      term = std::to_string(magnitude);
    else if (magnitude != 1)
      term += "*" + std::to_string(magnitude);
    if (text.empty())
      text = (c < 0 ? "-" : "") + term;
    else
      text += (c < 0 ? " - " : " + ") + term;
  }
  return text;
}

Expr reshape_read(const ValuePtr& source, const std::vector<Dim>& out) {
  std::vector<SizeExpr> to;
  for (const Dim& d : out) to.push_back(d.hi);
  const std::vector<SizeExpr>& from = source->shape;
  TENET_ASSERT(same_element_count(to, from), "reshape of " << source->name << " changes its size");
  std::vector<Expr> at(from.size());
  const auto bounds = runs(to, from);
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    const auto [k0, l0] = bounds[r];
    const auto [k1, l1] = bounds[r + 1];
    // The run's row-major position among the result's indices k0..k1.
    Expr pos;
    for (size_t k = k0; k < k1; ++k) {
      Expr index = make_index(out[k].index);
      pos = pos ? make_binary(BinOp::Add, make_binary(BinOp::Mul, pos, i64(to[k])), index) : index;
    }
    if (!pos) pos = make_const(0, ElemType::I64);  // only size-1 source dimensions
    // Taken apart over the source's dimensions l0..l1. The first needs no
    // '%' (pos is below the run's count) and the last no '/'.
    for (size_t l = l0; l < l1; ++l) {
      const SizeExpr stride = product(from, l + 1, l1);
      Expr index = pos;
      if (stride != SizeExpr(1)) index = make_binary(BinOp::Div, index, i64(stride));
      if (l > l0) index = make_binary(BinOp::Rem, index, i64(from[l]));
      at[l] = index;
    }
  }
  return make_read_at(source, std::move(at));
}

}  // namespace tenet::ir
