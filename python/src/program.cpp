// Programs and their variants for the Python module (program.h).
#include "python/src/program.h"

#include "driver/front_end.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/unparse.h"
#include "python/src/kernel.h"

namespace tenet::python {

namespace {

TensorInfo describe_value(const ir::Value& v, const std::string& name) {
  TensorInfo t{name, std::string(type_name(v.type)), {}, v.shape};
  for (const ir::SizeExpr& d : v.shape) t.shape.push_back(d.str());
  return t;
}

}  // namespace

FunctionInfo describe(const ir::Function& fn) {
  FunctionInfo info{fn.name, fn.size_params, {}, {}};
  for (const ir::ValuePtr& v : fn.inputs) info.inputs.push_back(describe_value(*v, v->name));
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    info.outputs.push_back(describe_value(*fn.outputs[i], fn.output_names[i]));
    info.outputs.back().updates = fn.updated_input(i);
    info.outputs.back().gradient_of = fn.gradient_of(i);
  }
  return info;
}

namespace {

driver::Request request_for(const SourceFile& file, const std::string& stop_after) {
  driver::Request r;
  r.path = file.path();
  r.text = file.text();
  r.stop_after = stop_after;
  return r;
}

driver::Compilation front_end(const std::string& source, const std::string& filename) {
  const SourceFile file(filename, source);
  return driver::front_end(request_for(file, ""));
}

}  // namespace

CheckedProgram::CheckedProgram(const std::string& source, const std::string& filename)
    : front_(front_end(source, filename)) {}

std::vector<std::string> CheckedProgram::function_names() const {
  std::vector<std::string> names;
  for (const ir::Function& f : front_.checked->functions) names.push_back(f.name);
  return names;
}

std::string CheckedProgram::default_entry() const {
  return driver::default_entry(front_, "entry=NAME").name;
}

std::vector<std::string> CheckedProgram::warnings() const {
  std::vector<std::string> out;
  for (const Diagnostic& d : front_.warnings) out.push_back(render(*front_.file, d));
  return out;
}

driver::Request CheckedProgram::request(const Variant& v, const std::string& stop_after) const {
  driver::Request r = request_for(*front_.file, stop_after);
  r.functions = {{v.entry, v.grad}};
  if (v.float64) r.float_type = ElemType::F64;
  r.static_sizes = v.static_sizes;
  return r;
}

driver::Compilation CheckedProgram::compile_variant(const Variant& v,
                                                    const std::string& stop_after) const {
  return driver::compile(request(v, stop_after), front_);
}

namespace {

bool is_half(const Variant& v) {
  return v.grad && v.grad->half != ad::VjpHalf::Both;
}

/// The function a compilation of one variant made, as its callers see it: as
/// derived, or for one half of a vector-Jacobian program, as cut (the cut
/// follows the optimisation passes, driver/driver.h).
const ir::Function& interface_of(const Variant& v, const driver::Compilation& c) {
  return is_half(v) ? c.optimised.functions.at(0) : c.derived.functions.at(0);
}

}  // namespace

ir::Function CheckedProgram::derive(const Variant& v) const {
  const driver::Compilation c =
      compile_variant(v, is_half(v) ? driver::stage::kSplit : driver::stage::kAd);
  return interface_of(v, c).clone();
}

FunctionInfo CheckedProgram::info(const Variant& v) const {
  return describe(derive(v));
}

std::string CheckedProgram::unparse(const Variant& v) const {
  return lang::unparse(derive(v));
}

codegen::CppUnit CheckedProgram::cuda_unit(const Variant& v) const {
  driver::Request r = request(v, "");
  r.target = "cuda";
  r.emit_code = true;
  return *driver::compile(r, front_).cpp;
}

std::unique_ptr<Kernel> CheckedProgram::compile(const Variant& v, const jit::JitOptions& options,
                                                const std::string& target) const {
  driver::Request r = request(v, "");
  r.target = target;  // a UsageError for an unknown one
  const driver::Compilation c = driver::compile(r, front_);
  return std::make_unique<Kernel>(driver::load(r, c, options).at(0), describe(interface_of(v, c)));
}

std::vector<Tensor> CheckedProgram::interpret(const Variant& v, const std::vector<Tensor>& inputs,
                                              const ir::SizeBindings& given) const {
  ir::InterpOptions options;
  if (v.float64) options.float_type = ElemType::F64;
  return ir::interpret(derive(v), inputs, given, options);
}

std::vector<Tensor> CheckedProgram::random_inputs(const Variant& v, const ir::SizeBindings& sizes,
                                                  uint64_t seed) const {
  return ir::random_inputs(derive(v), sizes, seed);
}

ad::GradcheckReport CheckedProgram::gradcheck(const std::string& name,
                                              const ad::GradcheckOptions& options) const {
  // The stages up to retype check the name and the request (errors with carets).
  compile_variant({name, false, options.request}, driver::stage::kRetype);
  return ad::gradcheck(*front_.checked->find(name), options);
}

}  // namespace tenet::python
