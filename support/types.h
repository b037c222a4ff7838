/// \file
/// Element types shared by the language, the IR, the interpreter and the runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tenet {

/// Bool is the type of comparisons; tensors are never declared Bool.
enum class ElemType : uint8_t { Bool, I8, U8, I16, I32, I64, F32, F64 };

inline bool is_float(ElemType t) {
  return t == ElemType::F32 || t == ElemType::F64;
}
inline bool is_int(ElemType t) {
  return !is_float(t) && t != ElemType::Bool;
}
int byte_size(ElemType t);
/// The smallest and largest value of an integer or bool type (bool: 0 and 1).
std::pair<int64_t, int64_t> int_range(ElemType t);

/// "float32", "int64", ... as written in source and in the IR text form.
std::string_view type_name(ElemType t);
/// The C type generated code uses: "float", "double", "int32_t", ...
std::string_view c_type_name(ElemType t);
/// Accepts the canonical names and the aliases float (float32) and double (float64).
std::optional<ElemType> parse_type_name(std::string_view s);

}  // namespace tenet
