#include "codegen/cpp.h"

#include <cctype>
#include <set>

#include "codegen/c_text.h"
#include "codegen/function_emitter.h"
#include "lower/lowered.h"
#include "support/error.h"

namespace tenet::codegen {

namespace {

/// The runtime headers (runtime/*.h) that sit beside a unit's own files: a
/// unit must not be named like one ("#include \"tenet_gemm.h\"" would find it).
bool names_a_runtime_header(const std::string& unit) {
  return unit == "tenet_runtime" || unit == "tenet_gemm" || unit == "tenet_conv";
}

/// A plain identifier with no "__" (which would read as the separator of an
/// entry point's suffix) and no leading '_'.
bool is_plain_name(const std::string& name) {
  if (name.empty() || name[0] == '_' || name.find("__") != std::string::npos) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string shape_text(const std::string& name, const ir::Value& v) {
  std::string out = std::string(type_name(v.type)) + " " + name + "[";
  for (size_t d = 0; d < v.shape.size(); ++d) out += (d ? ", " : "") + v.shape[d].str();
  return out + "]";
}

}  // namespace

std::string cuda_unit_symbol(const std::string& unit) {
  std::string out = unit;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  return out;
}

std::string c_symbol(const ir::Function& fn) {
  if (is_plain_name(fn.name)) return "tenet_" + fn.name;
  // Anything else is spelled with escapes, under a prefix no plain name gets:
  // 'u' as "uu", '_' as "u_", another byte as "ux" and two hex digits. The
  // code is prefix-free, so distinct names stay distinct, and it never makes
  // "__" or starts with '_'.
  static const char* hex = "0123456789abcdef";
  std::string out = "tenetx_";
  for (unsigned char c : fn.name) {
    if (c == 'u' || c == '_') {
      out += 'u';
      out += char(c);
    } else if (std::isalnum(c)) {
      out += char(c);
    } else {
      out += "ux";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string abi_signature(const ir::Function& fn) {
  std::string out = "tenet-abi-3 " + c_symbol(fn) + "(sizes";
  for (size_t i = 0; i < fn.size_params.size(); ++i) out += (i ? ", " : " ") + fn.size_params[i];
  out += ";";
  for (size_t k = 0; k < fn.inputs.size(); ++k)
    if (!detail::is_updated_input(fn, k))
      out += " in " + shape_text(fn.inputs[k]->name, *fn.inputs[k]) + ";";
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    out += std::string(fn.updated_input(i) >= 0 ? " inout " : " out ") +
           shape_text(detail::output_name(fn, i), *fn.outputs[i]) +
           (i + 1 < fn.outputs.size() ? ";" : "");
  return out + ")";
}

namespace {

/// The device runtime a GPU target's host code calls as tenet::device: the
/// grid emulator's or CUDA's (after tenet_gemm.h, whose GEMM the emulator's
/// forwards to).
std::string device_runtime(CppOptions::Kernels kernels, const std::string& unit) {
  switch (kernels) {
    case CppOptions::Kernels::None:
      return "";
    case CppOptions::Kernels::Emulated:
      return "#include \"tenet_emulator.h\"\n";
    case CppOptions::Kernels::Cuda:  // its runtime is the unit's own (tenet_cuda.h)
      return "#define TENET_CUDA_UNIT " + unit + "\n#include \"tenet_cuda.h\"\n";
  }
  return "";
}

}  // namespace

/// The runtime headers a unit includes (runtime/): the profile's first, so
/// that the libraries' headers see TENET_PROFILE.
std::string runtime_includes(const CppOptions& options, bool uses_gemm, bool uses_conv,
                             bool checks_indices, const std::string& unit) {
  return std::string(options.profile ? "#define TENET_PROFILE 1\n#include \"tenet_profile.h\"\n"
                                     : "") +
         (uses_gemm ? "#include \"tenet_gemm.h\"\n" : "") +
         (uses_conv ? "#include \"tenet_conv.h\"\n" : "") +
         (checks_indices ? "#include \"tenet_index.h\"\n" : "") + "#include \"tenet_runtime.h\"\n" +
         device_runtime(options.kernels, cuda_unit_symbol(unit));
}

/// A CUDA unit's `<unit>__load_kernels`: the loader hands it the kernels of
/// the unit's .cu, compiled for the GPU at hand, before any call.
static std::string cuda_loader(const std::string& unit) {
  return "\n/// The loader hands over the kernels of " + unit +
         ".cu, compiled for the GPU at hand, before any call: null,\n"
         "/// or why they do not load.\n"
         "extern \"C\" const char* " +
         cuda_unit_symbol(unit) +
         "__load_kernels(const void* cubin) {\n"
         "  static thread_local std::string error;\n"
         "  try {\n"
         "    tenet::cuda::load_kernels(cubin);\n"
         "    return nullptr;\n"
         "  } catch (const std::exception& e) {\n"
         "    error = e.what();\n"
         "    return error.c_str();\n"
         "  }\n"
         "}\n";
}

CppUnit emit_cpp(const std::vector<const lower::LoweredFunction*>& functions,
                 const CppOptions& options) {
  TENET_ASSERT(!functions.empty(), "emit_cpp: no functions to emit");
  std::string unit = options.unit_name;
  if (unit.empty())
    unit = functions.size() == 1 ? c_symbol(*functions[0]->function) : "tenet_kernels";
  if (names_a_runtime_header(unit)) unit += "_kernels";
  CppUnit out;
  out.unit_name = unit;
  out.header_name = unit + ".h";
  out.source_name = unit + ".cpp";

  std::set<std::string> symbols;
  std::string declarations, definitions, kernels;
  bool uses_bool = false, uses_half = false, checks_indices = false, uses_conv = false;
  for (const lower::LoweredFunction* lowered : functions) {
    const ir::Function* f = lowered->function;
    std::string symbol = c_symbol(*f);
    TENET_ASSERT(symbols.insert(symbol).second,
                 "emit_cpp: two functions would both be called '" << symbol << "'");
    detail::FunctionEmitter emitter(*lowered, symbol, options);
    declarations += (declarations.empty() ? "" : "\n") + emitter.declarations();
    definitions += "\n" + emitter.definitions();
    for (const std::string& kernel : emitter.kernels()) kernels += "\n" + kernel;
    out.uses_gemm = out.uses_gemm || emitter.uses_gemm() || emitter.uses_conv();
    uses_conv = uses_conv || emitter.uses_conv();
    checks_indices = checks_indices || emitter.checks_indices();
    for (const auto* values : {&f->inputs, &f->outputs}) {
      for (const auto& v : *values) {
        uses_bool |= v->type == ElemType::Bool;
        uses_half |= v->type == ElemType::F16;
      }
    }
  }

  // A GPU's GEMMs are cuBLAS' (tenet_cuda.h), not a CPU BLAS.
  if (options.kernels == CppOptions::Kernels::Cuda) {
    out.uses_gemm = false;
    out.uses_cuda = true;
  }
  const std::string origin =
      options.origin.empty() ? "" : " from " + detail::comment_text(options.origin);
  const std::string banner = "// Generated by Tenet" + origin + ". Do not edit: regenerate it.\n";
  out.header =
      "// " + out.header_name + ": C interface of " + out.source_name + ".\n" + banner +
      "#pragma once\n\n#include <stdint.h>\n" + (uses_bool ? "#include <stdbool.h>\n" : "") +
      (uses_half ? "\n// float16 buffers hold IEEE binary16 bit patterns (numpy's float16);\n"
                   "// tenet_runtime.h's half_to_float and float_to_half convert them.\n"
                 : "") +
      "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" + declarations +
      "\n#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n";
  out.source =
      "// " + out.source_name + "\n" + banner + "#include \"" + out.header_name +
      "\"\n\n#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include "
      "<limits>\n#include <new>\n#include <vector>\n" +
      (checks_indices || options.kernels != CppOptions::Kernels::None ? "#include <string>\n"
                                                                      : "") +
      "\n" + runtime_includes(options, out.uses_gemm, uses_conv, checks_indices, unit) +
      definitions;
  if (options.kernels == CppOptions::Kernels::Cuda) {
    out.source += cuda_loader(unit);
    out.kernels_name = unit + ".cu";
    out.kernels = "// " + out.kernels_name + ": the kernels " + out.source_name + " launches.\n" +
                  banner + "#include \"tenet_cuda_device.h\"\n" + kernels;
  }
  return out;
}

}  // namespace tenet::codegen
