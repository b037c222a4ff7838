/// \file
/// The Tenet IR: comprehension statements over explicit iteration domains, in
/// SSA form.
///
/// A Function has size parameters, input tensors, a body and outputs. Every
/// tensor is a Value defined exactly once: as an input, as the result of a
/// Compute statement, or by a Loop (its carried parameters and results).
/// A Compute statement defines
///
///     result(out...) [op]= body      for out in out-ranges, reduce in reduce-ranges
///
/// where `op` is None (plain assignment), Sum, Max, Min or Prod. A reduction
/// starts from the identity of its op (0, -inf, +inf, 1), or from the values of `init`
/// when given (this is how `+=` onto an existing tensor and AD's adjoint
/// accumulation are written, without a separate zero-fill).
///
/// Values and expressions are immutable and shared (shared_ptr<const>); a pass
/// that changes one builds a new one. Statements are plain containers that a
/// pass may rewrite. Build IR only through builder.h; verify.h checks the
/// invariants below after every pass:
///   - every Value is defined once and read only where it is in scope;
///   - a Compute's out ranges are [0, result.shape[i]) in order; reduce ranges
///     are non-overlapping with out indices; op None has no reduce ranges;
///   - a Read has one index per tensor dimension, over indices of the
///     enclosing domain or enclosing loop variables: affine, or (a computed
///     index) any int64 expression that is not affine, e.g. one that reads an
///     integer tensor (`LUT(I(i, k), j)`) or divides (`x(i % 4)`);
///   - expression types agree (see the builders).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/annotations.h"
#include "ir/size_expr.h"
#include "support/diagnostics.h"
#include "support/types.h"

namespace tenet::ir {

/// A tensor in SSA form. Rank 0 is a scalar.
struct Value {
  int id = -1;       // unique within a function
  std::string name;  // unique within a function: the source name, "name.1" for later versions
  ElemType type = ElemType::F32;
  std::vector<SizeExpr> shape;
  /// Storage order of dimensions, outermost first; empty means row-major.
  /// The language never sets it; layout passes and code generators may.
  std::vector<int> layout;
  Span span;  // where the source defined it, if anywhere

  int rank() const { return int(shape.size()); }
};
using ValuePtr = std::shared_ptr<const Value>;

/// An affine index: sum(coef * index) + offset. Offsets may be symbolic (N - 1).
struct Affine {
  std::vector<std::pair<std::string, int64_t>> terms;  // no zero coefficients, no repeats
  SizeExpr offset;

  static Affine var(const std::string& index) { return Affine{{{index, 1}}, SizeExpr(0)}; }
  bool is_plain_var() const {
    return terms.size() == 1 && terms[0].second == 1 && offset == SizeExpr(0);
  }
  int64_t coef(const std::string& index) const;
  std::string str() const;  // "2*y + ky", "i - 1", "0"
};

/// Unary operations. From Rsqrt to Cbrt: the <cmath> functions Tensor
/// Comprehensions allows (rsqrt is 1 / sqrt), floats only, as is every
/// operation but Neg, Not and Abs. Sign is -1, 0 or 1 (NaN stays NaN, as
/// torch.sign); StopGradient is the identity that reverse-mode AD treats as
/// a constant (PyTorch's detach).
enum class UnOp {
  Neg,
  Not,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Abs,
  Rsqrt,
  Floor,
  Ceil,
  Round,
  Trunc,
  Rint,
  Exp2,
  Log2,
  Log10,
  Log1p,
  Expm1,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Erf,
  Erfc,
  Cbrt,
  Sign,
  StopGradient
};
/// Binary operations. Atan2, Hypot, Copysign, Nextafter (as in <cmath>) and
/// Pow take floats; Rem (the remainder of integer division, truncating like
/// C's %) takes integers.
enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Atan2,
  Hypot,
  Copysign,
  Nextafter,
  Rem
};
const char* op_name(UnOp op);   // "neg", "exp", ... (IR text form and C++ helper names)
const char* op_name(BinOp op);  // "add", "pow", "max", "lt", ...
bool is_comparison(BinOp op);   // Lt..Ne
bool is_logical(BinOp op);      // And, Or
bool floats_only(BinOp op);     // Pow, Atan2, Hypot, Copysign, Nextafter

enum class ExprKind { Const, Index, Size, Read, Unary, Binary, Select, Cast };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  /// A Read with at least one computed index.
  bool has_computed_index() const { return !computed.empty(); }
  /// Whether dimension d of a Read has a computed index.
  bool is_computed(size_t d) const { return !computed.empty() && computed[d] != nullptr; }

  ExprKind kind;
  ElemType type;
  double value = 0;             // Const
  std::string index;            // Index: a domain index or an enclosing loop variable (int64)
  SizeExpr size;                // Size: a size parameter expression used as a value (int64)
  ValuePtr tensor;              // Read
  std::vector<Affine> indices;  // Read
  /// Read: empty when every index is affine, else one entry per dimension:
  /// a computed index (a non-affine int64 expression; indices[d] is then 0
  /// and means nothing) or null where indices[d] is the index. Build reads
  /// through make_read_at, which puts each index in its form.
  std::vector<Expr> computed;
  bool guarded = false;  // Read: out-of-bounds positions read as 0
  UnOp unop = UnOp::Neg;
  BinOp binop = BinOp::Add;
  std::vector<Expr> args;  // Unary: 1, Binary: 2, Select: 3 (cond, then, else), Cast: 1
};

/// One index of an iteration domain: index in [lo, hi).
struct Dim {
  std::string index;
  SizeExpr lo;
  SizeExpr hi;
  SizeExpr extent() const { return hi - lo; }
};

enum class ReduceOp { None, Sum, Max, Min, Prod };
const char* op_name(ReduceOp op);  // "assign", "sum", "max", "min", "prod"

struct Compute {
  ValuePtr result;
  std::vector<Dim> out;     // one per result dimension: [0, result->shape[i])
  std::vector<Dim> reduce;  // empty unless op != None
  ReduceOp op = ReduceOp::None;
  ValuePtr init;  // optional; same type and shape as result; op != None
  Expr body;
};

struct Stmt;

/// A loop with a constant trip count. Each carried tensor enters iteration 0
/// as `init`, is visible inside as `param`, leaves an iteration as `next`
/// (which becomes `param` of the following one) and after the loop as
/// `result`. A live-out has no init/param: `result` is `next` of the last
/// iteration (a tensor computed in the body and used after the loop).
struct Loop {
  struct Carried {
    ValuePtr init;   // null for a live-out
    ValuePtr param;  // null for a live-out
    ValuePtr next;
    ValuePtr result;
  };
  std::string var;  // usable in the body's expressions as an int64 Index
  int64_t trip = 0;
  std::vector<Carried> carried;
  std::vector<Stmt> body;
};

enum class StmtKind { Compute, Loop };

struct Stmt {
  StmtKind kind = StmtKind::Compute;
  Compute compute;             // kind == Compute
  std::shared_ptr<Loop> loop;  // kind == Loop (deep-copied by Function::clone)
  Span span;
  /// The source statement, for comments in printed IR and generated code.
  std::string source;
  /// What passes record for later passes and code generators (annotations.h).
  Annotations annotations;
};

struct Function {
  std::string name;
  std::vector<std::string> size_params;  // every symbol that can occur in shapes and ranges
  std::vector<ValuePtr> inputs;
  std::vector<ValuePtr> outputs;  // each an input or a value defined at top level
  /// The name each output has for users (the source name; ABI parameter,
  /// .npy file and CLI report names). An SSA value may be "v.1" while its
  /// output name is "v". Same length as outputs; unique; not an input's name.
  std::vector<std::string> output_names;
  std::vector<Stmt> body;
  Span span;

  /// The input that output `i` updates, or -1. An output whose user-facing
  /// name is the name of an input other than its own value *updates* it: the
  /// caller supplies the output with its initial value, the input (TC's
  /// accumulation into an output, `y(i) += x(i)` with y a declared output).
  /// The two have the same type and shape; the C ABI passes them as one
  /// buffer (codegen/cpp.h), while interpreters and loaders take the initial
  /// value among the inputs and return the final one among the outputs.
  int updated_input(size_t i) const;

  /// Per output, the input it is the gradient of, or -1; empty when no
  /// output is a gradient. Reverse-mode AD sets it for the gradients it
  /// derives (ad/grad.h; differentiating again marks only the new ones);
  /// passes keep it, the printed IR carries it (`return %d_x gradient of
  /// %x`). Callers find gradients here, never by their names: a gradient is
  /// usually named `d_<input>`, but not when that name is taken.
  std::vector<int> gradient_inputs;
  /// The input whose gradient output `i` is, or -1.
  int gradient_of(size_t i) const;
  /// The output holding the gradient of input `k`, or -1.
  int gradient_output(size_t k) const;

  /// A copy whose loops are not shared with this one (Values and Exprs are
  /// immutable and stay shared).
  Function clone() const;
};

struct Module {
  std::vector<Function> functions;
  const Function* find(const std::string& name) const;
  Function* find(const std::string& name);
};

}  // namespace tenet::ir
