/// \file
/// Binding concrete tensors to a Function's inputs: solves the size parameters
/// from the input shapes (plus any given explicitly) and checks every input's
/// element type and shape. Shared by the interpreter and the compiled backends.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::ir {

/// Returns every size parameter's value. Throws BindError with a message that
/// names the input, the expected shape (with symbols and their values) and the
/// actual one, e.g.
///   input 's': expected float32[B, N, D] = [2, 3, 4], got float32[2, 3, 5]
/// Also checks that every output and intermediate range is non-negative.
SizeBindings bind_sizes(const Function& fn, const std::vector<Tensor>& inputs,
                        const SizeBindings& given = {});
/// The same from the inputs' types and shapes alone (buffers elsewhere: a device's).
SizeBindings bind_shapes(const Function& fn, const std::vector<TensorShape>& inputs,
                         const SizeBindings& given = {});

/// The checks bind_sizes makes once the sizes are known, for sizes given
/// without tensors: none is negative, every size parameter the function uses
/// is bound, every range and shape is non-negative, and nothing overflows 64
/// bits: no size expression, tensor element count or byte size
/// (support/checked.h), range length, or read index over its statement's
/// domain (BindError otherwise, naming the tensor or read and the sizes).
/// The interpreter and generated code compute with plain int64_t after it.
void check_sizes(const Function& fn, const SizeBindings& sizes);

/// Concrete shape of a value under bindings.
std::vector<int64_t> concrete_shape(const Value& v, const SizeBindings& sizes);

/// A zero-filled tensor for `v` under bindings (of `type` when given, else
/// v's); a BindError names v and its shape when its byte size overflows or
/// the machine cannot give that much memory.
Tensor allocate(const Value& v, const SizeBindings& sizes,
                std::optional<ElemType> type = std::nullopt);

/// Random inputs for a function (used by `tenet run` without --inputs):
/// input i gets random_tensor(type, shape, seed + i); integer inputs are
/// drawn in [0, int_hi).
std::vector<Tensor> random_inputs(const Function& fn, const SizeBindings& sizes, uint64_t seed,
                                  int64_t int_hi = 10);

}  // namespace tenet::ir
