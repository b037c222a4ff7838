// Stage map_kernels (kernels.h): host code and kernels of a loop tree.
#include "lower/kernels.h"

#include <utility>

#include "lower/kernel_groups.h"
#include "lower/kernel_nodes.h"
#include "support/error.h"

namespace tenet::lower {

namespace {

using namespace kernel_nodes;

/// Whether `n` (or a node inside it) must run on the host: a library call,
/// the loop of an ir::Loop statement, or an index check that fails the call.
bool needs_host(const Node& n) {
  if (n.kind == NodeKind::Call || n.kind == NodeKind::CarriedLoop) return true;
  for (const Node& c : n.body)
    if (needs_host(c)) return true;
  for (const Node& c : n.orelse)
    if (needs_host(c)) return true;
  return false;
}

/// Whether a parallel loop is inside `n` (outside any other loop).
bool holds_parallel(const Node& n) {
  if (n.kind == NodeKind::For) return n.loop_kind == LoopKind::Parallel;
  if (!is_container(n)) return false;
  for (const Node& c : n.body)
    if (holds_parallel(c)) return true;
  return false;
}

/// The next loop of a kernel's grid inside `body`: the one independent loop
/// it runs, when everything else it runs is a local or a remark (which every
/// thread then runs again), looking into statement regions and name scopes.
Node* next_grid_loop(Block& body) {
  Node* n = only_node(body);
  if (!n) return nullptr;
  if (n->kind == NodeKind::For && n->independent && is_rectangular_loop(*n)) return n;
  if (is_container(*n) && !n->resume) return next_grid_loop(n->body);
  return nullptr;
}

class KernelMapper {
 public:
  KernelMapper(LoopTree& tree, const KernelOptions& options) : tree_(tree), options_(options) {}

  /// Maps a block that runs on the host; `locals` are the locals declared on
  /// the host side around it, which its kernels declare again.
  void host_block(Block& block, std::vector<Node> locals) {
    Block out;
    Block run;              // consecutive device code: one kernel of one thread
    size_t run_locals = 0;  // the locals declared before the run
    auto flush = [&] {
      if (run.empty()) return;
      const std::vector<Node> before(locals.begin(), locals.begin() + long(run_locals));
      out.push_back(kernel(before, std::move(run), false));
      run.clear();
    };
    for (Node& n : block) {
      if (is_local(n)) {
        locals.push_back(n);
        if (!run.empty()) run.push_back(std::move(n));
        continue;
      }
      if (is_remark(n) && run.empty()) {
        out.push_back(std::move(n));
        continue;
      }
      if (is_remark(n)) {
        run.push_back(std::move(n));
        continue;
      }
      if (needs_host(n) || holds_parallel(n)) {
        flush();
        out.push_back(host_node(std::move(n), locals));
        continue;
      }
      if (n.kind == NodeKind::CheckNonEmpty || n.kind == NodeKind::RaiseIndexFault) {
        flush();
        out.push_back(std::move(n));
        continue;
      }
      const bool alone = is_group_reduction(n);  // a kernel of its own, grouped
      if (alone) flush();
      if (run.empty()) run_locals = locals.size();
      run.push_back(std::move(n));
      if (alone) flush();
    }
    flush();
    block = std::move(out);
  }

 private:
  /// A node that runs on the host or holds a parallel loop.
  Node host_node(Node n, const std::vector<Node>& locals) {
    switch (n.kind) {
      case NodeKind::For:
        if (n.loop_kind == LoopKind::Parallel && !needs_host(n) && is_rectangular_loop(n)) {
          Block body;
          body.push_back(std::move(n));
          return kernel(locals, std::move(body), true);
        }
        // A loop around library calls (small GEMMs one per thread on a
        // CPU): the host runs it, its body maps as host code.
        n.loop_kind = LoopKind::Serial;
        n.parallel.reset();
        host_block(n.body, locals);
        return n;
      case NodeKind::Call:
        for (auto& [stmt, nested] : n.nested) host_block(nested, locals);
        return n;  // a GEMM's calls and the loops around them run on the host
      case NodeKind::CarriedLoop:
      case NodeKind::Statement:
      case NodeKind::NameScope:
      case NodeKind::Scope:
        host_block(n.body, locals);
        return n;
      default:
        TENET_UNREACHABLE("map_kernels: a node that must run on the host holds device code");
    }
  }

  /// A kernel running `body` after the host's `locals`; `grid`: body is one
  /// parallel loop, which its threads cover (else one thread runs it).
  Node kernel(const std::vector<Node>& locals, Block body, bool grid) {
    Node k;
    k.kind = NodeKind::Kernel;
    k.var = fresh_var(tree_, "thread");
    k.count = options_.threads_per_block;
    std::vector<Node*> chain;
    for (Node* loop = grid ? &body.front() : nullptr; loop; loop = next_grid_loop(loop->body))
      chain.push_back(loop);
    IndexExpr inner;  // the product of the extents inside the current loop
    for (size_t i = chain.size(); i-- > 0;) {
      Node& loop = *chain[i];
      loop.loop_kind = LoopKind::GpuThread;
      loop.parallel.reset();
      loop.grid_stride = inner ? inner : ix::constant(1);
      inner = product(extent_of(loop), inner);
    }
    k.end = inner ? inner : ix::constant(1);
    k.body = locals;
    for (Node& n : body) k.body.push_back(std::move(n));
    group_reduction(k, tree_);
    return k;
  }

  LoopTree& tree_;
  const KernelOptions& options_;
};

}  // namespace

void map_kernels(LoopTree& tree, const KernelOptions& options) {
  TENET_ASSERT(tree.built, "map_kernels runs on a tree lower_loops built");
  KernelMapper(tree, options).host_block(tree.body, {});
}

}  // namespace tenet::lower
