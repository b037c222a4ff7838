/// \file
/// The only way to make IR. Expression builders compute result types and
/// assert (as internal errors) that operand types agree; user-facing type
/// errors are the checker's job, before the IR is built.
///
/// Typing rules:
///   - arithmetic (add sub mul div pow max min, neg, exp...) keeps its operand
///     type; both operands must have the same type; math functions need floats;
///   - comparisons take two operands of one type and give Bool;
///   - and/or/not take and give Bool; select takes Bool and two equal types;
///   - Index and Size expressions are int64; Const carries the type it is given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

Expr make_const(double value, ElemType type);
Expr make_index(const std::string& name);
Expr make_size(const SizeExpr& size);
Expr make_read(const ValuePtr& tensor, std::vector<Affine> indices, bool guarded = false);
/// Whether an int64 index expression of a read stays a computed index: it is
/// not affine, or (unguarded) it is a constant outside a constant extent: a
/// check that sizes compiled in make fail (ir/specialise.h), which its
/// run-time range check reports, where an affine index would read outside
/// the tensor unchecked.
bool stays_computed(const Expr& index, const SizeExpr& extent, bool guarded);
/// A read at int64 index expressions, one per dimension: each that is
/// affine (linear_form, affine.h) becomes an affine index, the others are
/// computed indices (ExprNode::computed), as stays_computed says.
Expr make_read_at(const ValuePtr& tensor, std::vector<Expr> indices, bool guarded = false);
/// A read with affine `indices` where `computed` (empty, or one per
/// dimension) is null, and computed indices elsewhere (those that turn out
/// affine become affine indices, as in make_read_at).
Expr make_read(const ValuePtr& tensor, std::vector<Affine> indices, std::vector<Expr> computed,
               bool guarded);
Expr make_unary(UnOp op, Expr a);
Expr make_binary(BinOp op, Expr a, Expr b);
Expr make_select(Expr cond, Expr then_value, Expr else_value);
Expr make_cast(Expr a, ElemType to);
/// The value a reduction `op` starts from, as a constant of `type`: 0, 1,
/// -inf/+inf for floats, the type's least/largest integer. Null for the one
/// a constant cannot hold: the minimum's start for uint64 (2^64 - 1).
Expr make_identity(ReduceOp op, ElemType type);
/// The operator node `e` (unary, binary, select, cast) rebuilt with new
/// operands, through the make_* functions above; a leaf is returned as is.
Expr with_args(const Expr& e, std::vector<Expr> args);

/// A value made outside a FunctionBuilder: a pass's new tensor (its id and
/// name unique in the function it joins) or a code generator's buffer
/// (id -1: no function defines it).
ValuePtr make_value(int id, std::string name, ElemType type, std::vector<SizeExpr> shape,
                    Span span = {});
/// A copy of `v` with another shape (a view of part of it), layout, or id and name.
ValuePtr with_shape(const ValuePtr& v, std::vector<SizeExpr> shape);
ValuePtr with_layout(const ValuePtr& v, std::vector<int> layout);
ValuePtr renamed(const ValuePtr& v, int id, std::string name);

/// Builds one Function. Values get unique names: the first value named "b" is
/// "b", later ones "b.1", "b.2", ...
///
///   FunctionBuilder fb("squash");
///   fb.size_param("B"); ...
///   auto s = fb.input("s", ElemType::F32, {B, N, D});
///   auto n2 = fb.compute("n2", {{"b", 0, B}, {"n", 0, N}}, {{"d", 0, D}}, ReduceOp::Sum, body);
///   fb.output(v);
///   Function f = fb.finish();   // runs the verifier
class FunctionBuilder {
 public:
  explicit FunctionBuilder(std::string name, Span span = {});

  void size_param(const std::string& name);
  ValuePtr input(const std::string& name, ElemType type, std::vector<SizeExpr> shape,
                 Span span = {});

  /// Appends a Compute statement to the current block (the function body, or
  /// the innermost open loop). The result's shape is the out ranges' extents.
  ValuePtr compute(const std::string& name, std::vector<Dim> out, std::vector<Dim> reduce,
                   ReduceOp op, Expr body, ValuePtr init = nullptr, ElemType type = ElemType::F32,
                   Span span = {}, std::string source = "");
  /// Like compute(), but the result type is the body's type.
  ValuePtr compute_auto(const std::string& name, std::vector<Dim> out, std::vector<Dim> reduce,
                        ReduceOp op, Expr body, ValuePtr init = nullptr, Span span = {},
                        std::string source = "");

  /// Opens a loop: statements added until end_loop() go into its body.
  void begin_loop(const std::string& var, int64_t trip, Span span = {}, std::string source = "");
  /// Declares a tensor carried by the innermost open loop; returns the value to
  /// read inside the loop for the current iteration's state.
  ValuePtr carry(const ValuePtr& init, const std::string& name);
  /// Closes the innermost loop. `next[i]` is the new state of the i-th carry()
  /// (in order); `live_out` are body values used after the loop. Returns the
  /// values visible after the loop: one per carried tensor, then one per live-out.
  std::vector<ValuePtr> end_loop(const std::vector<ValuePtr>& next,
                                 const std::vector<ValuePtr>& live_out);

  /// Declares an output; `name` is its user-facing name (default: the value's
  /// name); `gradient_of`: the input it is the gradient of (Function::gradient_inputs).
  void output(const ValuePtr& v, const std::string& name = "", int gradient_of = -1);
  /// The annotations of the last statement appended to the current block.
  Annotations& annotations();

  /// Returns the function after running the verifier on it.
  Function finish();

  /// A fresh value (not yet defined anywhere); for passes that rebuild statements.
  ValuePtr new_value(const std::string& name, ElemType type, std::vector<SizeExpr> shape,
                     Span span = {});

 private:
  std::vector<Stmt>& block();
  std::string unique_name(const std::string& base);
  /// The base a unique name was made from ("b" for "b.2"); the name itself otherwise.
  const std::string& base_of(const std::string& name) const;

  Function fn_;
  int next_id_ = 0;
  std::map<std::string, int> name_counts_;
  std::map<std::string, std::string> base_of_;     // unique name -> its base, where they differ
  std::vector<std::unique_ptr<Stmt>> open_loops_;  // innermost last
};

}  // namespace tenet::ir
