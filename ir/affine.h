/// \file
/// The algebra of affine index forms: `sum(coef * index) + offset` with
/// int64 coefficients and a symbolic offset (ir::Affine, ir.h). Every pass,
/// AD and codegen reason about index expressions with these functions.
///
/// Terms keep the order in which indices first appear (`a + b` lists a's
/// indices, then b's new ones) and never hold a zero coefficient, so printed
/// indices read as written; equality ignores that order.
///
/// When an int64 expression is affine (linear_form): indices, sizes, integer
/// constants, +, -, negation, and products where one side has no index (a
/// size expression) and either that side is a constant or neither side has
/// an index. So `2*i`, `N*M + i` and `(H - 1)*W` are affine, `N*i` and `i*j`
/// are not. A product of sizes is a size expression like any other (SizeExpr
/// keeps such products exactly), so it may be an offset; only coefficients
/// must be constants, because bounds reasoning (ceil/floor division by a
/// coefficient, its sign) needs them known. (passes/index_facts.cpp used to
/// reject every product of non-constants, codegen/loop_bounds.cpp accepted
/// products of sizes; the second rule is the one kept.)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

/// The affine form with no index: just `offset`.
Affine affine_const(const SizeExpr& offset);

Affine operator+(const Affine& a, const Affine& b);
Affine operator-(const Affine& a, const Affine& b);
Affine operator-(const Affine& a);
Affine operator*(const Affine& a, int64_t factor);

/// The same linear function (terms in any order).
bool equal(const Affine& a, const Affine& b);
/// The same terms in the same order and the same offset (what prints the same).
bool identical(const Affine& a, const Affine& b);
/// Whether any index of `indices` has a nonzero coefficient.
bool mentions(const Affine& a, const std::set<std::string>& indices);
/// The terms sorted by index name (a canonical order).
Affine sorted(Affine a);

/// Each index with an entry in `repl` replaced by its affine form,
/// simultaneously (replacements are not rewritten again). Terms of a
/// replacement take the replaced index's place in the order.
Affine substitute(const Affine& a, const std::map<std::string, Affine>& repl);
std::vector<Affine> substitute(const std::vector<Affine>& indices,
                               const std::map<std::string, Affine>& repl);

/// The affine form `x` with `a` at `x`'s `index` equal to `target`: solves
/// `a = target` for `index`, whose coefficient in `a` must be 1 or -1.
Affine solve(const Affine& a, const std::string& index, const Affine& target);

/// The affine form of an int64 expression, when it has one (see above).
std::optional<Affine> linear_form(const Expr& e);
/// A comparison (lt, le, gt, ge) of two affine int64 expressions as `f >= 0`
/// (on integers `a < b` is `b - a - 1 >= 0`); eq, ne and others give nullopt.
std::optional<Affine> nonnegative_form(const Expr& cmp);

/// A size expression as an affine form in `indices` (symbols of `e` that
/// are indices), terms in the order of `indices`, the rest of `e` as the
/// offset. nullopt when `e` is not affine in them (`n*N`, `n*n`, `min(n, 1)`);
/// then `why` (if given) says so: "index expression is not affine in 'n'".
std::optional<Affine> affine_in(const SizeExpr& e, const std::vector<std::string>& indices,
                                std::string* why = nullptr);

/// The int64 value of an affine form, as one would write it by hand:
/// `h - 2*i`, `-k`, `i + (N - 1)`, `g - 2*S`.
Expr affine_value(const Affine& a);

/// The int64 value of dimension d's index of a read: its computed index, or
/// affine_value of its affine one.
Expr index_value(const ExprNode& read, size_t d);
/// For an int64 + - * / % or negation inside a computed index, the operator
/// runtime/tenet_index.h's exact_index_step computes ('~' for negation), which
/// both backends check instead of wrapping; 0 for any other node.
char index_step_op(const ExprNode& e);
/// Every index of a read as an int64 value (index_value of each dimension).
std::vector<Expr> index_values(const ExprNode& read);

/// One plain index per dim: (d0.index, d1.index, ...), how a Compute's
/// result is read at its own out indices.
std::vector<Affine> plain_indices(const std::vector<Dim>& dims);

}  // namespace tenet::ir
