// `tenet emit --target torch` (torch_project.h): two compilations of the
// program (as declared, and in float64), each with every operator's forward
// and vector-Jacobian programs, then the operator source and the project.
#include "extension/torch_project.h"

#include <cctype>
#include <filesystem>
#include <set>

#include "driver/driver.h"
#include "extension/torch_files.h"
#include "extension/torch_ops.h"
#include "jit/aot.h"
#include "support/error.h"
#include "support/templates.h"

namespace tenet::extension {

namespace {

/// Names PyTorch or the generated C++ already use for a namespace.
const std::set<std::string>& reserved_namespaces() {
  static const std::set<std::string> names = {"at",   "c10",   "torch", "std", "aten",
                                              "prim", "prims", "ops",   "ext", "caffe2"};
  return names;
}

/// One operator's plan: the def, and the vjp programs to derive (by the set
/// of float outputs each takes a cotangent for).
struct Plan {
  std::string function;
  std::string op;
  std::vector<std::string> float_outputs;  // their names, in order
  std::vector<unsigned> backward_sets;
  std::map<std::string, int64_t> fixed_sizes;
};

std::string kernel_name(const Plan& p, unsigned set, bool f64) {
  return p.op + (set ? "_vjp" + std::to_string(set) : "") + (f64 ? "_f64" : "");
}

void check_interface(const ir::Function& fn, const std::string& path) {
  if (fn.inputs.empty())
    throw UsageError(path + ": '" + fn.name +
                     "' has no input, so PyTorch cannot dispatch it as an operator");
  for (const ir::ValuePtr& v : fn.inputs)
    if (v->type == ElemType::U16 || v->type == ElemType::U32 || v->type == ElemType::U64)
      throw UsageError(path + ": input '" + v->name + "' of '" + fn.name + "' is " +
                       std::string(type_name(v->type)) +
                       ", which PyTorch supports only in part: use int32/int64 (or uint8)");
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const ElemType t = fn.outputs[i]->type;
    if (t == ElemType::U16 || t == ElemType::U32 || t == ElemType::U64)
      throw UsageError(path + ": output '" + fn.output_names[i] + "' of '" + fn.name + "' is " +
                       std::string(type_name(t)) +
                       ", which PyTorch supports only in part: use int32/int64 (or uint8)");
  }
}

/// The sizes fixed for `fn`: every size parameter is an input's dimension or
/// given (a UsageError names the first that is neither).
std::map<std::string, int64_t> fixed_sizes(const ir::Function& fn,
                                           const std::map<std::string, int64_t>& given,
                                           const std::string& path) {
  std::set<std::string> bound;
  for (const ir::ValuePtr& v : fn.inputs)
    for (const ir::SizeExpr& d : v->shape)
      if (auto s = d.as_symbol()) bound.insert(*s);
  std::map<std::string, int64_t> fixed;
  for (const std::string& p : fn.size_params) {
    if (auto it = given.find(p); it != given.end()) {
      if (it->second < 0)
        throw UsageError("--sizes: " + p + " = " + std::to_string(it->second) + " is negative");
      fixed.emplace(p, it->second);
    } else if (!bound.count(p)) {
      throw UsageError(path + ": size parameter " + p + " of '" + fn.name +
                       "' is not the size of any input dimension, so an operator cannot "
                       "infer it: fix it with --sizes " +
                       p + "=VALUE");
    }
  }
  return fixed;
}

Plan plan(const ir::Function& fn, const std::string& op, const TorchProjectOptions& o,
          const std::string& path) {
  check_interface(fn, path);
  Plan p{fn.name, op, {}, {}, fixed_sizes(fn, o.sizes, path)};
  bool float_input = false;
  for (const ir::ValuePtr& v : fn.inputs) float_input = float_input || is_float(v->type);
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (is_float(fn.outputs[i]->type)) p.float_outputs.push_back(fn.output_names[i]);
  if (!float_input || p.float_outputs.empty()) return p;
  const unsigned all = (1u << p.float_outputs.size()) - 1;
  if (p.float_outputs.size() <= size_t(kMostPartialOutputs))
    for (unsigned set = 1; set <= all; ++set) p.backward_sets.push_back(set);
  else
    p.backward_sets.push_back(all);
  return p;
}

driver::Request variant_request(const std::string& path, const std::optional<std::string>& text,
                                const std::vector<Plan>& plans, const std::string& ns, bool f64,
                                const TorchProjectOptions& o) {
  driver::Request r;
  r.path = path;
  r.text = text;
  if (f64) r.float_type = ElemType::F64;
  r.emit_code = true;
  r.cpp.unit_name = ns + (f64 ? "_kernels_f64" : "_kernels");
  r.cpp.origin = std::filesystem::path(path).filename().string();
  r.cpp.openmp = o.openmp;
  r.cpp.index_checks = o.index_checks;
  for (const Plan& p : plans) {
    r.functions.push_back({p.function, std::nullopt, kernel_name(p, 0, f64)});
    const unsigned all = (1u << p.float_outputs.size()) - 1;
    for (unsigned set : p.backward_sets) {
      ad::GradRequest g;
      g.vjp = true;
      if (set != all)
        for (size_t j = 0; j < p.float_outputs.size(); ++j)
          if (set & (1u << j)) g.outputs.push_back(p.float_outputs[j]);
      r.functions.push_back({p.function, g, kernel_name(p, set, f64)});
    }
  }
  return r;
}

/// Each plan's kernels in a compilation (its functions are in request order).
void attach(std::vector<TorchOp>& ops, const std::vector<Plan>& plans, const driver::Compilation& c,
            bool f64) {
  const std::vector<ir::Function>& fns = c.lowered->module.functions;
  size_t next = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    OpKernels& k = f64 ? ops[i].f64 : ops[i].f32;
    k.forward = &fns.at(next++);
    for (unsigned set : plans[i].backward_sets) k.backward[set] = &fns.at(next++);
  }
  TENET_ASSERT(next == fns.size(), "the extension's compilation has other functions");
}

std::vector<Plan> plans(const driver::Compilation& front, const std::string& path,
                        const TorchProjectOptions& o) {
  std::vector<std::string> names = o.functions;
  if (names.empty())
    for (const ir::Function& f : front.checked->functions) names.push_back(f.name);
  if (!o.name.empty() && names.size() != 1)
    throw UsageError("--name names the operator of one function: choose it with --fn");
  std::vector<Plan> out;
  std::set<std::string> ops;
  for (const std::string& name : names) {
    const ir::Function* fn = front.checked->find(name);
    if (!fn) throw UsageError(path + ": no function named '" + name + "'");
    const std::string op = o.name.empty() ? name : o.name;
    check_torch_name(op, "operator name");
    out.push_back(plan(*fn, op, o, path));
    for (const std::string& n : {op, op + "_backward"})
      if (!ops.insert(n).second)
        throw UsageError("two operators would be named " + n +
                         ": emit the functions into separate namespaces");
  }
  return out;
}

}  // namespace

void check_torch_name(const std::string& name, const std::string& what) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    throw UsageError("the " + what + " '" + name +
                     "' is not an identifier (letters, digits, '_'; not starting with a digit)");
  if (name.find("__") != std::string::npos || name[0] == '_')
    throw UsageError("the " + what + " '" + name +
                     "' starts with '_' or has '__', which C++ reserves");
  if (what == "namespace" && (reserved_namespaces().count(name) || name.rfind("tenet", 0) == 0))
    throw UsageError("the namespace '" + name +
                     "' is taken by PyTorch or the generated code: choose another with "
                     "--namespace");
}

TorchProject emit_torch_project(const std::string& path, const std::optional<std::string>& text,
                                const std::string& dir, const TorchProjectOptions& o) {
  TorchProject project;
  project.ns = o.ns.empty() ? identifier_from_stem(path, "ops_") : o.ns;
  check_torch_name(project.ns, "namespace");
  driver::Request front_request;
  front_request.path = path;
  front_request.text = text;
  front_request.stop_after = "check";
  const driver::Compilation front = driver::compile(front_request);
  const std::vector<Plan> ps = plans(front, path, o);
  const driver::Compilation c32 =
      driver::compile(variant_request(path, text, ps, project.ns, false, o), front);
  const driver::Compilation c64 =
      driver::compile(variant_request(path, text, ps, project.ns, true, o), front);
  std::vector<TorchOp> ops(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    ops[i].name = ps[i].op;
    ops[i].origin = ps[i].function;
    ops[i].fixed_sizes = ps[i].fixed_sizes;
    project.operators.push_back(project.ns + "::" + ps[i].op);
    if (!ps[i].backward_sets.empty())
      project.operators.push_back(project.ns + "::" + ps[i].op + "_backward");
  }
  attach(ops, ps, c32, false);
  attach(ops, ps, c64, true);
  const std::string origin = std::filesystem::path(path).filename().string();
  const std::string api = project.ns + ".h";
  std::vector<jit::ProjectFile> files;
  for (const codegen::CppUnit* unit : {&*c32.cpp, &*c64.cpp}) {
    files.push_back({unit->header_name, unit->header});
    files.push_back({unit->source_name, unit->source});
    project.sources.push_back(unit->source_name);
    project.uses_gemm = project.uses_gemm || unit->uses_gemm;
  }
  files.push_back(
      {project.ns + "_ops.cpp",
       ops_source(project.ns, ops, {c32.cpp->header_name, c64.cpp->header_name}, api, origin)});
  project.sources.insert(project.sources.begin(), project.ns + "_ops.cpp");
  files.push_back({api, api_header(project.ns, ops, origin)});
  for (jit::ProjectFile& f : jit::runtime_header_files()) files.push_back(std::move(f));
  files.push_back({"CMakeLists.txt", torch_cmake_lists(project, origin)});
  files.push_back({"README.md", torch_readme(project, ops, origin)});
  jit::write_project(files, dir, o.overwrite);
  return project;
}

}  // namespace tenet::extension
