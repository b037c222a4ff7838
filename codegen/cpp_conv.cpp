// Convolutions as calls of the convolution library (runtime/tenet_conv.h),
// printed from their lowering (lower/conv.h).
#include <string>

#include "codegen/function_emitter.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_conv(Code& code, const ir::Stmt& s) {
  const lower::ConvLowering& conv = lowered_.convs.at(&s);
  const ir::ConvPlan& plan = conv.plan;
  code.comment(comment_text(s));
  code.note("By the convolution library: " + conv.description + ".");
  auto size = [&](const ir::SizeExpr& e) { return size_to_c(e, size_names_).text; };
  const std::string problem = "tenet::Conv2dProblem{" + size(plan.batch) + ", " +
                              size(plan.in_channels) + ", " + size(plan.out_channels) + ", " +
                              size(plan.in_h) + ", " + size(plan.in_w) + ", " + size(plan.out_h) +
                              ", " + size(plan.out_w) + ", " + size(plan.kernel_h) + ", " +
                              size(plan.kernel_w) + ", " + std::to_string(plan.stride_h) + ", " +
                              std::to_string(plan.stride_w) + ", " + std::to_string(plan.pad_top) +
                              ", " + std::to_string(plan.pad_left) + ", " + size(plan.groups) + "}";
  // A tensor as the library's arguments: its pointer and its four strides.
  auto tensor = [&](const ir::Value* v) {
    const TensorAccess& t = access_of(v);
    std::string strides;
    for (const std::string& stride : t.strides) strides += (strides.empty() ? "" : ", ") + stride;
    return t.pointer + ", tenet::Strides4{{" + strides + "}}";
  };
  const char* function = plan.role == ir::ConvRole::Forward ? "tenet::conv2d_forward"
                         : plan.role == ir::ConvRole::BackwardData
                             ? "tenet::conv2d_backward_data"
                             : "tenet::conv2d_backward_weights";
  code.line(std::string(function) + "(" + problem + ", " + tensor(conv.operands[0]) + ", " +
            tensor(conv.operands[1]) + ", " + tensor(conv.result) + ");");
}

}  // namespace tenet::codegen::detail
