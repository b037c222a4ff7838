/// \file
/// Small facts about loop-tree nodes that the GPU mapping (lower/kernels.h,
/// lower/kernel_groups.h) asks: what a thread may run again, what holds
/// other nodes, which bounds are the same for every thread.
#pragma once

#include <utility>

#include "lower/loop_tree.h"

namespace tenet::lower::kernel_nodes {

inline bool is_remark(const Node& n) {
  return n.kind == NodeKind::Blank || n.kind == NodeKind::Comment || n.kind == NodeKind::Note;
}

/// A local every thread may compute again (declares, writes no tensor).
inline bool is_local(const Node& n) {
  return n.kind == NodeKind::Let || n.kind == NodeKind::Array;
}

/// The one node of `block` that is neither a remark nor a local (which a
/// thread may run again around it); null when there is none or several.
inline Node* only_node(Block& block) {
  Node* found = nullptr;
  for (Node& n : block) {
    if (is_remark(n) || is_local(n)) continue;
    if (found) return nullptr;
    found = &n;
  }
  return found;
}

inline bool is_container(const Node& n) {
  return n.kind == NodeKind::Statement || n.kind == NodeKind::NameScope ||
         n.kind == NodeKind::Scope;
}

/// Bounds of sizes and extents only: the same for every thread.
inline bool is_rectangular(const IndexExpr& e) {
  if (!e) return true;
  if (e->kind == IndexKind::Variable || e->kind == IndexKind::Affine || e->kind == IndexKind::Value)
    return false;
  for (const IndexExpr& a : e->args)
    if (!is_rectangular(a)) return false;
  return true;
}

/// A loop by 1 over rectangular bounds, run serially or shared out.
inline bool is_rectangular_loop(const Node& n) {
  return n.kind == NodeKind::For && !n.step && is_rectangular(n.first) && is_rectangular(n.end) &&
         (n.loop_kind == LoopKind::Parallel || n.loop_kind == LoopKind::Serial);
}

/// Whether `e` is the constant 0.
inline bool is_zero(const IndexExpr& e) {
  return (e->kind == IndexKind::Const && e->value == 0) ||
         (e->kind == IndexKind::Size && e->size.constant() == 0);
}

inline IndexExpr extent_of(const Node& loop) {
  if (is_zero(loop.first)) return loop.end;
  return ix::binary(IndexKind::Sub, loop.end, loop.first);
}

/// a * b; `a` alone when `b` is null.
inline IndexExpr product(IndexExpr a, IndexExpr b) {
  if (!b) return a;
  return ix::binary(IndexKind::Mul, std::move(a), std::move(b));
}

/// A fresh generated variable of `tree`.
inline Var fresh_var(LoopTree& tree, const std::string& hint) {
  Var v;
  v.id = tree.vars++;
  v.hint = hint;
  v.generated = true;
  return v;
}

}  // namespace tenet::lower::kernel_nodes
