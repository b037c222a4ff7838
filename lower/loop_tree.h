/// \file
/// The loops of a function as a typed tree (the types; the stage that
/// builds it: lower/loops.h): the one place where loop
/// structure is decided (stage `lower_loops`). Every backend prints this
/// tree and decides nothing about loops itself: which out and reduce loops
/// open in which order (the `schedule` pass's orders, lower/schedule.h),
/// which statements share them (lower/nests.h), which loop runs on the
/// thread team and when (the work estimate), tiles of accumulator blocks,
/// jammed tiles, vector lanes, peeled borders (lower/peel.h), reduce loops
/// narrowed to their guard (lower/loop_bounds.h), values hoisted above the
/// loops they do not depend on, row-local arrays and the checks of
/// computed indices.
///
/// The tree is backend-independent: variables have a hint (the program's
/// index name, or a role such as "acc") that a printer turns into a name of
/// its language, in the order the variables are declared, avoiding the
/// names of the statements of the enclosing NameScope; bounds are typed
/// index expressions (IndexExpr) over sizes, tensor extents and variables;
/// bodies are IR expressions whose indices each statement's bindings map to
/// variables. Library calls (GEMM, convolution, scatter) are leaves that
/// name the statement and its lowering (lower/gemm.h, ir/conv_plan.h,
/// lower/scatter.h).
///
/// For every backend (lower/README.md). Expects: a function after
/// plan_memory. Guarantees: every live statement of the function appears
/// once (a GEMM's fallback loops and pack statements inside its call node);
/// every variable is declared (by a For or a Let) before it is used, in the
/// node that declares it or below; each statement's region binds every index
/// its body uses; a parallel loop runs out elements each computed by one
/// thread in the serial order (results do not depend on the thread count).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/index_expr.h"

namespace tenet::lower {

enum class LoopKind {
  Serial,
  Parallel,    // on the thread team, each iteration by one thread
  Vectorized,  // lanes: independent iterations the vectoriser packs
  Unrolled,    // fully unrolled (a tile's lanes)
  Simd,        // independent iterations the backend vectorises explicitly (OpenMP simd)
  GpuThread,   // one iteration per thread of the enclosing kernel's grid (lower/kernels.h)
  GpuLane,     // iterations shared by the lanes of a thread group (lower/kernel_groups.h)
};

/// When a parallel loop is worth the team: the work (out elements times the
/// reduction length, summed over the statements it runs) reaches
/// `min_work`. Work = sum of terms, each a product of extents times a
/// constant, plus `constant`.
struct ParallelWork {
  struct Factor {
    IndexExpr extent;  // an Extent, or a Size, or (hi - lo) as Sub of two Sizes
  };
  struct Term {
    std::vector<Factor> factors;
    int64_t constant = 1;
  };
  std::vector<Term> terms;
  int64_t constant = 0;
  int64_t min_work = 0;
  /// Loops run as one on the team (a convolution's start: 2), the
  /// outermost `collapse` of the nest.
  int collapse = 1;
  /// Every factor as it stands (constants too), in one term, tested even
  /// when constant (a scatter's work).
  bool literal = false;
  /// The team when the work is below min_work instead (small GEMMs one per
  /// thread; a large one is threaded by the library).
  bool below = false;
  /// Extents min_work is multiplied by (literal only): a loop of GEMMs runs
  /// them one per thread when each does fewer multiply-adds than min_work
  /// times the loop's iterations.
  std::vector<Factor> scale;
  bool always() const { return terms.empty() && constant >= min_work; }
};

struct Node;
using Block = std::vector<Node>;

/// An IR index of a statement bound to a variable, with the index's range.
struct Binding {
  std::string index;
  Var var;
  ir::SizeExpr lo, hi;
};

enum class NodeKind {
  For,        // for var in [first, end) by step (1 when null): body
  Scope,      // a nested scope: body
  If,         // if every test holds: body, else: orelse
  Statement,  // one IR statement's code (a NameScope of its own): body
  NameScope,  // the names declared in body avoid those of `members` and `reserved`
  Let,        // a local: var = index, or a hoisted value, or a checked computed index
  Alias,      // from here on, `expr` reads as the place `target` (a value computed per lane)
  Array,      // a local array: var[count] of `type` (double when `wide`)
  Assign,     // target (op)= source
  Comment,    // the statement's source, above its code
  Note,       // an explanation for the reader
  Blank,      // a blank line between statements
  Call,       // a statement the backend prints whole: a GEMM, a convolution, a scatter, a view
  SkipUnlessInBounds,  // the rest of the iteration only when 0 <= var < index (a scatter's target)
  CheckNonEmpty,       // before a statement with checked computed indices: their dimensions are not
                       // empty
  RaiseIndexFault,     // after it: a recorded out-of-range index fails the call
  CarriedLoop,         // an ir::Loop statement: body, handing its carried tensors on
  Kernel,              // code run on a device by a grid of threads: body (lower/kernels.h)
  GroupReduce,         // in a grouped kernel: var op= the other lanes' var (the first lane's
                       // value is the group's)
  GroupLeader,         // in a grouped kernel: body only on a group's first lane, for an element
                       // the grid has (lower/kernel_groups.h)
};

/// Gemm: a statement lowered to GEMM calls (lower/gemm.h), its calls in
/// `body`; GemmCall: one call at the position of the loops around it;
/// Conv: a library convolution (lower/conv.h); View: a reshape's pointer.
enum class CallKind { Gemm, GemmCall, Conv, View };

/// An element of a tensor (at the statement's `indices`), or a local
/// (scalar, or an array's element `at`).
struct Place {
  const ir::Value* tensor = nullptr;
  std::vector<ir::Affine> indices;
  Var local;
  IndexExpr at;
};

/// The right side of an assignment.
struct Operand {
  enum Kind {
    Expr,      // expr, an IR expression of the statement
    Load,      // place (a tensor's element, converted to the compute type; a local)
    Identity,  // the identity of reduction `of` in the compute type
    Zero,      // 0 in double (a lane of a float32 sum)
    Fold,      // the `lanes` partial results of reduction `of` in the array place.local
               // folded (doubles for a sum: a float32 sum's lanes)
  };
  Kind kind = Expr;
  ir::ReduceOp of = ir::ReduceOp::None;
  ir::Expr expr;
  Place place;
  int64_t lanes = 0;
};

struct Node {
  NodeKind kind = NodeKind::Blank;
  /// For, Let, Array: the variable declared. For: its range and step; how
  /// it runs; Unrolled loops unroll `unroll` times; a Parallel loop's work
  /// says when the team is worth it.
  Var var;
  IndexExpr first, end, step;
  LoopKind loop_kind = LoopKind::Serial;
  int64_t unroll = 0;
  /// For: its iterations write disjoint elements and read nothing another
  /// iteration writes (a loop over out elements, or shared by a nest's
  /// statements): a GPU target may run them on separate threads.
  bool independent = false;
  /// For: runs from end - 1 down to first (a suffix scan, lower/loops_scan.cpp).
  bool reverse = false;
  /// For of kind GpuThread: the product of the extents of the GpuThread
  /// loops inside it, so that its variable is first + (thread / grid_stride)
  /// % (end - first) for the kernel's linear thread index. Of kind GpuLane:
  /// the same for the lane loops inside it and the iteration index the lanes
  /// share (lower/kernel_groups.h).
  IndexExpr grid_stride;
  std::optional<ParallelWork> parallel;
  /// For, Scope, If, Statement, NameScope, CarriedLoop: what runs inside.
  Block body, orelse;
  /// If: lower (var >= bound) and upper (var < bound) tests, all of which hold.
  struct Test {
    Var var;
    bool lower = true;
    int64_t bound = 0;
  };
  std::vector<Test> tests;
  /// If: or an IR condition of the statement (a scatter's mask).
  ir::Expr condition;
  /// Statement, Comment, Call, CheckNonEmpty, RaiseIndexFault, CarriedLoop,
  /// and a Let's value: the IR statement.
  const ir::Stmt* stmt = nullptr;
  /// Statement: every index of the statement bound, in this order (those of
  /// loops outside the region first); a Let's value: extra bindings it is
  /// printed with (a hoist above a shared loop, in its statement's names).
  std::vector<Binding> bindings;
  bool check_indices = false;  // Statement: computed indices checked at run time
  /// Statement, NameScope: the statements whose names the scope's names avoid,
  /// and variables named outside whose names they avoid too.
  std::vector<const ir::Compute*> members;
  std::vector<Var> reserved;
  /// NameScope: variables named on entry, in this order (before those its
  /// body declares); indices bound inside it (`bindings`, then named first).
  std::vector<Var> declares;
  /// NameScope: continues the enclosing scope's names (a copy: what it
  /// names may be named again after it) instead of starting from its members'.
  bool inherit_names = false;
  /// Statement: continues the statement's earlier region (a jammed member's
  /// part inside its group's loops): no comment, its bindings and hoisted
  /// values as that region left them.
  bool resume = false;
  /// Let: var = index; or = expr (a value hoisted out of loops it does not
  /// depend on: it stands for `expr` from here on); or = computed index
  /// `computed_dim` of the read `expr`, checked here (it stands for it).
  IndexExpr index;
  ir::Expr expr;
  int computed_dim = -1;
  /// Let of an index: more index locals declared with it, in order.
  std::vector<std::pair<Var, IndexExpr>> more;
  /// Let of a scalar accumulator: its type and start are `type`, `wide`
  /// and `source` below.
  /// Let of a computed index: the indices not open yet, and the value a
  /// message gives each (their first).
  std::vector<std::pair<std::string, ir::SizeExpr>> not_open;
  /// Kernel: `var` is the linear index of a thread in the grid, `end` the
  /// number of threads that run the body (the product of the extents of its
  /// GpuThread loops; 1 without any), `count` the threads per block.
  /// A grouped kernel (lower/kernel_groups.h) runs each element of its grid
  /// on a group of `lanes` threads, chosen at launch from `end` and
  /// `reduce_length` (the product of the extents of its GpuLane loops); its
  /// `group` variables are, in order: lanes, lane, active (the group's
  /// element exists), the element's index, the lanes' iteration index.
  /// GroupReduce: `var` the accumulator, `op` the reduction, `type` and
  /// `wide` its type.
  bool grouped = false;
  IndexExpr reduce_length;
  std::vector<Var> group;
  /// Array: element type (double when `wide`), count; `row_of`: a row-local
  /// temporary's row (aligned for vector loads).
  ElemType type = ElemType::F32;
  bool wide = false;
  int64_t count = 0;
  const ir::Value* row_of = nullptr;
  /// Assign: target = source (op None: converted to the target's type,
  /// rounded from double when `round_double`), or target op= source in
  /// `compute` type (a reduction step).
  Place target;
  Operand source;
  ir::ReduceOp op = ir::ReduceOp::None;
  ElemType compute = ElemType::F32;
  bool round_double = false;
  /// Comment, Note: the text.
  std::string text;
  /// Call: what the backend prints whole, and the loops of the statements
  /// it runs (a GEMM's pack statements, the copies around its calls and its
  /// fallback; a convolution's start added after the call), by statement.
  CallKind call = CallKind::View;
  std::vector<Var> sizes;  // GemmCall: the variables holding its M, N and K
  std::vector<std::pair<const ir::Stmt*, Block>> nested;  // in the order they run
  /// The loops of statement `s` of a Call (an InternalError when it has none).
  const Block& nested_of(const ir::Stmt* s) const;
  Block& add_nested(const ir::Stmt* s) { return nested.emplace_back(s, Block{}).second; }
};

/// The loop tree of one function.
struct LoopTree {
  Block body;
  int vars = 0;  // variables 0..vars-1
  /// Some statement reads through a computed index checked at run time.
  bool checks_indices = false;
  bool built = false;  // lower_loops has run
};

/// What a target asks of the loops.
struct LoopOptions {
  bool parallel = true;  // run large loops on the thread team
  int64_t parallel_min_work = 32768;
  bool index_checks = true;  // check computed indices at run time
};

/// What a GPU target asks of its kernels (map_kernels, lower/kernels.h).
struct KernelOptions {
  int64_t threads_per_block = 256;
};

}  // namespace tenet::lower
