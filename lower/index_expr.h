/// \file
/// Typed int64 expressions for loop bounds, steps and index locals
/// (lower/loops.h), and the ranges of the indices in scope that the analyses
/// of lower/ reason with (loop_bounds.h, index_range.h).
///
/// For every backend (lower/README.md): a printer turns an IndexExpr into its
/// language (an Extent is the tensor's extent as the backend names it, a
/// Variable the name it gave the variable, an Affine uses the variables the
/// enclosing loops bind to those IR indices).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::lower {

/// The range [lo, hi) of an index in scope.
struct IndexRange {
  ir::SizeExpr lo, hi;
};
/// Keyed by the IR index name.
using IndexRanges = std::map<std::string, IndexRange>;

/// A variable of the loop tree (a loop index or a local). `hint` is a name of
/// the program (an index, "k_tile") or, when `generated`, one the tree makes
/// up ("acc", "gemm_m"); printers make it unique within its NameScope.
struct Var {
  int id = -1;
  std::string hint;
  bool generated = false;
  /// An accumulator of `accumulates`: named "acc" (or after its result when
  /// `sibling`: statements of one nest), never shadowing a function-level name.
  const ir::Value* accumulates = nullptr;
  bool sibling = false;
  bool valid() const { return id >= 0; }
};

struct IndexNode;
using IndexExpr = std::shared_ptr<const IndexNode>;

enum class IndexKind {
  Const,     // value
  Size,      // size: an expression of the size parameters
  Extent,    // dimension `dim` of `tensor`, as the backend names its extent
  Variable,  // var
  Affine,    // affine: of the IR indices bound where it is used
  Value,     // value_expr: an int64 IR expression (data-dependent bounds)
  Add,
  Sub,
  Mul,
  Div,       // truncating division of a non-negative value
  FloorDiv,  // rounding down
  CeilDiv,   // rounding up
  Max,       // of args, nested left to right
  Min,
};

struct IndexNode {
  IndexKind kind = IndexKind::Const;
  int64_t value = 0;
  ir::SizeExpr size;
  const ir::Value* tensor = nullptr;
  int dim = 0;
  Var var;
  ir::Affine affine;
  ir::Expr value_expr;
  std::vector<IndexExpr> args;
};

namespace ix {
IndexExpr constant(int64_t v);
IndexExpr size(const ir::SizeExpr& s);
IndexExpr extent(const ir::Value* tensor, int dim);
IndexExpr var(const Var& v);
IndexExpr affine(const ir::Affine& a);
IndexExpr value(const ir::Expr& e);
IndexExpr binary(IndexKind kind, IndexExpr a, IndexExpr b);
/// Max or Min of `args` (one argument: itself).
IndexExpr fold(IndexKind kind, std::vector<IndexExpr> args);
}  // namespace ix

/// The expression in the notation of `tenet print --stage loops`; `name`
/// gives a variable's printed name.
std::string print(const IndexExpr& e, const std::vector<std::string>& names);

}  // namespace tenet::lower
