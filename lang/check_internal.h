/// \file
/// Internals of the checker (check.h), shared by its implementation files. Not
/// a public interface. The language rules it implements are listed at the top
/// of check.cpp; the files, in the order a statement meets them:
///
///   check.cpp       the driver: signatures, the call graph, outputs, the module
///   scope.cpp       name bindings per block; pre-scans of statement lists
///   index_expr.cpp  affine index expressions, size expressions, loop bounds
///   types.cpp       typing of right sides and their lowering to ir::Expr
///   ranges.cpp      range inference and bounds checks (ranges.h)
///   lower.cpp       assignment statements and loops
///   inline.cpp      call statements (inlined)
///
/// Error handling: a statement with an error is not lowered; its target is
/// bound "poisoned" (no value) so later statements that read it stay quiet
/// instead of reporting follow-on errors. A function with any error or poisoned
/// read is never finished (its builder is dropped), so the verifier only ever
/// sees IR from error-free functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"
#include "lang/ast.h"
#include "lang/check.h"
#include "lang/ranges.h"
#include "support/diagnostics.h"

namespace tenet::lang::detail {

/// Integer constants in sizes, indices and loop bounds stay below this, so
/// that products of a coefficient and a bound always fit in int64.
constexpr int64_t kMaxConstant = (int64_t(1) << 31) - 1;
/// Calls nest at most this deep (each level is inlined into the one above).
constexpr int kMaxCallDepth = 64;
/// A tensor has at most this many dimensions and a statement at most this
/// many indices: each index is a loop of the generated code, and C++
/// compilers need time and memory that grow steeply with the depth of a loop
/// nest (about 25 s and 1 GB at 32 with -O3, 5 GB at 64).
constexpr int kMaxIndices = 32;
/// At most this many statements are produced by inlining, per module.
constexpr int64_t kMaxInlinedStatements = 200000;

/// What a tensor name means at a point of a function body.
struct Binding {
  ir::ValuePtr value;  // null when its definition had an error (already reported)
  int rank = -1;       // known even for most poisoned bindings; -1 when unknown
  Span decl;           // for "defined here" notes
  bool is_input = false;
  bool ok() const { return value != nullptr; }
};

/// Tensor bindings in nested blocks (the function body, then loop bodies).
class Scopes {
 public:
  void push() { blocks_.emplace_back(); }
  void pop() { blocks_.pop_back(); }
  const Binding* find(const std::string& name) const;
  /// Binds in the innermost block (a later binding of a name replaces the
  /// earlier: a redefinition); `defining` also records the name as defined
  /// by this block (its live-outs, when it is a loop body).
  void bind(const std::string& name, Binding b, bool defining);
  /// Names the innermost block defined, in order.
  const std::vector<std::string>& defined_order() const { return blocks_.back().order; }

 private:
  struct Block {
    std::map<std::string, Binding> bindings;
    std::set<std::string> defined;
    std::vector<std::string> order;
  };
  std::vector<Block> blocks_;
};

/// A visible loop variable: the source value is ir_name + lo.
struct LoopVar {
  std::string name;
  std::string ir_name;
  int64_t lo = 0;
  int64_t trip = 0;
  Span span;
};

/// The type of a right-side node: a concrete element type, an untyped number
/// literal (or an expression of literals only) that adapts to the other
/// operand, or "poisoned" (an error below was already reported).
struct Ty {
  enum Kind : uint8_t { Concrete, Literal, Poison };
  Kind kind = Poison;
  ElemType type = ElemType::F32;  // Concrete
  bool int_ok = true;             // Literal: may still become an integer type

  static Ty concrete(ElemType t) { return Ty{Concrete, t, true}; }
  static Ty literal(bool int_ok) { return Ty{Literal, ElemType::F32, int_ok}; }
  static Ty poison() { return Ty{}; }
  bool is(ElemType t) const { return kind == Concrete && type == t; }
};

/// How a bare name or an access resolved, and the node's type (pass 1).
struct NodeInfo {
  enum class Name : uint8_t { None, Index, Loop, Tensor, Size };
  Ty ty;
  ElemType operand = ElemType::F32;  // comparisons and casts of literals: operand type
  Name name = Name::None;
  std::string index;  // Index and Loop: the IR name
  int64_t loop_lo = 0;
  ir::SizeExpr size;    // Size
  ir::ValuePtr tensor;  // Tensor (a rank-0 read) and Access
  int read = -1;        // Access: into StmtInfo::reads
};

/// Everything known about one assignment while it is checked.
struct StmtInfo {
  const ast::Stmt* stmt = nullptr;
  std::vector<RangeIndex> indices;      // left side first, then right-only, then where-only
  std::map<std::string, int> index_of;  // source name -> position in indices
  std::vector<RangeRead> reads;         // unguarded and guarded reads, in order
  std::unordered_map<const ast::Expr*, NodeInfo> nodes;
  bool poisoned = false;  // an error was reported, or a poisoned tensor was read
  /// `where k in lo:hi` whose bounds read tensors (a ragged range): k's range
  /// comes from elsewhere, and the body is masked with lo <= k < hi.
  struct DataBound {
    std::string index;  // IR name
    const ast::Expr* lo;
    const ast::Expr* hi;
  };
  std::vector<DataBound> data_bounds;
  int in_branch = 0;  // > 0 while typing a branch of select or '?:'
};

class ModuleChecker;

/// The names mentioned after a point of a block or after the blocks around
/// it: a chain with one link per enclosing block (not a copy of a set per
/// loop, which made long functions of loops quadratic in time and memory).
struct LaterNames {
  const LaterNames* outer = nullptr;
  const std::set<std::string>* names = nullptr;  // the function body: its outputs
  const std::unordered_map<std::string, size_t>* last_mention = nullptr;  // in this block
  size_t after = 0;                                                       // this statement
  bool count(const std::string& name) const {
    if (names && names->count(name)) return true;
    if (last_mention) {
      auto it = last_mention->find(name);
      if (it != last_mention->end() && it->second > after) return true;
    }
    return outer && outer->count(name);
  }
};

/// How one function body is lowered: standalone, or inlined into a caller.
struct FunctionEnv {
  const ast::Function* fn = nullptr;
  ir::FunctionBuilder* fb = nullptr;
  Diagnostics* diags = nullptr;
  /// Size names of this function and their values in the IR being built
  /// (for an inlined callee: the caller's sizes bound to them).
  std::map<std::string, ir::SizeExpr> sizes;
  std::map<std::string, Span> size_decl;
  /// Standalone only: unknown names in where clauses become size parameters.
  bool may_add_sizes = false;
  /// Inlining: callee output name -> the caller's result name.
  std::map<std::string, std::string> rename;
  /// IR loop variables of enclosing loops in the caller (inlining).
  std::set<std::string> reserved;
  int call_depth = 0;  // how many calls deep this body is inlined
};

/// Lowers one function body into env.fb. The rules are in check.cpp.
class Lowerer {
 public:
  Lowerer(ModuleChecker& module, FunctionEnv env);

  void bind_input(const std::string& name, const ir::ValuePtr& value, Span decl);
  /// Binds the initial value of an output the caller supplies: an input of
  /// the IR that the body may update (ast::updates_caller_output).
  void bind_initial(const std::string& name, const ir::ValuePtr& value, Span decl);
  /// Lowers the body, then resolves the outputs (reporting missing ones and
  /// declared shapes or types that differ). Returns one value per output,
  /// null where it failed.
  std::vector<ir::ValuePtr> run();
  /// True once any error was reported or a poisoned tensor was used.
  bool failed() const { return failed_; }
  /// Statements produced so far, inlined ones included.
  int64_t statements() const { return statements_; }
  /// The deepest inlining below this body so far (0 without calls).
  int call_height() const { return call_height_; }

 private:
  // lower.cpp
  void block(const std::vector<ast::StmtPtr>& stmts, const LaterNames& later);
  void statement(const ast::Stmt& s, const LaterNames& later);
  void assign(const ast::Stmt& s);
  void for_loop(const ast::Stmt& s, const LaterNames& later);
  /// A loop's first value and trip count (1 after an error in its bounds).
  std::pair<int64_t, int64_t> loop_range(const ast::Stmt& s);
  /// Reports a loop variable named like a tensor, a size parameter, a function or a builtin.
  void check_loop_var(const ast::Ident& var);
  bool collect_indices(StmtInfo& st);
  bool where_clauses(StmtInfo& st);
  /// A where clause whose bounds read tensors (StmtInfo::data_bounds).
  bool data_bound(StmtInfo& st, const ast::RangeClause& w, const RangeIndex& ix);
  ir::ValuePtr emit_assign(StmtInfo& st, const Binding* existing, ElemType type);
  std::optional<ElemType> result_type(const StmtInfo& st, const Binding* existing,
                                      const ast::Output* declared);
  std::vector<ir::ValuePtr> outputs();
  ir::SizeExpr declared_dim(const ast::Dim& d) const;

  // scope.cpp: what a statement's target (or a call's result) is
  struct Target {
    enum Kind { Fresh, Update, Invalid } kind = Invalid;
    Binding existing;                       // Update
    const ast::Output* declared = nullptr;  // Fresh: a declared output of this function
  };
  /// `op`: the statement's operator (Assign for a call's result).
  Target resolve_target(const ast::Ident& name, ast::AssignOp op);
  bool name_clashes(const ast::Ident& name, const char* what);
  void bind_result(const ast::Ident& name, const Target& t, const ir::ValuePtr& value, int rank,
                   bool accumulate);
  const LoopVar* find_loop(const std::string& name) const;
  const ast::Function* find_function(const std::string& name) const;

  // inline.cpp
  void call(const ast::Stmt& s);
  /// The call's results, as targets; `ok` turns false at a bad one.
  std::vector<Target> call_targets(const ast::Stmt& s, bool& ok);
  /// The tensors passed (null where an argument is none); `ok` turns false at a bad one.
  std::vector<ir::ValuePtr> call_args(const ast::Stmt& s, const ast::Function& callee, bool& ok);
  /// Whether the call passes and takes as many tensors as `callee` has; reports it when not.
  bool call_arity_ok(const ast::Stmt& s, const ast::Function& callee);
  /// Whether inlining a callee (of `statements` statements and `call_height`
  /// levels of calls) stays within the limits; reports it when not.
  bool call_within_limits(const ast::Stmt& s, const ast::Function& callee, int64_t statements,
                          int call_height);
  /// The environment the callee's body is lowered in, its `size_params` bound
  /// by the arguments; nullopt after reporting a mismatch.
  std::optional<FunctionEnv> callee_env(const ast::Stmt& s, const ast::Function& callee,
                                        const std::vector<ir::ValuePtr>& args,
                                        const std::vector<std::string>& size_params);
  /// Binds the outputs the callee updates to the caller's tensors; false after an error.
  bool bind_updated_outputs(const ast::Stmt& s, const ast::Function& callee,
                            const std::vector<Target>& targets, Lowerer& inner);
  /// Reports each error of the inlined body at the call, the callee's text as notes.
  void report_in_call(const ast::Stmt& s, const ast::Function& callee, const Diagnostics& inner);
  /// Binds the call's results to the callee's outputs `outs`.
  void bind_call_results(const ast::Stmt& s, const ast::Function& callee,
                         const std::vector<Target>& targets, const std::vector<ir::ValuePtr>& outs);
  /// After an error: marks the body failed and binds the results to nothing.
  void give_up_call(const ast::Stmt& s, const std::vector<Target>& targets);
  // reshape.cpp
  void reshape(const ast::Stmt& s);
  bool bind_call_sizes(const ast::Stmt& s, const ast::Function& callee,
                       const std::vector<ir::ValuePtr>& args, FunctionEnv& env);

  // index_expr.cpp
  /// The affine form of an index expression; nullopt when it has none (a
  /// computed index).
  std::optional<ir::Affine> affine(const ast::Expr& e, StmtInfo& st);
  std::optional<ir::SizeExpr> size_expr(const ast::Expr& e, const char* context,
                                        const StmtInfo* st);
  std::optional<int64_t> loop_bound(const ast::Expr& e);

  // types.cpp
  Ty infer(const ast::Expr& e, StmtInfo& st);
  Ty infer_name(const ast::Expr& e, StmtInfo& st, NodeInfo& info);
  Ty infer_access(const ast::Expr& e, StmtInfo& st, NodeInfo& info);
  /// True when `e` (of type `t`) is an integer; else reports "<what> must be an integer".
  bool integer(const ast::Expr& e, Ty t, const char* what);
  Ty infer_builtin(const ast::Expr& e, StmtInfo& st, NodeInfo& info);
  Ty infer_select(const ast::Expr& e, StmtInfo& st);
  Ty infer_binary(const ast::Expr& e, StmtInfo& st, NodeInfo& info);
  Ty unify(const ast::Expr& whole, const ast::Expr& a, Ty ta, const ast::Expr& b, Ty tb,
           bool numeric, bool floats_only, ElemType* operand);
  ir::Expr emit(const ast::Expr& e, const StmtInfo& st, ElemType want);
  /// A read of a tensor, its computed indices emitted as int64.
  ir::Expr emit_access(const ast::Expr& e, const StmtInfo& st);
  /// A literal of type `type` (negated: the operand of a unary minus); an
  /// error at it when its value is outside what the type holds.
  ir::Expr emit_number(const ast::Expr& e, ElemType type, bool negated);

  Diagnostic& error(Span span, std::string message);
  /// A warning about a program that is fine (dropped in inlined bodies).
  Diagnostic& warning(Span span, std::string message);
  std::string text(Span span) const;
  const SourceFile& file() const { return env_.diags->file(); }

  ModuleChecker& module_;
  FunctionEnv env_;
  Scopes scopes_;
  std::vector<LoopVar> loops_;
  std::set<std::string> ir_loop_vars_;  // every IR loop variable enclosing the current point
  bool failed_ = false;
  int64_t statements_ = 0;
  int call_height_ = 0;
};

/// Checks the functions of a program, each once, callees first.
class ModuleChecker {
 public:
  ModuleChecker(const ast::File& program, const SourceFile& file);
  Checked run();

  const ast::Function* find(const std::string& name) const;

  /// A function checked on its own.
  struct Entry {
    const ast::Function* fn = nullptr;
    enum class State { Unchecked, Checking, Ok, Failed } state = State::Unchecked;
    ir::Function ir;
    int64_t statements = 0;  // statements its body lowers to, calls inlined
    int call_height = 0;     // levels of inlining inside it (0: it calls nothing)
  };
  /// Checks `name` standalone if not done yet. Returns its entry if it is free
  /// of errors; null otherwise, after reporting a recursive call at `call` if
  /// that is the reason.
  const Entry* checked(const std::string& name, const ast::Ident& call, Diagnostics& sink);
  /// Takes `n` inlined statements from the budget; false (taking nothing)
  /// when fewer are left.
  bool spend_inline_budget(int64_t n);

 private:
  void check_function(const ast::Function& fn);

  const ast::File& program_;
  Diagnostics diags_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> stack_;  // functions being checked, outermost first
  int64_t inline_budget_ = kMaxInlinedStatements;
};

/// Pre-scans of statement lists (scope.cpp).
/// Every name a statement mentions: read, assigned, passed or bound by a call.
void collect_mentions(const ast::Stmt& s, std::set<std::string>& out);

/// Whether the declared output `o` takes its initial value from the caller
/// (TC's accumulation into an output): the first statement that mentions it
/// updates it with `+=`, `max=`, `min=` or `*=`.
bool updates_caller_output(const ast::Function& fn, const ast::Output& o);
/// Every tensor name the statements assign (targets and call results), nested loops included.
/// In order of first assignment, without repeats.
void collect_assigned(const std::vector<ast::StmtPtr>& stmts, std::vector<std::string>& out);

/// Every Name inside the index expressions of the reads of `e`, in order.
void index_names(const ast::Expr& e, bool in_index, std::vector<const ast::Expr*>& out);
/// Every loop variable name, nested loops included.
void collect_loop_vars(const std::vector<ast::StmtPtr>& stmts, std::set<std::string>& out);
/// Names in where-clause bounds that are not in `not_sizes` nor indices of
/// their statement: the size parameters given only at run time.
void collect_where_sizes(const std::vector<ast::StmtPtr>& stmts,
                         const std::set<std::string>& not_sizes, std::vector<ast::Ident>& out);

/// "float32(B, N)"-style text of a type and shape, for messages.
std::string shape_text(ElemType type, const std::vector<ir::SizeExpr>& shape);
std::string quote(const std::string& s);

}  // namespace tenet::lang::detail
