/// \file
/// Expression helpers shared by the AD files (internal to ad/); affine
/// indices use ir/affine.h.
///
/// The arithmetic constructors fold constants and the identities x*1, x*0,
/// x+0, x-0, --x and pow(x, 1), so derivative expressions print the way one
/// would write them by hand (`d * w`, not `1 * d * w + 0`). Folding x*0 to 0
/// drops a NaN that x might carry; that is what every AD system does.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace tenet::ad {

ir::Expr constant(double value, ElemType type);
/// True when `e` is a constant equal to `value`.
bool is_constant(const ir::Expr& e, double value);

ir::Expr add(ir::Expr a, ir::Expr b);
ir::Expr sub(ir::Expr a, ir::Expr b);
ir::Expr mul(ir::Expr a, ir::Expr b);
ir::Expr div(ir::Expr a, ir::Expr b);
ir::Expr neg(ir::Expr a);
ir::Expr pow(ir::Expr a, ir::Expr b);
/// select(cond, a, b), folded when both branches are the same constant.
ir::Expr select(ir::Expr cond, ir::Expr a, ir::Expr b);
/// a && b where either may be null (null means "true").
ir::Expr both(ir::Expr a, ir::Expr b);

/// A rewrite of an expression: tensors replaced by other tensors, indices
/// replaced by affine expressions (in reads and in index values), reads that
/// mention one of `guard_indices` (before substitution) made guarded, and,
/// with `float_type`, float constants and casts to floats retyped.
struct Rewrite {
  std::map<const ir::Value*, ir::ValuePtr> values;
  std::map<std::string, ir::Affine> indices;
  std::set<std::string> guard_indices;
  std::optional<ElemType> float_type;
  /// Indices known to lie in [0, extent): a read whose every (rewritten)
  /// index is one of them, over a dimension of that extent, needs no guard.
  std::map<std::string, ir::SizeExpr> bounded;
};
ir::Expr rewrite(const ir::Expr& e, const Rewrite& rw);

/// The factors of a product (a * b * c gives a, b, c; anything else is one factor).
std::vector<ir::Expr> factors(const ir::Expr& e);

/// "b.2" -> "b": the source name of a value (later versions are "name.N").
std::string stem(const std::string& name);

}  // namespace tenet::ad
