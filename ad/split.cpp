// A vector-Jacobian program cut into its forward and backward halves (split.h).
#include "ad/split.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ir/annotations.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "ir/verify.h"
#include "support/error.h"

namespace tenet::ad {

const char* half_name(VjpHalf half) {
  switch (half) {
    case VjpHalf::Both:
      return "both";
    case VjpHalf::Forward:
      return "forward";
    case VjpHalf::Backward:
      return "backward";
  }
  TENET_UNREACHABLE("unknown VjpHalf");
}

namespace {

bool in_backward(const ir::Stmt& s) {
  return s.annotations.ad == ir::AdOrigin::Backward;
}

/// The values a statement reads: its body's reads (computed indices too) and its start.
std::vector<const ir::Value*> reads(const ir::Stmt& s) {
  TENET_ASSERT(s.kind == ir::StmtKind::Compute,
               "a vector-Jacobian program to split holds a loop (AD unrolls them)");
  std::vector<const ir::Value*> out;
  for (const ir::Expr& r : ir::reads_of(s.compute.body)) out.push_back(r->tensor.get());
  if (s.compute.init) out.push_back(s.compute.init.get());
  return out;
}

/// A name made of letters, digits and underscores (an ABI parameter's), not in
/// `taken`: `base` itself where it is one.
std::string fresh_name(const std::string& base, std::set<std::string>& taken) {
  std::string stem = base;
  for (char& ch : stem)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  std::string name = stem == base ? stem : stem + "_saved";
  for (int k = 1; taken.count(name); ++k) name = stem + "_saved" + (k > 1 ? std::to_string(k) : "");
  taken.insert(name);
  return name;
}

/// `copy(i0, i1, ...) = v(i0, i1, ...)`: a saved value that is already one of the
/// forward's outputs under a name the backward cannot take (an updated input's).
ir::Stmt copy_of(const ir::ValuePtr& v, const ir::ValuePtr& copy) {
  ir::Stmt s;
  std::vector<ir::Affine> at;
  for (int d = 0; d < v->rank(); ++d) {
    const std::string index = "i" + std::to_string(d);
    s.compute.out.push_back({index, ir::SizeExpr(0), v->shape[d]});
    at.push_back(ir::Affine::var(index));
  }
  s.compute.result = copy;
  s.compute.body = ir::make_read(v, at);
  s.source = copy->name + " = " + v->name + " (saved for the backward)";
  return s;
}

/// The forward values the backward reads or returns, in the order the forward defines them.
std::vector<ir::ValuePtr> saved_values(const ir::Function& g, size_t inputs, size_t outputs) {
  std::set<const ir::Value*> defined_backward, needed;
  std::set<const ir::Value*> cotangents;
  for (size_t k = inputs; k < g.inputs.size(); ++k) cotangents.insert(g.inputs[k].get());
  for (const ir::Stmt& s : g.body) {
    if (in_backward(s)) {
      for (const ir::Value* v : reads(s)) needed.insert(v);
      defined_backward.insert(s.compute.result.get());
      continue;
    }
    for (const ir::Value* v : reads(s))
      TENET_ASSERT(!defined_backward.count(v) && !cotangents.count(v),
                   "the forward half of '" << g.name << "' reads '" << v->name
                                           << "', which only the backward half has");
  }
  for (size_t k = outputs; k < g.outputs.size(); ++k) needed.insert(g.outputs[k].get());
  std::vector<ir::ValuePtr> saved;
  for (const ir::Stmt& s : g.body)
    if (!in_backward(s) && needed.count(s.compute.result.get())) saved.push_back(s.compute.result);
  return saved;
}

int next_id(const ir::Function& g) {
  int id = 0;
  for (const ir::ValuePtr& v : g.inputs) id = std::max(id, v->id + 1);
  for (const ir::Stmt& s : g.body) id = std::max(id, s.compute.result->id + 1);
  return id;
}

/// The backward half: g's backward statements reading the saved values as inputs
/// (`as_input`: each saved value's input, in order `saved_inputs`).
ir::Function backward_half(const ir::Function& g, size_t inputs, size_t outputs,
                           const std::vector<ir::ValuePtr>& saved_inputs,
                           const std::map<const ir::Value*, ir::ValuePtr>& as_input) {
  ir::Function b;
  b.name = g.name;
  b.size_params = g.size_params;
  b.span = g.span;
  b.inputs.assign(g.inputs.begin(), g.inputs.begin() + long(inputs));
  b.inputs.insert(b.inputs.end(), saved_inputs.begin(), saved_inputs.end());
  b.inputs.insert(b.inputs.end(), g.inputs.begin() + long(inputs), g.inputs.end());
  auto input_for = [&](const ir::ValuePtr& v) {
    auto it = as_input.find(v.get());
    return it == as_input.end() ? v : it->second;
  };
  for (const ir::Stmt& s : g.body) {
    if (!in_backward(s)) continue;
    ir::Stmt copy = s;
    copy.compute.body = ir::replace_tensors(copy.compute.body, as_input);
    if (copy.compute.init) copy.compute.init = input_for(copy.compute.init);
    b.body.push_back(std::move(copy));
  }
  for (size_t k = outputs; k < g.outputs.size(); ++k) {
    b.outputs.push_back(input_for(g.outputs[k]));
    b.output_names.push_back(g.output_names[k]);
    b.gradient_inputs.push_back(g.gradient_of(k));
  }
  return b;
}

}  // namespace

SplitVjp split_vjp(const ir::Function& original, size_t inputs, size_t outputs) {
  TENET_ASSERT(inputs <= original.inputs.size() && outputs <= original.outputs.size(),
               "split_vjp: " << inputs << " inputs and " << outputs << " outputs of '"
                             << original.name << "' are more than it has");
  const ir::Function g = original.clone();
  const std::vector<ir::ValuePtr> saved = saved_values(g, inputs, outputs);

  // A saved original output (not an updated input) keeps its name, unless a value of
  // the backward has it; the other saved values get names that no value, input or
  // output has.
  std::set<std::string> in_backward_half, taken(g.output_names.begin(), g.output_names.end());
  for (const ir::ValuePtr& v : g.inputs) in_backward_half.insert(v->name);
  for (const ir::Stmt& s : g.body)
    if (in_backward(s)) in_backward_half.insert(s.compute.result->name);
  taken.insert(in_backward_half.begin(), in_backward_half.end());
  std::map<const ir::Value*, std::string> output_name;
  for (size_t k = 0; k < outputs; ++k) {
    const std::string& name = g.output_names[k];
    if (g.updated_input(k) < 0 && !in_backward_half.count(name))
      output_name.emplace(g.outputs[k].get(), name);
  }

  SplitVjp split;
  split.forward.name = g.name;
  split.forward.size_params = g.size_params;
  split.forward.span = g.span;
  split.forward.inputs.assign(g.inputs.begin(), g.inputs.begin() + long(inputs));
  split.forward.outputs.assign(g.outputs.begin(), g.outputs.begin() + long(outputs));
  split.forward.output_names.assign(g.output_names.begin(), g.output_names.begin() + long(outputs));
  for (const ir::Stmt& s : g.body)
    if (!in_backward(s)) split.forward.body.push_back(s);

  // Each saved value as the backward's input, renamed where its name is another's.
  std::map<const ir::Value*, ir::ValuePtr> as_input;
  std::vector<ir::ValuePtr> saved_inputs;
  int id = next_id(g);
  for (const ir::ValuePtr& v : saved) {
    auto out = output_name.find(v.get());
    const bool is_output = std::find(split.forward.outputs.begin(), split.forward.outputs.end(),
                                     v) != split.forward.outputs.end();
    std::string name = out != output_name.end() ? out->second : fresh_name(v->name, taken);
    ir::ValuePtr returned = v;
    if (out == output_name.end() && is_output) {  // returned already, under another name
      returned = ir::make_value(id++, name, v->type, v->shape, v->span);
      split.forward.body.push_back(copy_of(v, returned));
    }
    if (out == output_name.end()) {
      split.forward.outputs.push_back(returned);
      split.forward.output_names.push_back(name);
    }
    ir::ValuePtr input = name == v->name ? v : ir::renamed(v, id++, name);
    as_input.emplace(v.get(), input);
    saved_inputs.push_back(input);
    split.saved.push_back(name);
  }

  split.backward = backward_half(g, inputs, outputs, saved_inputs, as_input);
  ir::verify(split.forward, "the forward half of " + g.name);
  ir::verify(split.backward, "the backward half of " + g.name);
  return split;
}

}  // namespace tenet::ad
