/// \file
/// Expressions of the IR as C++ text, for the statement emitter (cpp_function.cpp).
///
/// Internal to codegen/. Expects: a verified expression whose tensors and
/// indices are all described by the Scope. Guarantees: the text has the IR
/// type (float arithmetic stays float, narrow integers are cast back after
/// each operation) and the interpreter's semantics for max/min (maximumNumber/minimumNumber),
/// integer division, casts and guarded reads (0 outside the tensor).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/c_text.h"
#include "ir/ir.h"

namespace tenet::codegen::detail {

/// How generated code reaches one tensor's elements.
struct TensorAccess {
  std::string pointer;               // the C++ name of its data pointer
  std::vector<std::string> strides;  // per dimension, in elements: a name, a number or "1"
  std::vector<std::string> dims;     // per dimension: the C++ extent (a name or a number)
};

/// An index in scope: its C++ name and its range [lo, hi).
struct IndexInfo {
  std::string name;
  ir::SizeExpr lo, hi;
  int order = 0;  // enclosing loops and indices count up from the outermost (Scope::bind)
};

struct Scope {
  const std::map<const ir::Value*, TensorAccess>* tensors = nullptr;
  std::map<std::string, IndexInfo> indices;  // keyed by the IR index name
  const NameMap* size_names = nullptr;
  /// Check computed indices at run time (runtime/tenet_index.h) against the
  /// function's `index_fault`; the statement's result names the read's statement.
  bool check_indices = false;
  std::string statement;
  /// Inside a computed index that is checked: the arguments naming its site
  /// for tenet::index_step (", tenet::IndexSite{...}, i, k"); its int64
  /// + - * / % and negation are then exact or a recorded fault, never wrapped.
  std::string index_site;
  int next_order = 0;
  /// Computed indices already evaluated (and checked) in a local variable,
  /// outside loops they do not depend on: the read's node and dimension.
  std::map<std::pair<const ir::ExprNode*, size_t>, std::string> hoisted;
  /// Reads already loaded, and values already computed, into a local
  /// variable, outside the loops they do not depend on
  /// (FunctionEmitter::hoist_invariant_reads, FunctionEmitter::emit_jammed).
  std::map<const ir::ExprNode*, std::string> hoisted_values;
  /// Locals are declared next to those of sibling statements (a loop nest's
  /// shared body): their names carry the statement's.
  bool statement_local_names = false;
  /// Indices whose loops are not open where a hoisted index is checked: the
  /// value a message gives them (their first, where the failure shows first).
  std::map<std::string, std::string> not_open;

  /// Puts an index in scope, inside those already there.
  void bind(const std::string& ir_name, const std::string& c_name, const ir::SizeExpr& lo,
            const ir::SizeExpr& hi) {
    indices[ir_name] = IndexInfo{c_name, lo, hi, next_order++};
  }
};

/// The C++ name of the per-call record of out-of-range computed indices.
inline constexpr const char* kIndexFault = "index_fault";

/// Computed index `d` of `read` as C++, checked at run time as the Scope asks.
CExpr computed_index_to_c(const ir::ExprNode& read, size_t d, const Scope& scope);

CExpr emit_expr(const ir::Expr& e, const Scope& scope);

/// The flat element offset of a read or write: "b * s_stride0 + n * s_stride1 + d".
std::string flat_offset(const TensorAccess& t, const std::vector<ir::Affine>& indices,
                        const Scope& scope);

/// The same from each dimension's index as C++.
std::string flat_offset(const TensorAccess& t, const std::vector<CExpr>& indices);

/// An affine index as C++ ("2 * i + ki - 1").
CExpr affine_to_c(const ir::Affine& a, const Scope& scope);

/// float16 storage (uint16_t bits, runtime/tenet_runtime.h): an element
/// loaded as float32, and the value a tensor of type `t` stores ("x" or
/// "tenet::float_to_half(x)").
CExpr half_to_float(const CExpr& bits);
std::string stored(ElemType t, const std::string& value);

/// The C++ spelling of the identity of a reduction over type `t`.
std::string reduce_identity(ir::ReduceOp op, ElemType t);

/// The statement that folds `value` into `acc`: "acc += x;", "acc = tenet::math::max(acc, x);".
std::string reduce_step(ir::ReduceOp op, ElemType t, const std::string& acc, const CExpr& value);

}  // namespace tenet::codegen::detail
