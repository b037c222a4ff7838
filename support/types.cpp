#include "support/types.h"

namespace tenet {

int byte_size(ElemType t) {
  switch (t) {
    case ElemType::Bool:
    case ElemType::I8:
    case ElemType::U8:
      return 1;
    case ElemType::I16:
    case ElemType::U16:
    case ElemType::F16:
      return 2;
    case ElemType::I32:
    case ElemType::U32:
    case ElemType::F32:
      return 4;
    case ElemType::I64:
    case ElemType::U64:
    case ElemType::F64:
      return 8;
  }
  return 0;
}

std::pair<int64_t, int64_t> int_range(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return {0, 1};
    case ElemType::I8:
      return {INT8_MIN, INT8_MAX};
    case ElemType::U8:
      return {0, UINT8_MAX};
    case ElemType::I16:
      return {INT16_MIN, INT16_MAX};
    case ElemType::U16:
      return {0, UINT16_MAX};
    case ElemType::I32:
      return {INT32_MIN, INT32_MAX};
    case ElemType::U32:
      return {0, UINT32_MAX};
    case ElemType::U64:
      return {0, INT64_MAX};  // the largest, 2^64 - 1, is beyond int64
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

std::string_view type_name(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return "bool";
    case ElemType::I8:
      return "int8";
    case ElemType::U8:
      return "uint8";
    case ElemType::I16:
      return "int16";
    case ElemType::I32:
      return "int32";
    case ElemType::I64:
      return "int64";
    case ElemType::F32:
      return "float32";
    case ElemType::F64:
      return "float64";
    case ElemType::U16:
      return "uint16";
    case ElemType::U32:
      return "uint32";
    case ElemType::U64:
      return "uint64";
    case ElemType::F16:
      return "float16";
  }
  return "?";
}

std::string_view c_type_name(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return "bool";
    case ElemType::I8:
      return "int8_t";
    case ElemType::U8:
      return "uint8_t";
    case ElemType::I16:
      return "int16_t";
    case ElemType::I32:
      return "int32_t";
    case ElemType::I64:
      return "int64_t";
    case ElemType::F32:
      return "float";
    case ElemType::F64:
      return "double";
    case ElemType::U16:
      return "uint16_t";
    case ElemType::U32:
      return "uint32_t";
    case ElemType::U64:
      return "uint64_t";
    case ElemType::F16:
      return "uint16_t";  // the IEEE bits: C has no half type
  }
  return "?";
}

std::optional<ElemType> parse_type_name(std::string_view s) {
  if (s == "float" || s == "float32") return ElemType::F32;
  if (s == "double" || s == "float64") return ElemType::F64;
  if (s == "int8") return ElemType::I8;
  if (s == "uint8") return ElemType::U8;
  if (s == "int16") return ElemType::I16;
  if (s == "int32" || s == "int") return ElemType::I32;
  if (s == "int64") return ElemType::I64;
  if (s == "uint16") return ElemType::U16;
  if (s == "uint32") return ElemType::U32;
  if (s == "uint64") return ElemType::U64;
  if (s == "float16") return ElemType::F16;
  if (s == "bool") return ElemType::Bool;
  return std::nullopt;
}

}  // namespace tenet
