#include "extension/torch_text.h"

#include <algorithm>
#include <set>

#include "codegen/c_text.h"
#include "codegen/cpp.h"
#include "support/error.h"

namespace tenet::extension {

std::string tensor_param(const std::string& name) {
  return "const at::Tensor& " + name;
}
std::string optional_param(const std::string& name) {
  return "const std::optional<at::Tensor>& " + name;
}

namespace {

std::string atom_code(const ir::SizeExpr::Atom& atom,
                      const std::map<std::string, std::string>& fields) {
  using Atom = ir::SizeExpr::Atom;
  switch (atom.kind) {
    case Atom::Sym:
      return "s." + fields.at(atom.key);
    case Atom::FloorDiv:
      return "ext::floor_div(" + size_code(atom.args.at(0), fields) + ", " +
             std::to_string(atom.divisor) + ")";
    case Atom::Min:
    case Atom::Max:
      return std::string(atom.kind == Atom::Min ? "ext::min(" : "ext::max(") +
             size_code(atom.args.at(0), fields) + ", " + size_code(atom.args.at(1), fields) + ")";
    case Atom::Mul:
      return "(" + size_code(atom.args.at(0), fields) + ") * (" +
             size_code(atom.args.at(1), fields) + ")";
  }
  TENET_UNREACHABLE("size atom kind");
}

/// A schema argument name: an identifier, distinct from those in `taken`.
std::string schema_name(const std::string& name, std::set<std::string>& taken) {
  std::string base;
  for (char ch : name) base += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "_" + base;
  std::string unique = base;
  for (int n = 2; taken.count(unique); ++n) unique = base + "_" + std::to_string(n);
  taken.insert(unique);
  return unique;
}

std::string type_with_shape(ElemType t, const std::vector<ir::SizeExpr>& shape) {
  return std::string(type_name(t)) + (shape.empty() ? " scalar" : declared_shape(shape));
}

}  // namespace

std::string size_code(const ir::SizeExpr& e, const std::map<std::string, std::string>& fields) {
  std::string out;
  // terms with a positive coefficient first: "L - K + 1", not "-K + L + 1"
  std::vector<std::pair<ir::SizeExpr::Atom, int64_t>> atoms = e.atoms();
  std::stable_partition(atoms.begin(), atoms.end(), [](const auto& a) { return a.second > 0; });
  for (const auto& [atom, coef] : atoms) {
    const std::string a = atom_code(atom, fields);
    const int64_t magnitude = coef < 0 ? -coef : coef;
    const std::string term = magnitude == 1 ? a : a + " * " + std::to_string(magnitude);
    if (out.empty())
      out = coef < 0 ? "-" + term : term;
    else
      out += (coef < 0 ? " - " : " + ") + term;
  }
  const int64_t c = e.constant_term();
  if (out.empty()) return "c10::SymInt(" + std::to_string(c) + ")";
  if (c != 0) out += (c < 0 ? " - " : " + ") + std::to_string(c < 0 ? -c : c);
  return out;
}

std::string shape_code(const std::vector<ir::SizeExpr>& shape,
                       const std::map<std::string, std::string>& fields) {
  std::string out;
  for (const ir::SizeExpr& d : shape) out += (out.empty() ? "" : ", ") + size_code(d, fields);
  return "{" + out + "}";
}

std::string declared_shape(const std::vector<ir::SizeExpr>& shape) {
  std::string out;
  for (const ir::SizeExpr& d : shape) out += (out.empty() ? "" : ", ") + d.str();
  return "[" + out + "]";
}

std::string input_check(const std::string& op, const std::string& kind, const std::string& name,
                        const std::string& tensor, const std::string& dtype, bool is_float,
                        const std::vector<ir::SizeExpr>& shape) {
  return "ext::check_input(\"" + op + "\", \"" + kind + "\", \"" + name + "\", " + tensor + ", " +
         dtype + ", " + (is_float ? "true" : "false") + ", " + std::to_string(shape.size()) +
         ", \"" + declared_shape(shape) + "\");";
}

std::string shape_check(const std::string& op, const std::string& kind, const std::string& name,
                        const std::string& tensor, const std::vector<ir::SizeExpr>& shape,
                        const std::map<std::string, std::string>& fields) {
  return "ext::check_shape(\"" + op + "\", \"" + kind + "\", \"" + name + "\", " + tensor + ", \"" +
         declared_shape(shape) + "\", " + shape_code(shape, fields) + ");";
}

std::string c_call(const ir::Function& fn, const std::map<std::string, std::string>& fields,
                   const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs) {
  TENET_ASSERT(inputs.size() == fn.inputs.size() && outputs.size() == fn.outputs.size(),
               "a call's tensors do not match the function");
  std::string args;
  auto add = [&](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
  for (const std::string& p : fn.size_params) add("s." + fields.at(p) + ".expect_int()");
  for (size_t k = 0; k < fn.inputs.size(); ++k)
    if (!codegen::detail::is_updated_input(fn, k))
      add("static_cast<const " + std::string(c_type_name(fn.inputs[k]->type)) + "*>(" + inputs[k] +
          ".const_data_ptr())");
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    add("static_cast<" + std::string(c_type_name(fn.outputs[i]->type)) + "*>(" + outputs[i] +
        ".data_ptr())");
  return codegen::c_symbol(fn) + "(" + args + ")";
}

std::string scalar_type(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return "at::kBool";
    case ElemType::I8:
      return "at::kChar";
    case ElemType::U8:
      return "at::kByte";
    case ElemType::I16:
      return "at::kShort";
    case ElemType::I32:
      return "at::kInt";
    case ElemType::I64:
      return "at::kLong";
    case ElemType::F32:
      return "at::kFloat";
    case ElemType::F64:
      return "at::kDouble";
    case ElemType::F16:
      return "at::kHalf";
    case ElemType::U16:
      return "at::kUInt16";
    case ElemType::U32:
      return "at::kUInt32";
    case ElemType::U64:
      return "at::kUInt64";
  }
  TENET_UNREACHABLE("element type");
}

OpNames::OpNames(const TorchOp& op) : cxx_namespace("tenet_op_" + op.name) {
  const ir::Function& fn = *op.f32.forward;
  codegen::detail::Namer namer;
  std::set<std::string> schema_taken;
  for (const std::string& p : fn.size_params) sizes.emplace(p, namer.take(p));
  for (size_t k = 0; k < fn.inputs.size(); ++k) {
    inputs.push_back(namer.take(fn.inputs[k]->name));
    schema_inputs.push_back(schema_name(fn.inputs[k]->name, schema_taken));
    if (is_float(fn.inputs[k]->type)) float_inputs.push_back(k);
  }
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (is_float(fn.outputs[i]->type)) {
      float_outputs.push_back(i);
      const std::string d = "d_" + fn.output_names[i];
      cotangents.push_back(namer.take(d));
      cotangent_names.push_back(schema_name(d, schema_taken));
    }
}

std::string OpNames::float_input_pointers() const {
  std::string out;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (std::find(float_inputs.begin(), float_inputs.end(), k) != float_inputs.end())
      out += (out.empty() ? "&" : ", &") + inputs[k];
  return out;
}

bool OpNames::is_float_input(const TorchOp& op, size_t k) const {
  return op.f32.forward->inputs[k]->type != op.f64.forward->inputs[k]->type;
}

namespace {
std::string variant_dtype(ElemType t32, ElemType t64) {
  if (t32 == t64) return scalar_type(t32);
  return "f64 ? " + scalar_type(t64) + " : " + scalar_type(t32);
}
}  // namespace

std::string OpNames::dtype(const TorchOp& op, size_t k) const {
  return variant_dtype(op.f32.forward->inputs[k]->type, op.f64.forward->inputs[k]->type);
}

std::string OpNames::output_dtype(const TorchOp& op, size_t i) const {
  return variant_dtype(op.f32.forward->outputs[i]->type, op.f64.forward->outputs[i]->type);
}

size_t OpNames::gradient_slot(size_t k) const {
  const auto it = std::find(float_inputs.begin(), float_inputs.end(), k);
  TENET_ASSERT(it != float_inputs.end(), "a gradient of an input that is not float");
  return size_t(it - float_inputs.begin());
}

std::string OpNames::result_type(size_t n) const {
  if (n == 1) return "at::Tensor";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::string("at::Tensor");
  return "std::tuple<" + out + ">";
}

std::string OpNames::result_return(size_t n, const std::string& v) const {
  if (n == 1) return v + "[0]";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + v + "[" + std::to_string(i) + "]";
  return "std::make_tuple(" + out + ")";
}

std::string OpNames::result_list(size_t n, const std::string& r) const {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + result_item(n, r, i);
  return "{" + out + "}";
}

std::string OpNames::result_item(size_t n, const std::string& r, size_t i) const {
  return n == 1 ? r : "std::get<" + std::to_string(i) + ">(" + r + ")";
}

std::string OpNames::signature_params(bool with_cotangents, bool named) const {
  std::string out;
  for (const std::string& n : inputs)
    out += (out.empty() ? "" : ", ") + (named ? tensor_param(n) : "const at::Tensor&");
  if (with_cotangents)
    for (const std::string& n : cotangents)
      out += ", " + (named ? optional_param(n) : "const std::optional<at::Tensor>&");
  return out;
}

namespace {
std::string returns(size_t n) {
  if (n == 1) return "Tensor";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::string("Tensor");
  return "(" + out + ")";
}
}  // namespace

std::string OpNames::schema(const std::string& name, const ir::Function& fn) const {
  std::string params;
  for (const std::string& p : schema_inputs)
    params += std::string(params.empty() ? "" : ", ") + "Tensor " + p;
  return name + "(" + params + ") -> " + returns(fn.outputs.size());
}

std::string OpNames::backward_schema(const std::string& name, const ir::Function&) const {
  std::string params;
  for (const std::string& p : schema_inputs)
    params += std::string(params.empty() ? "" : ", ") + "Tensor " + p;
  for (const std::string& d : cotangent_names) params += ", Tensor? " + d;
  return name + "_backward(" + params + ") -> " + returns(float_inputs.size());
}

std::string OpNames::describe(const ir::Function& fn) const {
  std::string params, results;
  for (const ir::ValuePtr& in : fn.inputs)
    params += (params.empty() ? "" : ", ") + in->name + ": " + type_with_shape(in->type, in->shape);
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    results += (results.empty() ? "" : ", ") + fn.output_names[i] + ": " +
               type_with_shape(fn.outputs[i]->type, fn.outputs[i]->shape);
  return fn.name + "(" + params + ") -> " +
         (fn.outputs.size() == 1 ? results : "(" + results + ")");
}

}  // namespace tenet::extension
