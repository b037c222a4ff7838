// The AD driver: validates the request, emits the forward copy (unroll.h),
// the backward statements (reverse.h), and the outputs; verifies before and after.
#include "ad/grad.h"

#include <algorithm>
#include <set>

#include "ad/expr_util.h"
#include "ad/reverse.h"
#include "ad/unroll.h"
#include "ir/builder.h"
#include "ir/verify.h"

namespace tenet::ad {

using ir::ValuePtr;

namespace {

[[noreturn]] void report(const SourceFile* file, Span span, const std::string& message) {
  if (file && span.valid) fail_at(*file, span, message);
  if (file) throw CompileError(file->path() + ": error: " + message);
  throw CompileError("error: " + message);
}

// "float32[N, K]", "float32 scalar"
std::string describe(const ir::Value& v) {
  std::string s(type_name(v.type));
  if (v.rank() == 0) return s + " scalar";
  s += "[";
  for (int i = 0; i < v.rank(); ++i) s += (i ? ", " : "") + v.shape[i].str();
  return s + "]";
}

std::string name_list(const std::vector<ValuePtr>& values) {
  std::string s;
  for (const ValuePtr& v : values) s += (s.empty() ? "" : ", ") + v->name;
  return s;
}

size_t position_of(const std::vector<ValuePtr>& values, const ValuePtr& v) {
  return size_t(std::find(values.begin(), values.end(), v) - values.begin());
}

const ValuePtr* find_named(const std::vector<ValuePtr>& values, const std::string& name) {
  for (const ValuePtr& v : values)
    if (v->name == name) return &v;
  return nullptr;
}

std::vector<ValuePtr> wrt_values(const ir::Function& fn, const GradRequest& req,
                                 const SourceFile* file) {
  std::vector<ValuePtr> out;
  if (req.wrt.empty()) {
    for (const ValuePtr& v : fn.inputs)
      if (is_float(v->type)) out.push_back(v);
    if (out.empty())
      report(file, fn.span, "function '" + fn.name + "' has no float inputs to differentiate");
    return out;
  }
  std::set<std::string> seen;
  for (const std::string& name : req.wrt) {
    const ValuePtr* v = find_named(fn.inputs, name);
    if (!v)
      report(file, fn.span,
             "function '" + fn.name + "' has no input named '" + name +
                 "' (inputs: " + name_list(fn.inputs) + ")");
    if (!is_float((*v)->type))
      report(file, (*v)->span,
             "cannot differentiate with respect to " +
                 std::string((*v)->type == ElemType::Bool ? "bool" : "integer") + " input '" +
                 name + "' (" + describe(**v) + ")");
    if (!seen.insert(name).second)
      report(file, (*v)->span, "input '" + name + "' is named twice in the gradient request");
    out.push_back(*v);
  }
  return out;
}

void check_float_output(const ir::Function& fn, size_t i, const SourceFile* file) {
  const ir::Value& o = *fn.outputs[i];
  if (!is_float(o.type))
    report(file, o.span,
           "cannot differentiate " + std::string(o.type == ElemType::Bool ? "bool" : "integer") +
               " output '" + fn.output_names[i] + "' (" + describe(o) + ")");
}

// Positions in fn.outputs of the outputs a request names (`output`, or with
// `vjp` the list `outputs`), in the function's order: each must exist, be
// float, and be named once.
std::vector<size_t> named_output_positions(const ir::Function& fn, const GradRequest& req,
                                           const std::string& listed, const SourceFile* file) {
  if (!req.output.empty() && !req.outputs.empty())
    report(file, fn.span,
           "the gradient request of '" + fn.name + "' names both an output ('" + req.output +
               "') and a list of outputs: give one of them");
  if (!req.vjp && req.outputs.size() > 1)
    report(file, fn.span,
           "a gradient of '" + fn.name + "' differentiates one scalar output, but " +
               std::to_string(req.outputs.size()) +
               " are named: ask for vector-Jacobian products to differentiate several");
  std::vector<std::string> wanted = req.outputs;
  if (wanted.empty()) wanted.push_back(req.output);
  std::set<std::string> seen;
  std::vector<size_t> out;
  for (const std::string& name : wanted) {
    size_t i = 0;
    while (i < fn.outputs.size() && fn.output_names[i] != name) ++i;
    if (i == fn.outputs.size())
      report(file, fn.span,
             "function '" + fn.name + "' has no output named '" + name + "' (outputs: " + listed +
                 ")");
    if (!seen.insert(name).second)
      report(file, fn.outputs[i]->span,
             "output '" + name + "' is named twice in the gradient request");
    check_float_output(fn, i, file);
    out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Positions in fn.outputs of the differentiated outputs, looked up by their
// user-facing names (fn.output_names: "v", where the value may be "v.1").
std::vector<size_t> output_positions(const ir::Function& fn, const GradRequest& req,
                                     const SourceFile* file) {
  if (!req.vjp && req.half != VjpHalf::Both)
    report(file, fn.span,
           "only a vector-Jacobian program of '" + fn.name +
               "' can be cut into a forward and a backward half: ask for vector-Jacobian "
               "products");
  std::string listed;
  for (const std::string& n : fn.output_names) listed += (listed.empty() ? "" : ", ") + n;
  std::vector<size_t> out;
  if (!req.output.empty() || !req.outputs.empty()) {
    out = named_output_positions(fn, req, listed, file);
  } else if (req.vjp) {
    for (size_t i = 0; i < fn.outputs.size(); ++i)
      if (is_float(fn.outputs[i]->type)) out.push_back(i);
    if (out.empty())
      report(file, fn.span, "function '" + fn.name + "' has no float outputs to differentiate");
    return out;
  } else if (fn.outputs.size() == 1) {
    out.push_back(0);
  } else {
    // Several outputs: the only float scalar among them (a model returning
    // its predictions and its loss), if there is exactly one.
    for (size_t i = 0; i < fn.outputs.size(); ++i)
      if (fn.outputs[i]->rank() == 0 && is_float(fn.outputs[i]->type)) out.push_back(i);
    if (out.size() != 1)
      report(file, fn.span,
             "function '" + fn.name + "' has " + std::to_string(fn.outputs.size()) + " outputs (" +
                 listed +
                 "): name the one to differentiate, or ask for vector-Jacobian "
                 "products");
  }
  check_float_output(fn, out[0], file);
  const ir::Value& o = *fn.outputs[out[0]];
  if (!req.vjp && o.rank() != 0)
    report(file, o.span,
           "cannot differentiate non-scalar output '" + fn.output_names[out[0]] + "' (" +
               describe(o) +
               ") without cotangents: reduce it to a scalar, or ask for "
               "vector-Jacobian products");
  return out;
}

// Whether an output of `fn` updates its input `input` in place.
bool fn_updates(const ir::Function& fn, const std::string& input) {
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    int k = fn.updated_input(i);
    if (k >= 0 && fn.inputs[size_t(k)]->name == input) return true;
  }
  return false;
}

std::vector<std::string> names(const std::vector<ValuePtr>& values) {
  std::vector<std::string> out;
  for (const ValuePtr& v : values) out.push_back(v->name);
  return out;
}

// d_<input> unless that is already an input's or an earlier output's name
// (an identity function's cotangent d_x): then the value's own unique name.
std::string gradient_name(const ValuePtr& grad, const std::string& input,
                          const std::set<std::string>& taken) {
  std::string name = "d_" + input;
  return taken.count(name) ? grad->name : name;
}

}  // namespace

std::vector<std::string> resolve_wrt(const ir::Function& fn, const GradRequest& req,
                                     const SourceFile* file) {
  return names(wrt_values(fn, req, file));
}

std::vector<std::string> resolve_outputs(const ir::Function& fn, const GradRequest& req,
                                         const SourceFile* file) {
  std::vector<std::string> out;
  for (size_t i : output_positions(fn, req, file)) out.push_back(fn.output_names[i]);
  return out;
}

ir::Function differentiate(const ir::Function& fn, const GradRequest& req, const SourceFile* file) {
  ir::verify(fn, "the checker (before reverse-mode AD)");
  std::vector<ValuePtr> wrt = wrt_values(fn, req, file);
  std::vector<size_t> differentiated = output_positions(fn, req, file);

  ir::FunctionBuilder fb(fn.name + "_grad", fn.span);
  for (const std::string& s : fn.size_params) fb.size_param(s);
  std::map<const ir::Value*, ValuePtr> inputs;
  for (const ValuePtr& v : fn.inputs)
    inputs[v.get()] = fb.input(v->name, v->type, v->shape, v->span);
  std::vector<std::pair<ValuePtr, ValuePtr>> cotangents;  // original output, cotangent input
  if (req.vjp) {
    for (size_t i : differentiated) {
      const ValuePtr& o = fn.outputs[i];
      cotangents.emplace_back(o, fb.input("d_" + fn.output_names[i], o->type, o->shape, o->span));
    }
  }

  FailAt fail = [file](Span span, const std::string& message) { report(file, span, message); };
  ForwardCopy fwd = copy_forward(fn, fb, inputs, fail);

  std::vector<ValuePtr> new_wrt;
  for (const ValuePtr& x : wrt) new_wrt.push_back(fwd.values.at(x.get()));
  std::vector<Seed> seeds;
  if (req.vjp) {
    for (const auto& [o, cot] : cotangents) seeds.push_back({fwd.values.at(o.get()), cot});
  } else {
    seeds.push_back({fwd.values.at(fn.outputs[differentiated[0]].get()), nullptr});
  }
  std::set<std::string> taken;
  for (const auto& [old, v] : fwd.values) taken.insert(v->name);

  std::vector<ValuePtr> grads = emit_backward(fb, fwd, new_wrt, seeds, taken);
  std::set<std::string> output_taken;
  for (const ValuePtr& v : fn.inputs) output_taken.insert(v->name);
  std::set<std::string> cotangent_names;
  for (const auto& [o, cot] : cotangents) cotangent_names.insert(cot->name);
  output_taken.insert(cotangent_names.begin(), cotangent_names.end());
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    // (Not marked as a gradient, even if it was one: the marks are of this derivative's.)
    fb.output(fwd.values.at(fn.outputs[i].get()), fn.output_names[i]);
    output_taken.insert(fn.output_names[i]);
  }
  for (size_t k = 0; k < grads.size(); ++k) {
    // The gradient of an output's initial value (an input the output updates,
    // ir::Function::updated_input) updates that output's cotangent, as
    // autograd does for an in-place operation.
    std::string name = "d_" + wrt[k]->name;
    bool updates_cotangent = cotangent_names.count(name) && fn_updates(fn, wrt[k]->name);
    if (!updates_cotangent || !cotangent_names.erase(name))
      name = gradient_name(grads[k], wrt[k]->name, output_taken);
    fb.output(grads[k], name, int(position_of(fn.inputs, wrt[k])));
    output_taken.insert(name);
  }
  ir::Function out = fb.finish();
  ir::verify(out, "reverse-mode AD");
  return out;
}

ir::Function differentiate(const ir::Module& m, const std::string& function, const GradRequest& req,
                           const SourceFile* file) {
  const ir::Function* fn = m.find(function);
  if (!fn) {
    std::string known;
    for (const ir::Function& f : m.functions) known += (known.empty() ? "" : ", ") + f.name;
    report(file, Span{},
           "no function named '" + function + "' to differentiate" +
               (known.empty() ? "" : " (functions: " + known + ")"));
  }
  return differentiate(*fn, req, file);
}

}  // namespace tenet::ad
