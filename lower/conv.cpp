#include "lower/conv.h"

#include "ir/mutator.h"
#include "lower/lowered_function.h"

namespace tenet::lower {

namespace {

ConvLowering lower_conv(const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  ConvLowering out;
  out.plan = *s.annotations.conv;
  auto factor = [&](int k) { return c.body->args.at(size_t(k))->tensor.get(); };
  switch (out.plan.role) {
    case ir::ConvRole::Forward:
      out.operands = {factor(out.plan.image), factor(out.plan.filter)};
      break;
    case ir::ConvRole::BackwardData:
      out.operands = {factor(out.plan.grad), factor(out.plan.filter)};
      break;
    case ir::ConvRole::BackwardWeights:
      out.operands = {factor(out.plan.image), factor(out.plan.grad)};
      break;
  }
  out.result = c.result.get();
  out.start = c.init.get();
  out.description = ir::describe(out.plan, c);
  return out;
}

}  // namespace

void lower_convs(LoweredFunction& lowered) {
  ir::for_each_stmt(lowered.function->body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Compute && s.annotations.conv && lowered.liveness.live(s.compute))
      lowered.convs.emplace(&s, lower_conv(s));
  });
}

}  // namespace tenet::lower
