// Convolutions as calls of the convolution library (runtime/tenet_conv.h),
// printed from their plan (ir/conv_plan.h).
#include <string>

#include "codegen/function_emitter.h"
#include "ir/conv_plan.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_conv(Code& code, const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  const ir::ConvPlan& plan = *s.annotations.conv;
  code.comment(comment_text(s));
  code.note("By the convolution library: " + ir::describe(plan, c) + ".");
  auto size = [&](const ir::SizeExpr& e) { return size_to_c(e, size_names_).text; };
  const std::string problem = "tenet::Conv2dProblem{" + size(plan.batch) + ", " +
                              size(plan.in_channels) + ", " + size(plan.out_channels) + ", " +
                              size(plan.in_h) + ", " + size(plan.in_w) + ", " + size(plan.out_h) +
                              ", " + size(plan.out_w) + ", " + size(plan.kernel_h) + ", " +
                              size(plan.kernel_w) + ", " + std::to_string(plan.stride_h) + ", " +
                              std::to_string(plan.stride_w) + ", " + std::to_string(plan.pad_top) +
                              ", " + std::to_string(plan.pad_left) + ", " + size(plan.groups) + "}";
  // A tensor as the library's arguments: its pointer and its four strides.
  auto tensor = [&](const ir::ValuePtr& v) {
    const TensorAccess& t = access(v);
    std::string strides;
    for (const std::string& stride : t.strides) strides += (strides.empty() ? "" : ", ") + stride;
    return t.pointer + ", tenet::Strides4{{" + strides + "}}";
  };
  auto factor = [&](int k) { return tensor(c.body->args[size_t(k)]->tensor); };
  const std::string result = tensor(c.result);
  switch (plan.role) {
    case ir::ConvRole::Forward:
      code.line("tenet::conv2d_forward(" + problem + ", " + factor(plan.image) + ", " +
                factor(plan.filter) + ", " + result + ");");
      break;
    case ir::ConvRole::BackwardData:
      code.line("tenet::conv2d_backward_data(" + problem + ", " + factor(plan.grad) + ", " +
                factor(plan.filter) + ", " + result + ");");
      break;
    case ir::ConvRole::BackwardWeights:
      code.line("tenet::conv2d_backward_weights(" + problem + ", " + factor(plan.image) + ", " +
                factor(plan.grad) + ", " + result + ");");
      break;
  }
}

}  // namespace tenet::codegen::detail
