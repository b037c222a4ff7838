#include "ad/retype.h"

#include <map>

#include "ad/unroll.h"
#include "ir/builder.h"
#include "support/error.h"

namespace tenet::ad {

ir::Function with_float_type(const ir::Function& fn, ElemType float_type) {
  ir::FunctionBuilder fb(fn.name, fn.span);
  for (const std::string& s : fn.size_params) fb.size_param(s);
  std::map<const ir::Value*, ir::ValuePtr> inputs;
  for (const ir::ValuePtr& v : fn.inputs) {
    const ElemType t = is_float(v->type) ? float_type : v->type;
    inputs[v.get()] = fb.input(v->name, t, v->shape, v->span);
  }
  FailAt fail = [](Span, const std::string& message) { throw CompileError("error: " + message); };
  ForwardCopy copy = copy_forward(fn, fb, inputs, fail, float_type);
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    fb.output(copy.values.at(fn.outputs[i].get()), fn.output_names[i], fn.gradient_of(i));
  return fb.finish();
}

}  // namespace tenet::ad
