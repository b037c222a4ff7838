// NumPy arrays <-> Tensor (arrays.h).
#include "python/src/arrays.h"

#include <bit>
#include <cstdint>
#include <optional>

#include "support/error.h"

namespace tenet::python {

namespace py = pybind11;

namespace {

std::optional<ElemType> elem_type(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 4) return ElemType::F32;
  if (kind == 'f' && size == 8) return ElemType::F64;
  if (kind == 'i' && size == 1) return ElemType::I8;
  if (kind == 'i' && size == 2) return ElemType::I16;
  if (kind == 'i' && size == 4) return ElemType::I32;
  if (kind == 'i' && size == 8) return ElemType::I64;
  if (kind == 'u' && size == 1) return ElemType::U8;
  if (kind == 'u' && size == 2) return ElemType::U16;
  if (kind == 'u' && size == 4) return ElemType::U32;
  if (kind == 'u' && size == 8) return ElemType::U64;
  if (kind == 'f' && size == 2) return ElemType::F16;  // IEEE half, as float16 tensors store it
  if (kind == 'b' && size == 1) return ElemType::Bool;
  return std::nullopt;
}

py::dtype numpy_dtype(ElemType t) {
  switch (t) {
    case ElemType::F32:
      return py::dtype::of<float>();
    case ElemType::F64:
      return py::dtype::of<double>();
    case ElemType::I8:
      return py::dtype::of<int8_t>();
    case ElemType::I16:
      return py::dtype::of<int16_t>();
    case ElemType::I32:
      return py::dtype::of<int32_t>();
    case ElemType::I64:
      return py::dtype::of<int64_t>();
    case ElemType::U8:
      return py::dtype::of<uint8_t>();
    case ElemType::Bool:
      return py::dtype::of<bool>();
    case ElemType::U16:
      return py::dtype::of<uint16_t>();
    case ElemType::U32:
      return py::dtype::of<uint32_t>();
    case ElemType::U64:
      return py::dtype::of<uint64_t>();
    case ElemType::F16:
      return py::dtype("float16");
  }
  TENET_UNREACHABLE("unknown element type");
}

}  // namespace

RawInput raw_input(const py::array& array, const std::string& name) {
  const std::optional<ElemType> type = elem_type(array.dtype());
  if (!type)
    throw BindError("input '" + name + "': numpy dtype " + std::string(py::str(array.dtype())) +
                    " is not a Tenet element type");
  // The tenet package converts what it is given (arguments.to_numpy); a
  // direct caller of this module gets an error, never byte-swapped or
  // misread values.
  const char order = array.dtype().byteorder();
  const char native = std::endian::native == std::endian::little ? '<' : '>';
  if (order != '=' && order != '|' && order != native)
    throw BindError("input '" + name + "': numpy dtype " + std::string(py::str(array.dtype())) +
                    " is not in the machine's byte order (convert with "
                    "array.astype(array.dtype.newbyteorder('=')))");
  if (!(array.flags() & py::array::c_style))
    throw BindError("input '" + name +
                    "': the array is not C-contiguous (np.ascontiguousarray makes a copy that is)");
  if (reinterpret_cast<uintptr_t>(array.data()) % uintptr_t(array.itemsize()) != 0)
    throw BindError("input '" + name + "': the array's data is not aligned to its " +
                    std::to_string(array.itemsize()) + "-byte elements (np.require(array, " +
                    "requirements='CA') makes an aligned copy)");
  return RawInput{*type, std::vector<int64_t>(array.shape(), array.shape() + array.ndim()),
                  array.data()};
}

py::array to_numpy(const Tensor& tensor) {
  auto* owner = new Tensor(tensor);  // copies share the memory
  py::capsule keep_alive(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  return py::array(numpy_dtype(tensor.type()), shape, owner->raw(), keep_alive);
}

}  // namespace tenet::python
