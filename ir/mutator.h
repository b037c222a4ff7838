/// \file
/// Walking and rewriting IR: override what you care about, the rest recurses.
///
/// ExprVisitor visits an expression tree (one virtual per node kind; the
/// default visits the operands, left to right). ExprMutator rebuilds one:
/// each node kind has a virtual whose default mutates the operands and
/// rebuilds the node through the builder only when one changed, so a
/// mutation that changes nothing returns the same Expr and untouched
/// subtrees stay shared. A read's tensor and indices go through
/// mutate_tensor and mutate_affine. StmtMutator rewrites a block of
/// statements, loop bodies included.
///
///   struct Rename : ExprMutator {          // every read of a becomes a read of b
///     ValuePtr a, b;
///     ValuePtr mutate_tensor(const ValuePtr& t) override { return t == a ? b : t; }
///   };
///   Expr e2 = Rename{...}.mutate(e);
///
/// For one-off walks: for_each_node, any_node, reads_of, and transform (a
/// function answering for the nodes it replaces).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  /// Calls the visit_* of e's kind.
  void visit(const Expr& e);

 protected:
  virtual void visit_const(const Expr&) {}
  virtual void visit_index(const Expr&) {}
  virtual void visit_size(const Expr&) {}
  /// By default visits the computed indices (the affine ones hold no node).
  virtual void visit_read(const Expr& e);
  virtual void visit_unary(const Expr& e) { visit_args(e); }
  virtual void visit_binary(const Expr& e) { visit_args(e); }
  virtual void visit_select(const Expr& e) { visit_args(e); }
  virtual void visit_cast(const Expr& e) { visit_args(e); }
  /// Visits the operands, left to right.
  void visit_args(const Expr& e);
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  /// Calls the mutate_* of e's kind (an override may answer for some nodes
  /// first: return ExprMutator::mutate(e) for the others).
  virtual Expr mutate(const Expr& e);

 protected:
  virtual Expr mutate_const(const Expr& e) { return e; }
  virtual Expr mutate_index(const Expr& e) { return e; }
  virtual Expr mutate_size(const Expr& e) { return e; }
  /// The read with its tensor and indices mutated (same guard): affine
  /// indices through mutate_affine, computed ones through mutate.
  virtual Expr mutate_read(const Expr& e);
  virtual Expr mutate_unary(const Expr& e) { return mutate_args(e); }
  virtual Expr mutate_binary(const Expr& e) { return mutate_args(e); }
  virtual Expr mutate_select(const Expr& e) { return mutate_args(e); }
  virtual Expr mutate_cast(const Expr& e) { return mutate_args(e); }
  virtual ValuePtr mutate_tensor(const ValuePtr& tensor) { return tensor; }
  virtual Affine mutate_affine(const Affine& index) { return index; }
  /// `e` with its operands mutated, rebuilt (with_args) only if one changed.
  Expr mutate_args(const Expr& e);
  /// The indices mutated; `changed` is set when one of them changed.
  std::vector<Affine> mutate_indices(const std::vector<Affine>& indices, bool& changed);
};

/// Rewrites the statements of a block and of the loops inside it, in order.
/// mutate() appends what replaces a statement to `out`; by default a compute
/// is kept and a loop is kept with its body mutated (enter_loop and
/// leave_loop around it).
class StmtMutator {
 public:
  virtual ~StmtMutator() = default;
  void mutate_block(std::vector<Stmt>& body);

 protected:
  virtual void mutate_compute(Stmt& s, std::vector<Stmt>& out) { out.push_back(std::move(s)); }
  virtual void mutate_loop(Stmt& s, std::vector<Stmt>& out);
  virtual void enter_loop(const Loop&) {}
  virtual void leave_loop(const Loop&) {}
};

/// Calls `fn` on every statement of `body` and of the loops inside it,
/// a loop before its body.
void for_each_stmt(const std::vector<Stmt>& body, const std::function<void(const Stmt&)>& fn);

/// Calls `fn` on every node of `e`, a node before its operands, left to right
/// (a read's operands are its computed indices).
void for_each_node(const Expr& e, const std::function<void(const Expr&)>& fn);
/// Whether `pred` holds for some node of `e`.
bool any_node(const Expr& e, const std::function<bool(const Expr&)>& pred);
/// Whether finite operands always give a finite value: no division or
/// remainder, pow, log (any base, log1p), sqrt, rsqrt, tan, asin or acos (no
/// pole or domain error). AD leaves out a guard that a guarded
/// factor implies only then (ad/gather.cpp), and codegen narrows loops by it
/// (codegen/loop_bounds.cpp).
bool is_total(const Expr& e);
/// Whether `e` depends on one of `indices`: as a value, or in the affine
/// index of a read (computed indices included).
bool mentions_index(const Expr& e, const std::set<std::string>& indices);
/// Every read of `e` (of `tensor` only, if given), in evaluation order.
std::vector<Expr> reads_of(const Expr& e, const Value* tensor = nullptr);

/// The conjuncts of an `and` tree, left to right (`e` alone when it is not an `and`).
std::vector<Expr> conjuncts(const Expr& e);

/// `e` with every node `replace` answers for (non-null) replaced, top-down
/// (a replacement is not visited again); other nodes are rebuilt only where
/// an operand changed.
Expr transform(const Expr& e, const std::function<Expr(const Expr&)>& replace);

/// `e` with every read of a tensor in `to` reading its replacement instead.
Expr replace_tensors(const Expr& e, const std::map<const Value*, ValuePtr>& to);

/// `e` with each index that has an entry in `indices` replaced by its affine
/// form, simultaneously: in reads' indices and where the index is a value
/// (as ir::affine_value). The one substitution of indices in expressions.
Expr substitute(const Expr& e, const std::map<std::string, Affine>& indices);

}  // namespace tenet::ir
