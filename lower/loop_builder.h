/// \file
/// The builder of the loop tree (lower/loops.h), shared by the files that
/// build its parts: loops.cpp (blocks, nests, shared loops, parallel work),
/// loops_statement.cpp (one scheduled statement), loops_jam.cpp (jammed
/// tiles), loops_lanes.cpp (vector lanes), loops_peel.cpp (borders and
/// interiors), loops_hoist.cpp (values hoisted out of loops), loops_calls.cpp
/// (the loops a library call's statement runs).
///
/// Internal to lower/.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lower/loop_bounds.h"
#include "lower/loops.h"
#include "lower/peel.h"
#include "lower/schedule.h"

namespace tenet::lower::detail {

/// Appends nodes where the code being built is: open() enters a node's body
/// until close(), as a printer opens and closes braces.
class Cursor {
 public:
  explicit Cursor(Block& root) : stack_{&root} {}
  Node& add(Node n) {
    stack_.back()->push_back(std::move(n));
    return stack_.back()->back();
  }
  void open(Node n) {
    Node& at = add(std::move(n));
    stack_.push_back(&at.body);
  }
  /// After the body of an If: its else branch.
  void open_else() {
    stack_.pop_back();
    stack_.push_back(&stack_.back()->back().orelse);
  }
  void close(size_t n = 1) {
    for (size_t k = 0; k < n; ++k) stack_.pop_back();
  }
  void note(const std::string& text);
  void blank();

 private:
  std::vector<Block*> stack_;
};

// Nodes, made in one step.
Node assign_node(Place target, Operand source, ir::ReduceOp op, ElemType compute);
Node array_node(const Var& v, ElemType type, bool wide, int64_t count);
/// A scalar local (an accumulator): `type` (double when `wide`), starting as `source`.
Node local_node(const Var& v, ElemType type, bool wide, Operand source);
Node let_index(const Var& v, IndexExpr value);
Place local_place(const Var& v, IndexExpr at = nullptr);
Operand expr_operand(const ir::Expr& e);
Operand load(Place p);
/// The region of statement `s` (its indices bound by the caller), with its
/// computed indices checked when `check`.
Node statement_region(const ir::Stmt& s, bool check);

/// What the builder knows where a statement is built: the ranges of the
/// indices in scope, and what is hoisted there already.
struct Context {
  IndexRanges ranges;
  bool check_indices = false;
  std::string statement;  // the statement being built (names its hoisted locals in a nest)
  bool statement_local_names = false;
  std::set<const ir::ExprNode*> hoisted_values;
  std::set<std::pair<const ir::ExprNode*, size_t>> hoisted_indices;
  void bind(const Binding& b) { ranges[b.index] = IndexRange{b.lo, b.hi}; }
};

struct JamParts;  // loops_jam.cpp

/// A statement with its loop schedule, the bounds its guard gives its
/// reduce loops, and its peel.
struct Scheduled {
  const ir::Stmt* stmt = nullptr;
  LoopSchedule schedule;  // `shared`: loops shared with the previous member
  GuardBounds guard;
  std::optional<Peel> peel;
  GuardBounds interior_guard;  // `guard` of the interior's body
};

class LoopBuilder {
 public:
  LoopBuilder(const LoweredFunction& lowered, const LoopOptions& options, LoopTree& tree)
      : lowered_(lowered), options_(options), tree_(tree) {}

  /// The live statements of `body` in nests, each after its checks.
  void block(Cursor& out, const std::vector<ir::Stmt>& body, const Context& ctx);
  /// One statement that runs as loops, alone in its nest.
  void loop_nest(Cursor& out, const ir::Stmt& s, const Context& ctx);

 private:
  // loops.cpp
  Var fresh(const std::string& hint, bool generated = false);
  /// A fresh variable for each of `dims`, bound in `region` in order.
  std::vector<Var> bind_fresh(Node& region, const std::vector<ir::Dim>& dims);
  void compute(Cursor& out, const ir::Stmt& s, const Context& ctx);
  void carried_loop(Cursor& out, const ir::Stmt& s, const Context& ctx);
  Scheduled scheduled(const ir::Stmt& s, const Context& ctx) const;
  void nest(Cursor& out, const std::vector<Scheduled>& members, const Context& ctx);
  void shared(Cursor& out, const std::vector<Scheduled>& nest, size_t first, size_t end,
              std::vector<Var>& loop_vars, const Context& ctx);
  void declare_rows(Cursor& out, const std::vector<Scheduled>& nest, size_t first, size_t end,
                    size_t depth);
  /// When the nest's outermost loop is worth the thread team (nullopt: never).
  /// `column_tiles`: the loop is a column sum's tiles (it has no outer loop).
  std::optional<ParallelWork> parallel_work(const std::vector<Scheduled>& nest,
                                            bool column_tiles = false) const;
  /// A For node over [first, end); Parallel with `work` when set.
  static Node for_node(const Var& v, IndexExpr first, IndexExpr end,
                       std::optional<ParallelWork> work = std::nullopt);

  // loops_statement.cpp
  /// A jammed statement's parts, for the loops its group opens.
  struct JamMember {
    const Scheduled* m = nullptr;
    Place target;       // the result's element
    Operand start;      // its accumulator's start
    Var acc;            // the tile's accumulators
    bool wide = false;  // accumulates in double
    ElemType computed = ElemType::F32;
    Var index;  // its jammed out index
  };
  struct JamGroup {
    Var tile, lane;
    std::vector<Var> reduce_vars;  // the first member's; empty: each its own
    std::vector<JamMember> members;
  };
  /// The state of building one scheduled statement.
  struct StatementState {
    StatementState(const Scheduled& scheduled, const Context& context)
        : m(scheduled), c(scheduled.stmt->compute), ctx(context) {}
    const Scheduled& m;
    const ir::Compute& c;
    Context ctx;  // every index of the statement bound
    bool in_nest = false;
    JamGroup* group = nullptr;
    size_t shared = 0;     // its loops opened outside (a nest's shared loops)
    size_t own_outer = 0;  // its outer loops it opens itself
    std::vector<Var> out_vars, reduce_vars;
    Place target;
    Operand start;
    Var acc;
    bool wide = false;
    ElemType type = ElemType::F32, computed = ElemType::F32;
    /// Under the guard in use (the statement's or its interior's): the reduce
    /// loops that run once (their one value), and the narrowed ones' names.
    const GuardBounds* guard = nullptr;
    std::vector<std::optional<IndexExpr>> only;
    std::string narrowed, single;
  };
  void statement(Cursor& out, const Scheduled& m, const std::vector<Var>& loop_vars,
                 const Context& ctx, bool in_nest, JamGroup* group = nullptr);
  void assignment(Cursor& out, StatementState& st);
  void reduction(Cursor& out, StatementState& st);
  /// The accumulator's start (the identity, or an update's initial value),
  /// variable and width.
  void start_accumulator(StatementState& st);
  void element(Cursor& out, StatementState& st, const GuardBounds& g);
  void in_place_block(Cursor& out, StatementState& st);
  void wide_block(Cursor& out, StatementState& st);
  /// A block of double accumulators: the terms of an element's offset but
  /// the first index's, the extent of the other inner indices, and its tiles.
  struct BlockShape {
    std::vector<IndexExpr> offsets;
    int64_t rest = 1;
    int64_t tile = 0;
    bool columns = false;  // column tiles the threads share
    bool tiled = false;
  };
  BlockShape block_shape(const StatementState& st) const;
  void use_guard(StatementState& st, const GuardBounds& g) const;
  void open_out(Cursor& out, const StatementState& st, const std::vector<size_t>& dims,
                size_t from) const;
  void open_reduce(Cursor& out, const StatementState& st, size_t count) const;
  std::pair<IndexExpr, IndexExpr> reduce_bounds(const StatementState& st, size_t d) const;

  // loops_jam.cpp
  void jam_run(Cursor& out, const std::vector<Scheduled>& nest, size_t first, size_t end,
               const std::vector<Var>& loop_vars, const Context& ctx);
  /// `resume`: each member's parts in a region continuing its statement's
  /// (the group is outside their regions); `open_reduce` opens the reduce
  /// loops (null: the first member's, not narrowed, named group.reduce_vars).
  void jam_group(Cursor& out, JamGroup& group, std::optional<ParallelWork> work, bool resume,
                 const std::function<void()>& open_reduce);
  void jam_starts(JamParts& parts, const JamMember& member, std::set<const ir::ExprNode*>& hoisted);

  // loops_lanes.cpp
  void lanes(Cursor& out, StatementState& st, const GuardBounds& g);

  // loops_scan.cpp
  /// A reduction over a triangle run as a scan: out index `out_dim`'s loop
  /// (the statement's innermost outer one) moves one bound of its one reduce
  /// index, `moving` (k <= moving when `upper`, else k >= moving), by `step`
  /// per element; `fixed` are k's other bounds, `body` the terms.
  struct ScanPlan {
    size_t out_dim = 0;
    bool upper = true;
    bool ascending = true;
    int64_t step = 1;
    ir::Affine moving;
    ReduceRange fixed;
    ir::Expr body;
  };
  std::optional<ScanPlan> scan_plan(const StatementState& st) const;
  void scan(Cursor& out, StatementState& st, const ScanPlan& plan);
  /// The value an element stores: the accumulator, or an update's start with it.
  Var scan_element(Cursor& out, StatementState& st);

  // loops_peel.cpp
  void peeled(Cursor& out, StatementState& st);

  // loops_hoist.cpp
  void hoist_computed_indices(Cursor& out, const ir::Expr& body, const ir::Compute& c,
                              const std::vector<size_t>& inner_dims, Context& ctx);
  /// `stmt`, `bindings`: the values are printed in that statement's names
  /// (a hoist above a shared loop, outside the statement's region).
  void hoist_invariant_reads(Cursor& out, const ir::Expr& body, const std::vector<ir::Dim>& inner,
                             Context& ctx, const ir::Stmt* stmt = nullptr,
                             const std::vector<Binding>& bindings = {});
  Context hoist_above_shared_loop(Cursor& out, const std::vector<Scheduled>& nest, size_t first,
                                  size_t end, const std::vector<Var>& loop_vars,
                                  const Context& ctx);

  // loops_scatter.cpp
  void scatter(Cursor& out, const ir::Stmt& s, const Context& ctx);
  void scatter_start(Cursor& out, const ir::Compute& c, const std::vector<Var>& vars);
  void scatter_terms(Cursor& out, const ir::Compute& c, const IndexScatter& form,
                     const GuardBounds& guard, bool narrowed, const std::vector<Var>& out_vars,
                     const std::vector<Var>& reduce_vars, const IndexRanges& ranges);
  /// Parallel work that is the product of `factors` as they stand.
  std::optional<ParallelWork> literal_work(std::vector<IndexExpr> factors) const;

  // loops_col2im.cpp
  void col2im(Cursor& out, const ir::Stmt& s, const ScatterForm& form, const Context& ctx);
  void col2im_start(Cursor& out, const ir::Compute& c, const ScatterForm& form);
  void col2im_terms(Cursor& out, const ir::Compute& c, const ScatterForm& form,
                    const std::vector<Var>& reduce_vars);

  // loops_calls.cpp
  void gemm(Cursor& out, const ir::Stmt& s, const Context& ctx);
  void gemm_calls(Cursor& out, const ir::Stmt& s, const GemmLowering& g);
  void conv(Cursor& out, const ir::Stmt& s, const Context& ctx);

  bool checks_indices_of(const ir::Stmt& s) const {
    return options_.index_checks && !s.annotations.reshape;
  }

  const LoweredFunction& lowered_;
  const LoopOptions& options_;
  LoopTree& tree_;
};

}  // namespace tenet::lower::detail
