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
#include "ir/ir.h"
#include "lower/loop_tree.h"
#include "lower/lowered.h"

namespace tenet::codegen::detail {

class FunctionEmitter {
 public:
  /// Prints `lowered` (lower/lowered.h), which must outlive the emitter.
  FunctionEmitter(const lower::LoweredFunction& lowered, std::string symbol,
                  const CppOptions& options);

  std::string declarations() const;
  std::string definitions();
  /// A GPU target's unit (kernels, and host code that calls the device
  /// runtime: tenet::device is tenet_emulator.h's or tenet_cuda.h's).
  bool on_device() const { return options_.kernels != CppOptions::Kernels::None; }
  /// The kernels definitions() printed (lower/kernels.h), in order: in the
  /// host source for the emulator, a CUDA source of their own for CUDA.
  const std::vector<std::string>& kernels() const { return kernels_; }
  /// Whether some statement calls tenet::gemm (the unit includes tenet_gemm.h).
  bool uses_gemm() const { return !gemms_.empty(); }
  /// Whether some statement calls the convolution library (tenet_conv.h).
  bool uses_conv() const { return uses_conv_; }
  /// Some statement reads through a computed index checked at run time: the
  /// unit includes tenet_index.h, and the function has an __error entry point.
  bool checks_indices() const { return lowered_.loops.checks_indices; }
  /// Each top-level statement is a region of the function's profile table
  /// (CppOptions::profile, runtime/tenet_profile.h); host code only.
  bool profiled() const { return options_.profile && !on_device(); }

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
  void emit_packed_wrappers(Code& code);
  /// A packed entry point's call (lines) and its failures as status codes
  /// (2: no memory, when it `allocates`; 3: an index out of range; 4: the
  /// device). On a GPU target the call `copies` the caller's host buffers
  /// to the device and back, unless they are the device's already.
  void emit_packed_call(Code& code, const std::string& call, bool allocates, bool copies = true);
  /// `<symbol>__error`: the message of the last failure in this thread.
  void emit_error_entry(Code& code) const;

  // The loop tree (lower/loops.h), printed by cpp_loops.cpp.
  void print_block(Code& code, const lower::Block& block, Scope scope);
  /// The function's body with each top-level statement (from its source
  /// comment to the next) timed as a region of a static profile table.
  void print_profiled_body(Code& code, const Scope& scope);
  /// The first line of what a top-level group of nodes says it does: its
  /// statement's source, or the comment or note it starts with.
  static std::string group_label(const lower::Node& n);
  void print_node(Code& code, const lower::Node& n, Scope& scope);
  void print_for(Code& code, const lower::Node& n, const Scope& scope);
  /// A statement's region: its comment, its indices named and bound (a
  /// resumed region: as its first region left them).
  void print_statement(Code& code, const lower::Node& n, const Scope& scope);
  void print_name_scope(Code& code, const lower::Node& n, const Scope& scope);
  void print_let(Code& code, const lower::Node& n, Scope& scope);
  void print_array(Code& code, const lower::Node& n);
  void print_assign(Code& code, const lower::Node& n, const Scope& scope);
  std::string assign_text(const lower::Node& n, const Scope& scope) const;
  void print_call(Code& code, const lower::Node& n, const Scope& scope);
  CExpr index_text(const lower::IndexExpr& e, const Scope& scope) const;
  std::string place_text(const lower::Place& p, const Scope& scope) const;
  /// `compute`: the type an identity is in.
  CExpr operand_text(const lower::Operand& o, ElemType compute, const Scope& scope) const;
  /// The OpenMP pragma of a parallel loop: an `if` clause with the work when
  /// it is symbolic.
  std::string parallel_text(const lower::ParallelWork& work, const Scope& scope) const;
  /// Names `v` in the innermost name scope, unless it has a name.
  void declare(const lower::Var& v);
  const std::string& var_name(const lower::Var& v) const;
  const TensorAccess& access_of(const ir::Value* v) const;

  // Kernels of a GPU target (lower/kernels.h), printed by cpp_kernels.cpp:
  // the definition of each (before the host function) and its launch here.
  void print_kernel(Code& code, const lower::Node& n, const Scope& scope);
  /// A loop of a kernel's grid: its variable from the thread index.
  void print_grid_loop(Code& code, const lower::Node& n, const Scope& scope);
  /// A grouped kernel (lower/kernel_groups.h): the host's choice of lanes,
  /// the group's prologue, a loop the lanes share, the group's reduction and
  /// what its first lane runs.
  std::string print_lanes(Code& code, const lower::Node& kernel, const Scope& scope);
  void print_group_prologue(Code& body, const lower::Node& kernel, const std::string& groups);
  void print_lane_loop(Code& code, const lower::Node& n, const Scope& scope);
  void print_group_reduce(Code& code, const lower::Node& n);
  void print_group_leader(Code& code, const lower::Node& n, const Scope& scope);
  /// The host names a kernel's text mentions, as its parameters: "type name".
  /// `written`: the tensors it writes (the others are `const`).
  std::vector<std::pair<std::string, std::string>> kernel_parameters(
      const std::string& text, const std::set<const ir::Value*>& written) const;
  /// The kernel's definition: its signature in the chosen dialect, then `body`.
  std::string kernel_definition(const std::string& name,
                                const std::vector<std::pair<std::string, std::string>>& params,
                                const std::string& body, int64_t per_block) const;

  /// Before a statement with checked computed indices: fails when one reads
  /// an empty dimension (runtime/tenet_index.h's checks read element 0).
  void check_nonempty_dims(Code& code, const ir::Compute& c) const;
  /// A view (lower::MemoryPlan::views): a pointer to its source's elements.
  void emit_view(Code& code, const ir::Stmt& s);
  bool is_view(const ir::Stmt& s) const {
    return s.kind == ir::StmtKind::Compute && memory_.views.count(s.compute.result.get());
  }
  /// A Loop statement (cpp_loop.cpp): its carried tensors handed on around its body.
  void emit_loop(Code& code, const lower::Node& n, const Scope& scope);
  static std::string comment_text(const ir::Stmt& s);
  /// The host's copy of `count` elements: std::copy_n, or the device
  /// runtime's for a GPU target (memory on the device).
  std::string copy_text(const std::string& from, const std::string& count,
                        const std::string& to) const;
  /// A GPU target's packed entry's call: the host buffers copied to the
  /// device and back around the allocating entry point.
  void emit_device_call(Code& code);
  Namer statement_namer(const ir::Compute& c, const Scope& scope) const;
  /// Marks every name statement `c` uses (tensors, strides, extents, sizes, indices in scope).
  void reserve_names(Namer& names, const ir::Compute& c, const Scope& scope) const;

  // Statements lowered to GEMM calls (lower/gemm.h), printed by cpp_gemm.cpp.
  void name_gemm(const ir::Stmt& s);
  /// `call`: the tree's node, with the loops of the statements around the calls.
  void emit_gemm(Code& code, const lower::Node& call, const Scope& scope);
  void emit_gemm_calls(Code& code, const lower::Node& call, const lower::GemmLowering& g,
                       const Scope& scope);
  /// One tenet::gemm call at the position of the loops around it (`call`:
  /// the tree's GemmCall node, with the variables holding M, N and K).
  void emit_gemm_call(Code& code, const lower::Node& call, const Scope& inner);

  /// A convolution with a plan (ir/conv_plan.h): one call of
  /// runtime/tenet_conv.h, printed by cpp_conv.cpp (its start, when it has
  /// one, is added by loops of the tree).
  void emit_conv(Code& code, const ir::Stmt& s);

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
  // Printing the loop tree: each variable's name (by id; empty: not yet
  // declared), the name scopes open, and each statement's scope as its
  // region left it (for resumed regions).
  std::vector<std::string> var_names_;
  struct NameScope {
    Namer namer;
    std::vector<lower::Var> reserved;
  };
  std::vector<NameScope> namers_;
  std::map<const ir::Stmt*, Scope> statement_scopes_;
  bool uses_conv_ = false;  // a statement has a convolution plan
  // Kernels: their definitions in order; the thread index of the one being
  // printed (empty: printing host code); int64 variables the host declares.
  std::vector<std::string> kernels_;
  std::string thread_;
  bool outermost_grid_loop_ = false;  // the next grid loop printed is the kernel's first
  // A grouped kernel's names (lanes, lane, active, iteration index) and
  // reduction length; whether the next lane loop printed is its first.
  std::string lanes_, lane_, active_, lane_index_, reduce_length_;
  lower::Var lane_index_var_;
  bool outermost_lane_loop_ = false;
  std::vector<std::string> host_vars_;   // in scope where the host code is printed (a stack)
  std::set<std::string> kernel_locals_;  // what the kernel being printed declares

  // Outputs not written in place: copied at the end from their value.
  std::vector<std::pair<std::string, ir::ValuePtr>> output_copies_;
};

}  // namespace tenet::codegen::detail
