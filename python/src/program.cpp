// Programs and their variants for the Python module (program.h).
#include "python/src/program.h"

#include "ad/retype.h"
#include "ir/bind.h"
#include "ir/builder.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "lang/unparse.h"
#include "passes/pipeline.h"
#include "python/src/kernel.h"

namespace tenet::python {

namespace {

TensorInfo describe_value(const ir::Value& v, const std::string& name) {
  TensorInfo t{name, std::string(type_name(v.type)), {}};
  for (const ir::SizeExpr& d : v.shape) t.shape.push_back(d.str());
  return t;
}

}  // namespace

FunctionInfo describe(const ir::Function& fn) {
  FunctionInfo info{fn.name, fn.size_params, {}, {}};
  for (const ir::ValuePtr& v : fn.inputs) info.inputs.push_back(describe_value(*v, v->name));
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    info.outputs.push_back(describe_value(*fn.outputs[i], fn.output_names[i]));
  return info;
}

Program::Program(const std::string& source, const std::string& filename)
    : file_(std::make_shared<const SourceFile>(filename, source)),
      module_(lang::compile_source(*file_)) {}

std::vector<std::string> Program::function_names() const {
  std::vector<std::string> names;
  for (const ir::Function& f : module_.functions) names.push_back(f.name);
  return names;
}

const ir::Function& Program::entry(const std::string& name) const {
  if (const ir::Function* f = module_.find(name)) return *f;
  std::string names;
  for (const std::string& n : function_names()) names += (names.empty() ? "" : ", ") + n;
  throw CompileError(file_->path() + ": error: no function named '" + name +
                     "' (functions: " + names + ")");
}

ad::GradRequest Program::complete(const ir::Function& fn, ad::GradRequest req) const {
  if (req.vjp || !req.output.empty() || fn.outputs.size() < 2) return req;
  std::vector<std::string> scalars;
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (fn.outputs[i]->rank() == 0 && is_float(fn.outputs[i]->type))
      scalars.push_back(fn.output_names[i]);
  if (scalars.size() == 1) req.output = scalars[0];
  return req;
}

ir::Function Program::derive(const Variant& v) const {
  const ir::Function& declared = entry(v.entry);
  if (!v.grad) return v.float64 ? ad::with_float_type(declared, ElemType::F64) : declared.clone();
  const ad::GradRequest req = complete(declared, *v.grad);
  if (!v.float64) return ad::differentiate(declared, req, file_.get());
  // Request errors point into the source: check the request on the declared
  // function before differentiating the promoted copy (whose spans are the same).
  ad::resolve_wrt(declared, req, file_.get());
  ad::resolve_outputs(declared, req, file_.get());
  return ad::differentiate(ad::with_float_type(declared, ElemType::F64), req, file_.get());
}

FunctionInfo Program::info(const Variant& v) const {
  return describe(derive(v));
}

std::string Program::unparse(const Variant& v) const {
  return lang::unparse(derive(v));
}

std::unique_ptr<Kernel> Program::compile(const Variant& v,
                                         const codegen::JitOptions& options) const {
  ir::Function fn = derive(v);
  FunctionInfo info = describe(fn);
  ir::Module m;
  m.functions.push_back(std::move(fn));
  passes::run_pipeline(m);
  return std::make_unique<Kernel>(codegen::jit_compile(m, m.functions.front().name, options),
                                  std::move(info));
}

std::vector<Tensor> Program::interpret(const Variant& v, const std::vector<Tensor>& inputs,
                                       const ir::SizeBindings& given) const {
  ir::InterpOptions options;
  if (v.float64) options.float_type = ElemType::F64;
  return ir::interpret(derive(v), inputs, given, options);
}

std::vector<Tensor> Program::random_inputs(const Variant& v, const ir::SizeBindings& sizes,
                                           uint64_t seed) const {
  return ir::random_inputs(derive(v), sizes, seed);
}

ad::GradcheckReport Program::gradcheck(const std::string& name,
                                       ad::GradcheckOptions options) const {
  const ir::Function& fn = entry(name);
  options.request = complete(fn, options.request);
  ad::resolve_wrt(fn, options.request, file_.get());  // request errors with carets
  ad::resolve_outputs(fn, options.request, file_.get());
  return ad::gradcheck(fn, options);
}

}  // namespace tenet::python
