#include "extension/torch_ops.h"

#include <algorithm>
#include <set>

#include "codegen/c_text.h"
#include "codegen/code_writer.h"
#include "codegen/cpp.h"
#include "extension/torch_text.h"
#include "support/error.h"

namespace tenet::extension {

namespace {

using codegen::detail::Code;

/// One operator's printer: the names it gives each argument, and the pieces
/// of source (checks, allocation, calls, autograd) printed from them.
class OpPrinter {
 public:
  OpPrinter(const std::string& ns, const TorchOp& op) : ns_(ns), op_(op), names_(op) {}

  void print(Code& c) const;
  void print_registration(Code& def, Code& cpu, Code& meta, Code& autograd) const;
  void print_api(Code& c, bool definitions) const;

 private:
  const ir::Function& fn() const { return *op_.f32.forward; }
  bool differentiable() const { return names_.has_backward(); }
  std::string qualified(const std::string& suffix = "") const {
    return ns_ + "::" + op_.name + suffix;
  }
  std::string parameters(bool cotangents) const;
  std::string arguments(bool cotangents, const std::string& saved = "") const;

  void print_sizes_and_checks(Code& c) const;
  void print_outputs(Code& c) const;
  void print_gradients(Code& c) const;
  void print_forward_kernels(Code& c) const;
  void print_cotangent_checks(Code& c, const std::string& op) const;
  void print_backward_kernels(Code& c) const;
  void print_backward_call(Code& c, unsigned given, bool zeros) const;
  void print_handles(Code& c) const;
  void print_autograd(Code& c) const;

  std::string ns_;
  const TorchOp& op_;
  OpNames names_;
};

std::string OpPrinter::parameters(bool cotangents) const {
  std::string out;
  for (const std::string& n : names_.inputs) out += (out.empty() ? "" : ", ") + tensor_param(n);
  if (cotangents)
    for (const std::string& n : names_.cotangents)
      out += (out.empty() ? "" : ", ") + optional_param(n);
  return out;
}

std::string OpPrinter::arguments(bool cotangents, const std::string& saved) const {
  std::string out;
  for (size_t k = 0; k < names_.inputs.size(); ++k)
    out += (out.empty() ? "" : ", ") +
           (saved.empty() ? names_.inputs[k] : saved + "[" + std::to_string(k) + "]");
  if (cotangents)
    for (const std::string& n : names_.cotangents) out += ", " + n;
  return out;
}

void OpPrinter::print_sizes_and_checks(Code& c) const {
  const std::string op = qualified();
  c.note("The size parameters of " + op_.origin + ", from its inputs' shapes.");
  c.open("struct Sizes");
  for (const std::string& p : fn().size_params) c.line("c10::SymInt " + names_.sizes.at(p) + ";");
  c.close("};");
  c.line("");
  c.note(
      "Checks every input's dtype, rank and shape and binds the size parameters; returns "
      "whether the float64 kernels run.");
  c.open("bool check_inputs(Sizes& s, " + parameters(false) + ")");
  c.line("const bool f64 = ext::all_float64({" + names_.float_input_pointers() + "});");
  for (size_t k = 0; k < fn().inputs.size(); ++k)
    c.line(input_check(op, "input", fn().inputs[k]->name, names_.inputs[k], names_.dtype(op_, k),
                       names_.is_float_input(op_, k), fn().inputs[k]->shape));
  std::set<std::string> bound;
  for (const auto& [name, value] : op_.fixed_sizes) {
    c.line("s." + names_.sizes.at(name) + " = c10::SymInt(" + std::to_string(value) + ");");
    bound.insert(name);
  }
  for (size_t k = 0; k < fn().inputs.size(); ++k)
    for (size_t d = 0; d < fn().inputs[k]->shape.size(); ++d)
      if (auto sym = fn().inputs[k]->shape[d].as_symbol(); sym && bound.insert(*sym).second)
        c.line("s." + names_.sizes.at(*sym) + " = " + names_.inputs[k] + ".sym_size(" +
               std::to_string(d) + ");");
  for (size_t k = 0; k < fn().inputs.size(); ++k)
    c.line(shape_check(op, "input", fn().inputs[k]->name, names_.inputs[k], fn().inputs[k]->shape,
                       names_.sizes));
  c.line("return f64;");
  c.close();
  c.line("");
}

void OpPrinter::print_outputs(Code& c) const {
  c.note("The outputs, allocated (an output that updates an input starts as a copy of it).");
  c.open("std::vector<at::Tensor> outputs(const Sizes& s, bool f64, " + parameters(false) + ")");
  const std::string options = names_.inputs.front() + ".options()";
  c.line("std::vector<at::Tensor> out;");
  for (size_t i = 0; i < fn().outputs.size(); ++i) {
    const int k = fn().updated_input(i);
    if (k >= 0) {
      c.line("out.push_back(" + names_.inputs[k] + ".clone(at::MemoryFormat::Contiguous));");
      continue;
    }
    const std::string& output = fn().output_names[i];
    for (const ir::SizeExpr& d : fn().outputs[i]->shape)
      if (!d.is_constant() && !d.as_symbol())
        c.line("ext::check_output_size(\"" + qualified() + "\", \"" + output + "\", \"" + d.str() +
               "\", " + size_code(d, names_.sizes) + ");");
    c.line("out.push_back(at::empty_symint(" + shape_code(fn().outputs[i]->shape, names_.sizes) +
           ", " + options + ".dtype(" + names_.output_dtype(op_, i) + ")));");
  }
  c.line("return out;");
  c.close();
  c.line("");
}

void OpPrinter::print_forward_kernels(Code& c) const {
  const std::string op = qualified();
  const std::string ret = names_.result_return(fn().outputs.size(), "out");
  c.open("Result forward_cpu(" + parameters(false) + ")");
  c.line("Sizes s;");
  c.line("const bool f64 = check_inputs(s, " + arguments(false) + ");");
  c.line("const std::vector<at::Tensor> out = outputs(s, f64, " + arguments(false) + ");");
  std::vector<std::string> inputs;
  for (size_t k = 0; k < fn().inputs.size(); ++k) {
    inputs.push_back("c_" + std::to_string(k));
    if (!codegen::detail::is_updated_input(fn(), k))
      c.line("const at::Tensor c_" + std::to_string(k) + " = " + names_.inputs[k] +
             ".contiguous();");
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < fn().outputs.size(); ++i)
    outputs.push_back("out[" + std::to_string(i) + "]");
  c.open("ext::run(\"" + op + "\", [&]");
  c.line("if (f64)");
  c.line("  " + c_call(*op_.f64.forward, names_.sizes, inputs, outputs) + ";");
  c.line("else");
  c.line("  " + c_call(*op_.f32.forward, names_.sizes, inputs, outputs) + ";");
  c.close("});");
  c.line("return " + ret + ";");
  c.close();
  c.line("");
  c.open("Result forward_meta(" + parameters(false) + ")");
  c.line("Sizes s;");
  c.line("const bool f64 = check_inputs(s, " + arguments(false) + ");");
  c.line("const std::vector<at::Tensor> out = outputs(s, f64, " + arguments(false) + ");");
  c.line("return " + ret + ";");
  c.close();
  c.line("");
}

void OpPrinter::print_gradients(Code& c) const {
  c.note("The gradients, one per float input, allocated.");
  c.open("std::vector<at::Tensor> gradients(const Sizes& s, bool f64, " + parameters(false) + ")");
  c.line("std::vector<at::Tensor> out;");
  for (size_t k : names_.float_inputs)
    c.line("out.push_back(at::empty_symint(" + shape_code(fn().inputs[k]->shape, names_.sizes) +
           ", " + names_.inputs[k] + ".options().dtype(" + names_.dtype(op_, k) + ")));");
  c.line("return out;");
  c.close();
  c.line("");
}

void OpPrinter::print_cotangent_checks(Code& c, const std::string& op) const {
  c.note(
      "Checks each cotangent given (dtype, rank, shape); returns the set of them, bit j for "
      "the j-th float output.");
  std::string params;
  for (const std::string& d : names_.cotangents) params += ", " + optional_param(d);
  c.open("unsigned check_cotangents(const Sizes& s, bool f64" + params + ")");
  c.line("unsigned given = 0;");
  for (size_t j = 0; j < names_.float_outputs.size(); ++j) {
    const size_t i = names_.float_outputs[j];
    const std::string& d = names_.cotangents[j];
    c.open("if (" + d + ")");
    c.line(input_check(op, "cotangent", names_.cotangent_names[j], "*" + d,
                       names_.output_dtype(op_, i), true, fn().outputs[i]->shape));
    c.line(shape_check(op, "cotangent", names_.cotangent_names[j], "*" + d, fn().outputs[i]->shape,
                       names_.sizes));
    c.line("given |= " + std::to_string(1u << j) + "u;");
    c.close();
  }
  c.line("TORCH_CHECK_VALUE(given != 0, \"" + op +
         "\", \": every cotangent is None, so there is nothing to differentiate\");");
  c.line("return given;");
  c.close();
  c.line("");
}

/// The vjp call for the cotangents `given`; with `zeros`, the full program
/// with zeros for the cotangents not given.
void OpPrinter::print_backward_call(Code& c, unsigned given, bool zeros) const {
  std::vector<std::string> inputs, outputs;
  for (size_t k = 0; k < fn().inputs.size(); ++k) inputs.push_back("c_" + std::to_string(k));
  for (size_t j = 0; j < names_.float_outputs.size(); ++j)
    if (zeros || (given & (1u << j))) inputs.push_back("d_" + std::to_string(j));
  const ir::Function& f32 = *op_.f32.backward.at(given);
  // each float input's gradient, as AD marked it; the forward's outputs,
  // which the program computes again, into scratch tensors
  for (size_t o = 0; o < f32.outputs.size(); ++o) {
    const int k = f32.gradient_of(o);
    if (k >= 0) {
      outputs.push_back("grads[" + std::to_string(names_.gradient_slot(k)) + "]");
      continue;
    }
    const auto& names = fn().output_names;
    const auto it = std::find(names.begin(), names.end(), f32.output_names[o]);
    TENET_ASSERT(it != names.end(),
                 "a backward program's output is neither a gradient nor "
                 "an output of the forward");
    outputs.push_back("primal[" + std::to_string(it - names.begin()) + "]");
  }
  // an output that updates an input (the gradient of an output's initial
  // value, say, on its cotangent) starts as that input's value
  for (size_t o = 0; o < f32.outputs.size(); ++o)
    if (const int k = f32.updated_input(o); k >= 0)
      c.line(outputs[o] + ".copy_(" + inputs[k] + ");");
  c.line("if (f64)");
  c.line("  " + c_call(*op_.f64.backward.at(given), names_.sizes, inputs, outputs) + ";");
  c.line("else");
  c.line("  " + c_call(f32, names_.sizes, inputs, outputs) + ";");
}

void OpPrinter::print_backward_kernels(Code& c) const {
  const std::string op = qualified("_backward");
  const unsigned all = (1u << names_.float_outputs.size()) - 1;
  const bool partial = op_.f32.backward.size() > 1;
  const std::string ret = names_.result_return(names_.float_inputs.size(), "grads");
  for (const bool meta : {false, true}) {
    c.open(std::string("BackwardResult backward_") + (meta ? "meta" : "cpu") + "(" +
           parameters(true) + ")");
    c.line("Sizes s;");
    c.line("const bool f64 = check_inputs(s, " + arguments(false) + ");");
    std::string cotangents;
    for (const std::string& d : names_.cotangents) cotangents += ", " + d;
    c.line(std::string(meta ? "" : "const unsigned given = ") + "check_cotangents(s, f64" +
           cotangents + ");");
    c.line((meta ? "const " : "") +
           std::string("std::vector<at::Tensor> grads = gradients(s, f64, ") + arguments(false) +
           ");");
    if (!meta) {
      c.line("const std::vector<at::Tensor> primal = outputs(s, f64, " + arguments(false) + ");");
      for (size_t k = 0; k < fn().inputs.size(); ++k)
        c.line("const at::Tensor c_" + std::to_string(k) + " = " + names_.inputs[k] +
               ".contiguous();");
      for (size_t j = 0; j < names_.float_outputs.size(); ++j) {
        const std::string& d = names_.cotangents[j];
        const std::string absent =
            partial ? "at::Tensor()"
                    : "at::zeros_symint(" +
                          shape_code(fn().outputs[names_.float_outputs[j]]->shape, names_.sizes) +
                          ", " + names_.inputs.front() + ".options().dtype(" +
                          names_.output_dtype(op_, names_.float_outputs[j]) + "))";
        c.line("const at::Tensor d_" + std::to_string(j) + " = " + d + " ? " + d +
               "->contiguous() : " + absent + ";");
      }
      c.open("ext::run(\"" + op + "\", [&]");
      if (partial) {
        c.open("switch (given)");
        for (const auto& [set, f] : op_.f32.backward) {
          c.open("case " + std::to_string(set) + "u:");
          print_backward_call(c, set, false);
          c.line("break;");
          c.close();
        }
        c.close();
      } else {
        print_backward_call(c, all, true);
      }
      c.close("});");
    }
    c.line("return " + ret + ";");
    c.close();
    c.line("");
  }
}

void OpPrinter::print_handles(Code& c) const {
  c.line("using ForwardSignature = Result(" + names_.signature_params(false) + ");");
  c.open("const c10::TypedOperatorHandle<ForwardSignature>& forward_handle()");
  c.line("static const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(\"" +
         qualified() + "\", \"\").typed<ForwardSignature>();");
  c.line("return handle;");
  c.close();
  c.line("");
  if (!differentiable()) return;
  c.line("using BackwardSignature = BackwardResult(" + names_.signature_params(true) + ");");
  c.open("const c10::TypedOperatorHandle<BackwardSignature>& backward_handle()");
  c.line("static const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(\"" +
         qualified("_backward") + "\", \"\").typed<BackwardSignature>();");
  c.line("return handle;");
  c.close();
  c.line("");
}

void OpPrinter::print_autograd(Code& c) const {
  using namespace std::string_literals;
  const size_t n = fn().inputs.size();
  c.note("Autograd: the forward below autograd, the inputs saved; the backward runs " +
         qualified("_backward") + " on the cotangents of the outputs that have one.");
  c.open("struct Autograd : public torch::autograd::Function<Autograd>");
  c.open("static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, " +
         parameters(false) + ")");
  c.line("at::AutoDispatchBelowADInplaceOrView below_autograd;");
  c.line("const Result result = forward_handle().call(" + arguments(false) + ");");
  c.line("ctx->save_for_backward({" + arguments(false) + "});");
  c.line("ctx->set_materialize_grads(false);");
  c.line("torch::autograd::variable_list out = " +
         names_.result_list(fn().outputs.size(), "result") + ";");
  for (size_t i = 0; i < fn().outputs.size(); ++i)
    if (!is_float(fn().outputs[i]->type))
      c.line("ctx->mark_non_differentiable({out[" + std::to_string(i) + "]});");
  c.line("return out;");
  c.close();
  c.line("");
  c.open(
      "static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, "
      "torch::autograd::variable_list grads)");
  c.line("const torch::autograd::variable_list saved = ctx->get_saved_variables();");
  c.line("torch::autograd::variable_list result(" + std::to_string(n) + ");");
  std::string any;
  for (size_t j = 0; j < names_.float_outputs.size(); ++j) {
    const std::string& d = names_.cotangents[j];
    const std::string g = "grads[" + std::to_string(names_.float_outputs[j]) + "]";
    c.line("std::optional<at::Tensor> " + d + ";");
    c.line("if (" + g + ".defined()) " + d + " = " + g + ";");
    any += (any.empty() ? "" : " && ") + "!"s + d;
  }
  c.line("if (" + any + ") return result;");
  c.line("const BackwardResult g = backward_handle().call(" + arguments(true, "saved") + ");");
  for (size_t slot = 0; slot < names_.float_inputs.size(); ++slot) {
    const std::string k = std::to_string(names_.float_inputs[slot]);
    c.line("if (ctx->needs_input_grad(" + k + ")) result[" + k +
           "] = " + names_.result_item(names_.float_inputs.size(), "g", slot) + ";");
  }
  c.line("return result;");
  c.close();
  c.close("};");
  c.line("");
  c.open("Result forward_autograd(" + parameters(false) + ")");
  c.line("const torch::autograd::variable_list out = Autograd::apply(" + arguments(false) + ");");
  c.line("return " + names_.result_return(fn().outputs.size(), "out") + ";");
  c.close();
  c.line("");
}

void OpPrinter::print(Code& c) const {
  c.line("// ---- " + qualified() + " " +
         std::string(std::max<int>(3, 88 - int(qualified().size())), '-'));
  c.line("");
  c.line("namespace " + names_.cxx_namespace + " {");
  c.line("");
  c.line("using Result = " + names_.result_type(fn().outputs.size()) + ";");
  if (differentiable())
    c.line("using BackwardResult = " + names_.result_type(names_.float_inputs.size()) + ";");
  c.line("");
  print_sizes_and_checks(c);
  print_outputs(c);
  print_forward_kernels(c);
  if (differentiable()) {
    print_gradients(c);
    print_cotangent_checks(c, qualified("_backward"));
    print_backward_kernels(c);
  }
  print_handles(c);
  if (differentiable()) print_autograd(c);
  c.line("}  // namespace " + names_.cxx_namespace);
  c.line("");
}

/// `m.def("schema");` in the TORCH_LIBRARY block, the schema split into string
/// pieces after commas where it would pass the column limit.
std::string schema_definition(const std::string& schema) {
  const size_t limit = Code::kColumnLimit;
  const std::string one = "  m.def(\"" + schema + "\");";
  if (one.size() <= limit) return one + "\n";
  const std::string indent = "      \"";
  std::string out = "  m.def(";
  for (size_t from = 0; from < schema.size();) {
    // the longest piece that fits, ending after a comma (at least the first)
    size_t cut = schema.size();
    if (indent.size() + (cut - from) + 3 > limit) {
      const size_t first = schema.find(", ", from);
      cut = first == std::string::npos ? schema.size() : first + 2;
      for (size_t at = schema.find(", ", cut);
           at != std::string::npos && indent.size() + (at + 2 - from) + 1 <= limit;
           at = schema.find(", ", at + 1))
        cut = at + 2;
    }
    out += "\n" + indent + schema.substr(from, cut - from) + "\"";
    from = cut;
  }
  return out + ");\n";
}

void OpPrinter::print_registration(Code& def, Code& cpu, Code& meta, Code& autograd) const {
  def.raw(schema_definition(names_.schema(op_.name, fn())));
  const std::string& x = names_.cxx_namespace;
  cpu.line("m.impl(\"" + op_.name + "\", &" + x + "::forward_cpu);");
  meta.line("m.impl(\"" + op_.name + "\", &" + x + "::forward_meta);");
  if (!differentiable()) return;
  def.raw(schema_definition(names_.backward_schema(op_.name, fn())));
  cpu.line("m.impl(\"" + op_.name + "_backward\", &" + x + "::backward_cpu);");
  meta.line("m.impl(\"" + op_.name + "_backward\", &" + x + "::backward_meta);");
  autograd.line("m.impl(\"" + op_.name + "\", &" + x + "::forward_autograd);");
  autograd.line("m.impl(\"" + op_.name +
                "_backward\", torch::autograd::autogradNotImplementedFallback());");
}

/// One function of the C++ interface: `returns name(params)`, declared (with
/// an alias for a tuple of results) or defined as a call through `handle`.
void print_api_function(Code& c, bool definitions, const std::string& name, size_t results,
                        const OpNames& names, const std::string& params, const std::string& call) {
  std::string type = names.result_type(results);
  if (results > 1) {
    if (!definitions) c.line("using " + name + "_result = " + type + ";");
    type = name + "_result";
  }
  const std::string head = type + " " + name + "(" + params + ")";
  if (definitions) {
    c.open(head);
    c.line("return " + call + ";");
    c.close();
  } else {
    c.line(head + ";");
  }
}

void OpPrinter::print_api(Code& c, bool definitions) const {
  const std::string& x = names_.cxx_namespace;
  if (!definitions)
    c.note(names_.describe(fn()) + ": the operator " + qualified() +
           (differentiable() ? ", with autograd." : "."));
  print_api_function(c, definitions, op_.name, fn().outputs.size(), names_,
                     names_.signature_params(false, true),
                     x + "::forward_handle().call(" + arguments(false) + ")");
  if (!differentiable()) return;
  if (!definitions) {
    c.comment("The vector-Jacobian products of " + qualified() +
              ": a gradient per float input, from the");
    c.comment("cotangents given (std::nullopt: an output the loss does not use).");
  }
  print_api_function(c, definitions, op_.name + "_backward", names_.float_inputs.size(), names_,
                     names_.signature_params(true, true),
                     x + "::backward_handle().call(" + arguments(true) + ")");
}

}  // namespace

std::string ops_source(const std::string& ns, const std::vector<TorchOp>& ops,
                       const std::vector<std::string>& kernel_headers,
                       const std::string& api_header_name, const std::string& origin) {
  Code c;
  c.line("// " + ns + "_ops.cpp: the PyTorch operators of " + origin + ", in the namespace " + ns +
         ".");
  c.line("// Generated by Tenet. Do not edit: regenerate it.");
  c.line("#include \"" + api_header_name + "\"");
  c.line("");
  for (const char* h :
       {"ATen/ATen.h", "ATen/core/dispatch/Dispatcher.h", "torch/autograd.h",
        "torch/csrc/autograd/autograd_not_implemented_fallback.h", "torch/library.h"})
    c.line("#include <" + std::string(h) + ">");
  c.line("");
  c.line("#include <optional>");
  c.line("#include <tuple>");
  c.line("#include <vector>");
  c.line("");
  for (const std::string& h : kernel_headers) c.line("#include \"" + h + "\"");
  c.line("#include \"tenet_torch.h\"");
  c.line("");
  c.line("namespace {");
  c.line("");
  c.line("namespace ext = tenet::torch_ext;");
  c.line("");
  for (const TorchOp& op : ops) OpPrinter(ns, op).print(c);
  c.line("}  // namespace");
  c.line("");
  c.line("namespace " + ns + " {");
  c.line("");
  for (const TorchOp& op : ops) OpPrinter(ns, op).print_api(c, true);
  c.line("");
  c.line("}  // namespace " + ns);
  c.line("");
  Code def(1), cpu(1), meta(1), autograd(1);
  for (const TorchOp& op : ops) OpPrinter(ns, op).print_registration(def, cpu, meta, autograd);
  c.raw("TORCH_LIBRARY(" + ns + ", m) {\n" + def.str() + "}\n\n");
  c.raw("TORCH_LIBRARY_IMPL(" + ns + ", CPU, m) {\n" + cpu.str() + "}\n\n");
  c.raw("TORCH_LIBRARY_IMPL(" + ns + ", Meta, m) {\n" + meta.str() + "}\n");
  if (!autograd.str().empty())
    c.raw("\nTORCH_LIBRARY_IMPL(" + ns + ", Autograd, m) {\n" + autograd.str() + "}\n");
  return c.str();
}

std::string api_header(const std::string& ns, const std::vector<TorchOp>& ops,
                       const std::string& origin) {
  Code c;
  c.line("// " + ns + ".h: the PyTorch operators of " + origin + " for C++ programs.");
  c.line("// Generated by Tenet. Do not edit: regenerate it.");
  c.line("// Each function calls its operator through PyTorch's dispatcher (autograd included);");
  c.line("// linking lib" + ns + ".so also registers the operators, for torch.ops." + ns + ".");
  c.line("#pragma once");
  c.line("");
  c.line("#include <ATen/core/Tensor.h>");
  c.line("");
  c.line("#include <optional>");
  c.line("#include <tuple>");
  c.line("");
  c.line("namespace " + ns + " {");
  c.line("");
  for (const TorchOp& op : ops) {
    OpPrinter(ns, op).print_api(c, false);
    c.line("");
  }
  c.line("}  // namespace " + ns);
  return c.str();
}

}  // namespace tenet::extension
