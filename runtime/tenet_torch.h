/// \file
/// What the PyTorch extensions Tenet writes (`tenet emit FILE --target torch`,
/// extension/torch_project.h) share: the checks of an operator's arguments,
/// size arithmetic over PyTorch's symbolic integers, and the call of a
/// generated C function with its errors turned into PyTorch's.
///
/// The generated operator source includes this header with PyTorch's (it is
/// the one runtime header that needs them); the kernels it calls are plain
/// generated C++ (tenet_runtime.h) and never see PyTorch.
///
/// Every check names the operator and the argument, and says what was
/// expected and what came: a wrong dtype is a TypeError in Python, a wrong
/// rank or shape a ValueError, a computed index out of range an IndexError.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/SymInt.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <new>
#include <sstream>
#include <string>

#include "tenet_index.h"

namespace tenet::torch_ext {

/// Floor division by a positive constant, as size expressions mean it (the
/// IR's `//`): concrete values round down, symbolic ones become sympy's
/// FloorDiv (what SymInt's own `/` makes of them).
inline c10::SymInt floor_div(const c10::SymInt& a, int64_t divisor) {
  if (auto value = a.maybe_as_int()) {
    int64_t q = *value / divisor;
    if ((*value % divisor != 0) && ((*value < 0) != (divisor < 0))) --q;
    return c10::SymInt(q);
  }
  return a / c10::SymInt(divisor);
}
inline c10::SymInt min(const c10::SymInt& a, const c10::SymInt& b) {
  return a.min(b);
}
inline c10::SymInt max(const c10::SymInt& a, const c10::SymInt& b) {
  return a.max(b);
}

/// A dtype as Python spells it: "float32", "int64", ...
inline const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    case at::kShort:
      return "int16";
    case at::kChar:
      return "int8";
    case at::kByte:
      return "uint8";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(t);
  }
}

/// Whether a call runs the float64 kernels: every float argument (those the
/// source declares `float`) is float64. Otherwise the float32 kernels run,
/// and an argument of another dtype is refused by check_input.
inline bool all_float64(std::initializer_list<const at::Tensor*> floats) {
  if (floats.size() == 0) return false;
  for (const at::Tensor* t : floats)
    if (t->scalar_type() != at::kDouble) return false;
  return true;
}

/// The dtype and rank of argument `name` of `op`; `declared` is its shape as
/// the source declares it ("[B, I]"), `is_float` says that float32 and
/// float64 would both do (all float arguments alike).
inline void check_input(const char* op, const char* kind, const char* name, const at::Tensor& t,
                        at::ScalarType dtype, bool is_float, int64_t rank, const char* declared) {
  TORCH_CHECK_VALUE(t.defined(), op, ": ", kind, " '", name, "' is an undefined tensor");
  TORCH_CHECK_TYPE(t.scalar_type() == dtype, op, ": ", kind, " '", name, "' is ",
                   dtype_name(t.scalar_type()), ", expected ", dtype_name(dtype),
                   is_float ? " (the float arguments are all float32, or all float64)" : "");
  TORCH_CHECK_VALUE(t.dim() == rank, op, ": ", kind, " '", name, "' has ", t.dim(), " dimension",
                    t.dim() == 1 ? "" : "s", ", expected ", rank, " (", declared, ")");
}

/// A shape as text: "[4, 128]" (symbolic sizes as PyTorch prints them).
inline std::string shape_text(c10::SymIntArrayRef shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

/// Argument `name`'s shape is `expected` (the declared shape `declared`
/// under the size parameters bound so far). Its rank was checked.
inline void check_shape(const char* op, const char* kind, const char* name, const at::Tensor& t,
                        const char* declared, std::initializer_list<c10::SymInt> expected) {
  const c10::SymIntArrayRef actual = t.sym_sizes();
  size_t d = 0;
  for (const c10::SymInt& e : expected) {
    TORCH_CHECK_VALUE(actual[d] == e, op, ": ", kind, " '", name, "': expected shape ", declared,
                      " = ", shape_text(c10::SymIntArrayRef(expected.begin(), expected.size())),
                      ", got ", shape_text(actual));
    ++d;
  }
}

/// An output dimension that the source computes ("(H - 9) / 2 + 1") is not
/// negative for these inputs.
inline void check_output_size(const char* op, const char* output, const char* declared,
                              const c10::SymInt& size) {
  TORCH_CHECK_VALUE(size >= 0, op, ": output '", output, "' would have dimension ", declared, " = ",
                    size, " < 0 for these input shapes");
}

/// A size parameter fixed when the extension was written (--sizes) that an
/// input's shape contradicts.
inline void check_fixed_size(const char* op, const char* parameter, int64_t fixed,
                             const c10::SymInt& actual) {
  TORCH_CHECK_VALUE(actual == fixed, op, ": size parameter ", parameter, " is fixed at ", fixed,
                    " in this extension, but the inputs make it ", actual);
}

/// Runs a generated C function, turning its exceptions into PyTorch's.
template <class Call>
void run(const char* op, Call&& call) {
  try {
    call();
  } catch (const tenet::IndexError& e) {
    TORCH_CHECK_INDEX(false, op, ": ", e.what());
  } catch (const std::bad_alloc&) {
    TORCH_CHECK(false, op, ": out of memory for the kernel's scratch space");
  } catch (const std::exception& e) {
    TORCH_CHECK(false, op, ": ", e.what());
  }
}

}  // namespace tenet::torch_ext
