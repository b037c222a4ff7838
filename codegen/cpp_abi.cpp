// The ABI around a function's body (codegen/cpp.h): the allocating entry
// point, the signature, the packed entry points loaders call and the
// message of their last failure.
#include "codegen/function_emitter.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

}  // namespace

void FunctionEmitter::emit_wrappers(Code& code) const {
  const std::string params = parameter_list(true);
  const std::string args = argument_list();
  code.open("extern \"C\" void " + symbol_ + "(" + params + ")");
  if (memory_.slots.empty()) {
    code.line(symbol_ + "__with_workspace(" + args + (args.empty() ? "" : ", ") + "nullptr);");
  } else {
    code.line(std::string(on_device() ? "tenet::device::Workspace" : "tenet::Workspace") +
              " workspace(" + symbol_ + "__workspace_bytes(" + size_argument_list() + "));");
    code.line(symbol_ + "__with_workspace(" + args + ", workspace.data());");
  }
  code.close();
  code.line("");

  code.open("extern \"C\" const char* " + symbol_ + "__signature(void)");
  // Adjacent string literals, split after "; " so that lines stay short.
  const std::string signature = abi_signature(fn_);
  std::vector<std::string> pieces{""};
  for (size_t i = 0; i < signature.size(); ++i) {
    pieces.back() += signature[i];
    if (signature[i] == ' ' && i > 0 && signature[i - 1] == ';' && pieces.back().size() > 40)
      pieces.emplace_back();
  }
  for (size_t i = 0; i < pieces.size(); ++i)
    code.line((i == 0 ? "return " : "       ") + c_string_literal(pieces[i]) +
              (i + 1 == pieces.size() ? ";" : ""));
  code.close();
}

void FunctionEmitter::emit_packed_wrappers(Code& code) {
  // The entry points for loaders: sizes and buffers as arrays.
  const size_t n_sizes = size_params_.size();
  std::vector<std::string> args;
  for (size_t i = 0; i < n_sizes; ++i) args.push_back("sizes[" + std::to_string(i) + "]");
  std::string sizes_only;
  for (const auto& a : args) sizes_only += (sizes_only.empty() ? "" : ", ") + a;
  size_t b = 0;
  for (const ir::Value* v : abi_inputs_)
    args.push_back("static_cast<const " + c_type(v->type) + "*>(buffers[" + std::to_string(b++) +
                   "])");
  for (const auto& v : fn_.outputs)
    args.push_back("static_cast<" + c_type(v->type) + "*>(buffers[" + std::to_string(b++) + "])");
  std::string all;
  for (const auto& a : args) all += (all.empty() ? "" : ", ") + a;
  auto check_sizes = [&](const std::string& failure) {
    if (n_sizes == 0) {
      code.line("(void)sizes;");
      return;
    }
    code.line("for (int i = 0; i < " + std::to_string(n_sizes) + "; ++i)");
    code.line("  if (sizes[i] < 0) return " + failure + ";");
  };
  if (checks_indices() || on_device()) emit_error_entry(code);

  code.open("extern \"C\" int " + symbol_ + "__packed(const int64_t* sizes, void* const* buffers)");
  check_sizes("1");
  emit_packed_call(code, symbol_ + "(" + all + ");", true);
  code.close();
  code.line("");

  code.open("extern \"C\" int64_t " + symbol_ + "__packed_workspace_bytes(const int64_t* sizes)");
  check_sizes("-1");
  code.line("return " + symbol_ + "__workspace_bytes(" + sizes_only + ");");
  code.close();
  code.line("");

  code.open("extern \"C\" int " + symbol_ +
            "__packed_with_workspace(const int64_t* sizes, void* const* buffers, void* workspace)");
  check_sizes("1");
  // A GPU target's loaders pass host memory: the buffers are copied, the
  // workspace is the device's (tenet_f__with_workspace takes device memory).
  if (on_device()) code.line("(void)workspace;");
  emit_packed_call(
      code, symbol_ + "__with_workspace(" + all + (all.empty() ? "" : ", ") + "workspace);", false);
  code.close();
  if (!on_device()) return;

  // The device-resident entry: the caller's buffers are device memory already.
  code.line("");
  code.open("extern \"C\" int " + symbol_ +
            "__packed_on_device(const int64_t* sizes, void* const* buffers, void* workspace)");
  check_sizes("1");
  emit_packed_call(code,
                   "tenet::device::Workspace owned(workspace ? 0 : " + symbol_ +
                       "__workspace_bytes(" + sizes_only + "));\n" + symbol_ + "__with_workspace(" +
                       all + (all.empty() ? "" : ", ") + "workspace ? workspace : owned.data());",
                   false, false);
  code.close();
}

void FunctionEmitter::emit_packed_call(Code& code, const std::string& call, bool allocates,
                                       bool copies) {
  const bool checks = checks_indices() || on_device();
  if (!checks && !allocates && !on_device()) {
    code.line(call);
    code.line("return 0;");
    return;
  }
  code.open("try");
  if (on_device() && copies) {
    emit_device_call(code);
  } else {
    size_t start = 0;  // one line each
    for (size_t end; (end = call.find('\n', start)) != std::string::npos; start = end + 1)
      code.line(call.substr(start, end - start));
    code.line(call.substr(start));
  }
  if (allocates || on_device()) {
    code.close("} catch (const std::bad_alloc&) {");
    code.line("  return 2;");
    if (checks) code.line("} catch (const tenet::IndexError& e) {");
  } else {
    code.close("} catch (const tenet::IndexError& e) {");
  }
  if (checks) {
    code.line("  " + symbol_ + "__last_error = e.what();");
    code.line("  return 3;");
  }
  if (on_device()) {
    code.line("} catch (const std::exception& e) {  // the device runtime's failure");
    code.line("  " + symbol_ + "__last_error = e.what();");
    code.line("  return 4;");
  }
  code.line("}");
  code.line("return 0;");
}

void FunctionEmitter::emit_error_entry(Code& code) const {
  code.line("static thread_local std::string " + symbol_ + "__last_error;");
  code.line("");
  code.open("extern \"C\" const char* " + symbol_ + "__error(void)");
  code.line("return " + symbol_ + "__last_error.c_str();");
  code.close();
  code.line("");
}

}  // namespace tenet::codegen::detail
