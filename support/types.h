/// \file
/// Element types shared by the language, the IR, the interpreter and the runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tenet {

/// Bool is the type of comparisons and of bool tensors. F16 (IEEE half) is a
/// storage type only: a float16 tensor's elements are read as float32 and
/// computed in float32 (compute_type), and rounded to half when stored.
/// The types added later come last, so that the numbering of the others stays.
enum class ElemType : uint8_t { Bool, I8, U8, I16, I32, I64, F32, F64, U16, U32, U64, F16 };

inline bool is_float(ElemType t) {
  return t == ElemType::F32 || t == ElemType::F64 || t == ElemType::F16;
}
inline bool is_int(ElemType t) {
  return !is_float(t) && t != ElemType::Bool;
}
inline bool is_unsigned(ElemType t) {
  return t == ElemType::U8 || t == ElemType::U16 || t == ElemType::U32 || t == ElemType::U64;
}
/// The type a tensor's elements are computed in: float32 for float16, else the type itself.
inline ElemType compute_type(ElemType t) {
  return t == ElemType::F16 ? ElemType::F32 : t;
}
int byte_size(ElemType t);
/// The smallest and largest value of an integer or bool type (bool: 0 and 1;
/// uint64: 0 and INT64_MAX, since 2^64 - 1 is beyond int64).
std::pair<int64_t, int64_t> int_range(ElemType t);

/// "float32", "int64", ... as written in source and in the IR text form.
std::string_view type_name(ElemType t);
/// The C type generated code stores elements in: "float", "double", "int32_t",
/// ..., "uint16_t" for float16 (its bits; runtime/tenet_runtime.h converts them).
std::string_view c_type_name(ElemType t);
/// Accepts the canonical names and the aliases float (float32), double
/// (float64) and int (int32).
std::optional<ElemType> parse_type_name(std::string_view s);

}  // namespace tenet
