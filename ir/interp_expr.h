/// \file
/// Internals of the reference interpreter (interp.cpp), not a public contract.
///
/// A running Compute statement splits its iteration domain (out indices, then
/// reduce indices) into an outer part, iterated one point at a time, and an
/// inner box of up to a few thousand consecutive domain points, the "lanes".
/// The box is a suffix of the domain's indices plus a chunk of the next one, so
/// lanes enumerate the domain in its own order and every reduction still
/// accumulates in domain order. The statement's body is compiled once into a
/// tree of nodes, each computing one expression for all lanes at once; that
/// keeps the per-element work a tight loop instead of a tree walk.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "runtime/tenet_runtime.h"
#include "support/tensor.h"

namespace tenet::ir::interp {

using Tensors = std::unordered_map<const Value*, Tensor>;
/// Enclosing loop variables and their current values, outermost first.
using LoopVars = std::vector<std::pair<std::string, int64_t>>;

/// The type a value is computed and stored in: its declared type, or the
/// requested float type for float values.
inline ElemType effective_type(ElemType declared, std::optional<ElemType> float_type) {
  return float_type && is_float(declared) ? *float_type : declared;
}

/// How the interpreter stores a float16 element: its IEEE bits, converted
/// like generated code converts them (runtime/tenet_runtime.h). A type of its
/// own, so that with_storage_type tells it from uint16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float x) : bits(float_to_half(x)) {}
  explicit operator float() const { return half_to_float(bits); }
};

/// Storage types whose lanes are floats: float, double and Half.
template <typename S>
constexpr bool is_float_storage = std::is_floating_point_v<S> || std::is_same_v<S, Half>;

/// Calls f(S{}) with S the C type that stores elements of type t.
template <typename F>
decltype(auto) with_storage_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::Bool:
      return f(bool{});
    case ElemType::I8:
      return f(int8_t{});
    case ElemType::U8:
      return f(uint8_t{});
    case ElemType::I16:
      return f(int16_t{});
    case ElemType::I32:
      return f(int32_t{});
    case ElemType::I64:
      return f(int64_t{});
    case ElemType::F32:
      return f(float{});
    case ElemType::F64:
      return f(double{});
    case ElemType::U16:
      return f(uint16_t{});
    case ElemType::U32:
      return f(uint32_t{});
    case ElemType::U64:
      return f(uint64_t{});
    case ElemType::F16:
      return f(Half{});
  }
  return f(double{});
}

/// The C type lanes of a storage type S are computed in: floats in their own
/// type (float32 math rounds to float at every operation), float16 in float,
/// integers in int64 (wrapped back to their width after every operation)
/// except uint64 in uint64, bools as uint8.
template <typename S>
using lane_of = std::conditional_t<
    std::is_floating_point_v<S>, S,
    std::conditional_t<
        std::is_same_v<S, Half>, float,
        std::conditional_t<std::is_same_v<S, bool>, uint8_t,
                           std::conditional_t<std::is_same_v<S, uint64_t>, uint64_t, int64_t>>>>;

/// The domain of a running statement and the current outer point.
struct Domain {
  struct Index {
    std::string name;
    int64_t lo = 0;
    int64_t extent = 0;
    bool in_box = false;
    /// Iterated in the outer part: every index outside the box, and the one
    /// split between the outer part (chunk starts) and the box (positions).
    bool outer = true;
    /// Per lane: the position inside the box (index value = lo + outer + lane).
    std::vector<int64_t> lane_pos;
  };
  std::string statement;       // the result's name, for messages
  std::vector<Index> indices;  // out indices, then reduce indices
  int lanes = 1;               // lanes of a full box
  int tail_lanes = 1;          // lanes of the box at the last chunk of the split index
  /// Current outer position of every index: 0 for indices wholly inside the
  /// box, the chunk start for the one split between outer part and box.
  std::vector<int64_t> outer_pos;
  LoopVars loop_vars;

  int find(const std::string& name) const;
  /// "it = 1, i = 3, k = 0": the loop variables and domain indices at a lane.
  std::string position_at(int lane) const;
};

class Node {
 public:
  virtual ~Node() = default;
  /// Computes lanes [0, n). With a mask, lanes whose byte is 0 are not used
  /// (the untaken side of a select) and must neither fail nor read memory out
  /// of bounds.
  virtual void eval(int n, const uint8_t* mask) = 0;
};

template <typename T>
class LaneNode : public Node {
 public:
  explicit LaneNode(int lanes) : values_(size_t(lanes)) {}
  T* values() { return values_.data(); }

 protected:
  std::vector<T> values_;
};

/// Implemented by reads: lets a fused contraction (interp.cpp) consume the
/// tensor in place instead of through a lane buffer.
template <typename S>
class DirectRead {
 public:
  virtual ~DirectRead() = default;
  /// True when lanes [0, n) are in bounds at the current outer point; lane l
  /// then reads data[base + offsets[l]].
  virtual bool locate(int n, const S*& data, int64_t& base, const int64_t*& offsets) = 0;
};

struct CompileContext {
  const Tensors& tensors;
  const SizeBindings& sizes;
  const Domain& domain;
  std::optional<ElemType> float_type;
  /// Inside computed index `index_dim` of the read `index_read`: its int64
  /// + - * / % and negation are exact or an error (runtime/tenet_index.h's
  /// index_step), never wrapped into the tensor.
  const ExprNode* index_read = nullptr;
  size_t index_dim = 0;
};

/// Throws the error of computed index `d` of `read` at a lane: out of range
/// (op 0, `a` its value, `b` the extent) or an arithmetic step that int64
/// cannot hold (op + - * / % or '~' for negation, on `a` and `b`).
[[noreturn]] void throw_index_error(const ExprNode& read, size_t d, const Domain& domain, int lane,
                                    char op, int64_t a, int64_t b);

/// A read of `src` (the tensor the expression reads, in its effective type);
/// the node is also a DirectRead of the tensor's storage type.
std::unique_ptr<Node> make_read_node(const ExprNode& e, const Tensor& src, const Domain& domain,
                                     const SizeBindings& sizes);

/// A read with a computed index (not a DirectRead).
std::unique_ptr<Node> make_computed_read_node(const ExprNode& e, const Tensor& src,
                                              const CompileContext& ctx);

/// Compiles an expression; the node is a LaneNode<lane_of<S>> where S stores
/// effective_type(e->type).
std::unique_ptr<Node> compile_expr(const Expr& e, const CompileContext& ctx);

}  // namespace tenet::ir::interp
