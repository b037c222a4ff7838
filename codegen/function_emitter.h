/// \file
/// The state of printing one function as C++ from its lowered form
/// (lower/lowered.h: liveness, GEMM lowering, memory plan), shared by the
/// naming half (cpp_function.cpp: C++ names of parameters, tensors, sizes,
/// strides and workspace slots; the memory plan's table; ABI wrappers) and
/// the statement half (cpp_statements.cpp: loop nests; cpp_gemm.cpp: GEMM
/// calls; gemm_col2im.cpp: col2im). Nothing is decided here that another
/// backend would need.
///
/// Internal to codegen/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/c_text.h"
#include "codegen/code_writer.h"
#include "codegen/cpp.h"
#include "codegen/cpp_expr.h"
#include "codegen/cpp_gemm.h"
#include "codegen/loop_bounds.h"
#include "ir/ir.h"
#include "lower/peel.h"
#include "lower/schedule.h"

namespace tenet::codegen::detail {

/// Whether `s`'s computed indices are checked at run time in `scope` (a
/// reshape's are in bounds by construction: ir/reshape.h).
bool checks_indices_of(const ir::Stmt& s, const Scope& scope);

class FunctionEmitter {
 public:
  /// Prints `lowered` (lower/lowered.h), which must outlive the emitter.
  FunctionEmitter(const lower::LoweredFunction& lowered, std::string symbol,
                  const CppOptions& options);

  std::string declarations() const;
  std::string definitions();
  /// Whether some statement calls tenet::gemm (the unit includes tenet_gemm.h).
  bool uses_gemm() const { return !gemms_.empty(); }
  /// Whether some statement calls the convolution library (tenet_conv.h).
  bool uses_conv() const { return uses_conv_; }
  /// Some statement reads through a computed index checked at run time: the
  /// unit includes tenet_index.h, and the function has an __error entry point.
  bool checks_indices() const;

 private:
  // Names (cpp_function.cpp), in the order the function runs.
  void name_parameters();
  void name_block(const std::vector<ir::Stmt>& body, const ir::Loop* enclosing);
  void name_loop(const ir::Loop& loop);
  void add_tensor(const ir::ValuePtr& v, const std::string& pointer);
  /// A row-local temporary (lower/row_local.h): an array emit_shared declares.
  void add_row_local(const ir::ValuePtr& v, const std::string& pointer, const lower::RowLocal& row);
  /// `storage`: the shape the strides are computed from (a chunk buffer's capacity).
  void add_tensor(const ir::ValuePtr& v, const std::string& pointer,
                  const std::vector<ir::SizeExpr>& storage);
  void name_temporary(const ir::ValuePtr& v);
  void name_temporary(const ir::ValuePtr& v, const std::vector<ir::SizeExpr>& capacity);
  /// Names slot `slot` of the memory plan: its pointer and element count in C++.
  void name_slot(size_t slot, const std::string& name, const std::string& count);
  std::string dim_text(const ir::Value& v, int d);
  std::string extent_text(const ir::SizeExpr& size, const std::string& owner, int d);
  std::string count_text(const ir::Value& v);
  const TensorAccess& access(const ir::ValuePtr& v) const;
  std::string parameter_list(bool with_restrict) const;
  std::string argument_list() const;

  std::string used_size_locals(const std::string& text, int depth) const;
  std::string size_parameter_list() const;
  std::string size_argument_list() const;
  void emit_workspace_plan(Code& code) const;
  std::string workspace_pointers() const;
  void emit_body(Code& code);
  void emit_wrappers(Code& code) const;
  void emit_packed_wrappers(Code& code) const;

  // Statements (cpp_statements.cpp).
  void emit_block(Code& code, const std::vector<ir::Stmt>& body, const Scope& scope);
  void emit_compute(Code& code, const ir::Stmt& s, const Scope& scope);
  /// A view (lower::MemoryPlan::views): a pointer to its source's elements.
  void emit_view(Code& code, const ir::Stmt& s);
  bool is_view(const ir::Stmt& s) const {
    return s.kind == ir::StmtKind::Compute && memory_.views.count(s.compute.result.get());
  }
  void emit_loop_nest(Code& code, const ir::Stmt& s, const Scope& scope);
  void emit_loop(Code& code, const ir::Stmt& s, const Scope& scope);
  Namer statement_namer(const ir::Compute& c, const Scope& scope) const;
  /// Before a statement with checked computed indices: fails when one reads
  /// an empty dimension (runtime/tenet_index.h's checks read element 0).
  void check_nonempty_dims(Code& code, const ir::Compute& c) const;
  /// Evaluates the computed indices of `body` that no index of `inner_dims`
  /// changes into locals, before those loops open (Scope::hoisted).
  void hoist_computed_indices(Code& code, const ir::Expr& body, const ir::Compute& c,
                              const std::vector<size_t>& inner_dims, Namer& local,
                              Scope& scope) const;

  /// Loads the reads of `body` that mention none of `inner` (the indices of
  /// the loops about to open) into locals (Scope::hoisted_values): the
  /// softmax's `x(i, l) - max(i)` then vectorises over l, where a load the
  /// compiler cannot prove loop-invariant (pointers lose __restrict__ inside
  /// OpenMP regions) keeps the loop scalar. Only plain reads, whose every
  /// index is proven in range wherever the enclosing indices are, and only
  /// when the inner loops run at least once.
  void hoist_invariant_reads(Code& code, const ir::Expr& body, const std::vector<ir::Dim>& inner,
                             Namer& local, Scope& scope) const;

  static std::string comment_text(const ir::Stmt& s);

  // ---- Loop schedules (cpp_statements.cpp): the `schedule` pass's loop
  // orders and shared loop nests (lower/schedule.h). ----
  struct Scheduled {
    const ir::Stmt* stmt;
    lower::LoopSchedule schedule;     // `shared`: loops shared with the previous member
    GuardBounds guard;                // its reduce loops narrowed by its guard (loop_bounds.h)
    std::optional<lower::Peel> peel;  // its interior without the window's tests (lower/peel.h)
    GuardBounds interior_guard;       // `guard` of the interior's body
  };
  /// `s` (a Compute in a block with the indices of `scope`) with its loop
  /// schedule and its reduce loops' bounds from its guard.
  Scheduled scheduled(const ir::Stmt& s, const Scope& scope) const;
  /// Before the shared loop of members [first, end) of `nest` opens, when it
  /// is every member's last (element-wise statements only): their reads that
  /// do not depend on it, loaded into locals (hoist_invariant_reads). Batch
  /// norm's `(x - mean(j)) * rsqrt(var(j) + eps)` then vectorises over the
  /// row. Returns `scope` with those locals.
  Scope hoist_above_shared_loop(Code& code, const std::vector<Scheduled>& nest, size_t first,
                                size_t end, const std::vector<std::string>& loop_vars,
                                const Scope& scope, Namer& names) const;

  void emit_nest(Code& code, const std::vector<Scheduled>& nest, const Scope& scope);
  void emit_shared(Code& code, const std::vector<Scheduled>& nest, size_t first, size_t end,
                   std::vector<std::string>& loop_vars, const Scope& scope);
  /// Jammed statements sharing every loop (lower/schedule.h): one tile
  /// loop, the reduce loops once, each member's lanes inside (cpp_jam.cpp).
  struct JamMember;
  struct JamGroup {
    std::string tile, lane;
    std::vector<std::string> reduce_vars;  // the first member's; empty: each its own
    std::vector<JamMember> members;
  };
  /// `group`: a jammed statement adds itself to it, unemitted.
  void emit_scheduled(Code& code, const Scheduled& m, const std::vector<std::string>& loop_vars,
                      const Scope& scope, bool in_nest, JamGroup* group = nullptr);
  /// Members [first, end) of `nest`, jammed statements sharing every loop,
  /// the first `loop_vars.size()` of them open.
  void emit_jam_run(Code& code, const std::vector<Scheduled>& nest, size_t first, size_t end,
                    const std::vector<std::string>& loop_vars, const Scope& scope);
  /// The text of a reduction's parts, for the loops emit_scheduled opens.
  struct JammedText {
    std::string target;    // the result's element
    std::string start;     // its accumulator's start
    std::string acc;       // the accumulator's name
    std::string acc_type;  // double for a float32 sum
    ElemType computed;
    bool wide;  // accumulates in double (ir/scatter_form.h)
  };
  struct JamMember {
    const Scheduled* m;
    JammedText text;
    Scope scope;        // with its indices bound
    std::string index;  // the C name of its jammed index
  };
  /// Jammed reductions (passes/schedule.h, 3) inside their other outer loops
  /// (cpp_jam.cpp): the tile loop, each member's accumulators and the values
  /// its terms share, `open_reduce`'s loops (null: the first member's, not
  /// narrowed, named group.reduce_vars) around the interleaved steps, the stores.
  void emit_jam_group(Code& code, JamGroup& group, Namer& names,
                      const std::function<void()>& open_reduce);
  /// A max or min reduction's loops in vector lanes (passes/schedule.h, 4;
  /// cpp_lanes.cpp), folding into `acc`: the reduce loops but the last
  /// (`open_loops(n)` opens the first n), the last by blocks of lanes over
  /// `last` = its first and end, its rest, then the lanes combined.
  /// A peeled statement's last own loop (lower/peel.h): inside the other
  /// peeled loops' interior, its border with the body and its interior with
  /// the interior's body; elsewhere all of it with the body. `element` emits
  /// one element under a guard.
  void emit_peeled(Code& code, const Scheduled& m, const std::vector<std::string>& out_vars,
                   const std::function<void(const GuardBounds&)>& element);
  void emit_lanes(Code& code, const Scheduled& m, const std::string& acc,
                  const std::vector<std::string>& reduce_vars, Namer& local, const Scope& scope,
                  const std::pair<std::string, CExpr>& last,
                  const std::function<void(size_t)>& open_loops);
  /// The pragma that runs the nest's outermost loop on the OpenMP team when
  /// the work is large enough; `column_tiles`: that loop is a column sum's
  /// tiles (it has no outer loop of its own).
  std::string parallel_pragma(const std::vector<Scheduled>& nest, bool column_tiles = false) const;
  /// Marks every name statement `c` uses (tensors, strides, extents, sizes, indices in scope).
  void reserve_names(Namer& names, const ir::Compute& c, const Scope& scope) const;

  // Statements lowered to GEMM calls (lower/gemm.h), printed by cpp_gemm.cpp.
  void name_gemm(const ir::Stmt& s);
  void emit_gemm(Code& code, const ir::Stmt& s, const Scope& scope);
  void emit_gemm_calls(Code& code, const lower::GemmLowering& g, const Scope& scope);
  /// A split's gather as a scatter of windows (gemm_col2im.cpp), in the
  /// form the lowering found (lower/col2im.h).
  void emit_col2im(Code& code, const ir::Stmt& gather, const lower::ScatterForm& scatter,
                   const Scope& scope);

  /// A convolution with a plan (ir/conv_plan.h): one call of
  /// runtime/tenet_conv.h, printed by cpp_conv.cpp.
  void emit_conv(Code& code, const ir::Stmt& s, const Scope& scope);
  /// Inside the shared loop at `depth` of members [first, end) of `nest`: the
  /// arrays of their row-local results that live there (lower/row_local.h).
  void declare_rows(Code& code, const std::vector<Scheduled>& nest, size_t first, size_t end,
                    size_t depth);
  /// A planned convolution's start (Compute::init), added after the call.
  void emit_conv_start(Code& code, const ir::Compute& c, const Scope& scope);

  /// A sum run as a scatter (lower/scatter.h), printed by cpp_scatter.cpp.
  void emit_scatter(Code& code, const ir::Stmt& s, const lower::IndexScatter& lowered,
                    const Scope& scope);

  const ir::Function& fn_;
  std::string symbol_;
  CppOptions options_;
  const lower::LoweredFunction& lowered_;  // liveness, GEMM lowering, memory plan
  const lower::Liveness& liveness_ = lowered_.liveness;

  Namer names_;         // function scope
  NameMap size_names_;  // IR size parameter -> C++ name
  std::vector<std::string> size_params_, input_params_, output_params_;
  /// The inputs passed as `const T*` parameters, parallel to input_params_:
  /// all but the initial values of outputs updated in place (c_text.h).
  std::vector<const ir::Value*> abi_inputs_;
  std::map<const ir::Value*, TensorAccess> tensors_;
  std::set<const ir::Value*> outputs_;
  std::vector<std::pair<std::string, std::string>> size_locals_;  // name, C++ expression
  std::map<std::string, std::string> size_local_by_key_;          // SizeExpr key -> name
  /// Per tensor (in order of appearance), its strides: name and C++ expression.
  std::vector<std::vector<std::pair<std::string, std::string>>> strides_;
  /// Per slot of the memory plan (lowered_.memory): the pointer (or the
  /// array of two pointers) in the generated code, and its elements as C++.
  std::vector<std::string> slot_names_, slot_counts_;
  const lower::MemoryPlan& memory_ = lowered_.memory;

  // Loops: the names of the buffers carried tensors need (memory_.carry_kind).
  std::map<const ir::Loop::Carried*, std::string> carry_buffers_;  // Copy: its two buffers
  std::map<const ir::Value*, std::string> in_place_buffers_;       // InPlace next values
  std::map<const ir::Loop*, std::string> loop_vars_;

  /// A statement lowered to GEMM calls, with its C++ names: M*N*K (a
  /// per-call decision tests it) and the loop variable over chunks.
  struct EmittedGemm {
    const lower::GemmLowering* lowering;
    std::string work, chunk_start;
  };
  std::map<const ir::Stmt*, EmittedGemm> gemms_;  // statements with a GEMM plan
  bool uses_conv_ = false;                        // a statement has a convolution plan

  // Outputs not written in place: copied at the end from their value.
  std::vector<std::pair<std::string, ir::ValuePtr>> output_copies_;
};

}  // namespace tenet::codegen::detail
