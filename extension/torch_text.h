/// \file
/// The pieces of text the operator printer (torch_ops.cpp) is made of: the
/// names it gives an operator's arguments, PyTorch's spellings of types,
/// schemas and size expressions, the checks of an argument and the call of a
/// generated C function.
///
/// Internal to extension/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "extension/torch_ops.h"
#include "ir/ir.h"

namespace tenet::extension {

/// `const at::Tensor& name`, `const std::optional<at::Tensor>& name`.
std::string tensor_param(const std::string& name);
std::string optional_param(const std::string& name);

/// A size expression over the fields of a `Sizes` struct (`s.<field>`), as
/// c10::SymInt arithmetic: `s.t_B * 3 + 1`, `ext::floor_div(s.t_H - 9, 2)`.
std::string size_code(const ir::SizeExpr& e, const std::map<std::string, std::string>& fields);
/// `{a, b}`: a shape's sizes.
std::string shape_code(const std::vector<ir::SizeExpr>& shape,
                       const std::map<std::string, std::string>& fields);
/// "[B, I]": a shape as the source declares it.
std::string declared_shape(const std::vector<ir::SizeExpr>& shape);

/// ext::check_input(...) / ext::check_shape(...) of argument `tensor`.
std::string input_check(const std::string& op, const std::string& kind, const std::string& name,
                        const std::string& tensor, const std::string& dtype, bool is_float,
                        const std::vector<ir::SizeExpr>& shape);
std::string shape_check(const std::string& op, const std::string& kind, const std::string& name,
                        const std::string& tensor, const std::vector<ir::SizeExpr>& shape,
                        const std::map<std::string, std::string>& fields);

/// `tenet_f(sizes..., inputs..., outputs...)`: `inputs` and `outputs` are
/// tensors, one per input (an updated one is skipped, as the ABI passes it
/// as its output's buffer) and per output of `fn`.
std::string c_call(const ir::Function& fn, const std::map<std::string, std::string>& fields,
                   const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

/// at::kFloat, at::kLong, ... for an element type.
std::string scalar_type(ElemType t);

/// The names and positions an operator's printed source uses.
struct OpNames {
  explicit OpNames(const TorchOp& op);

  std::string cxx_namespace;                 // tenet_op_<name>: the operator's code
  std::vector<std::string> inputs;           // C++ parameter, per input
  std::vector<std::string> schema_inputs;    // schema argument, per input
  std::vector<size_t> float_inputs;          // positions of float inputs
  std::vector<size_t> float_outputs;         // positions of float outputs
  std::vector<std::string> cotangents;       // C++ parameter, per float output
  std::vector<std::string> cotangent_names;  // schema argument, per float output
  std::map<std::string, std::string> sizes;  // size parameter -> Sizes field

  bool has_backward() const { return !float_inputs.empty() && !float_outputs.empty(); }
  /// `&t_x, &t_h`: the inputs whose dtype follows the variant.
  std::string float_input_pointers() const;
  /// Whether input k's dtype follows the variant (float32 or float64).
  bool is_float_input(const TorchOp& op, size_t k) const;
  /// Input k's / output i's dtype in a call (`f64 ? at::kDouble : at::kFloat`).
  std::string dtype(const TorchOp& op, size_t k) const;
  std::string output_dtype(const TorchOp& op, size_t i) const;
  /// Where float input k's gradient is in the backward's results.
  size_t gradient_slot(size_t k) const;

  /// `at::Tensor` or `std::tuple<at::Tensor, ...>` for n results.
  std::string result_type(size_t n) const;
  /// Result(v[0], v[1]) or v[0]: n results from a vector `v`.
  std::string result_return(size_t n, const std::string& v) const;
  /// {std::get<0>(r), ...} or {r}: n results as a variable_list.
  std::string result_list(size_t n, const std::string& r) const;
  std::string result_item(size_t n, const std::string& r, size_t i) const;
  /// The dispatcher's C++ signature's parameters (`const at::Tensor&, ...`),
  /// with names when `named`.
  std::string signature_params(bool cotangents, bool named = false) const;

  std::string schema(const std::string& name, const ir::Function& fn) const;
  std::string backward_schema(const std::string& name, const ir::Function& fn) const;
  /// "lltm(x: float32[B, I], ...) -> (new_h: float32[B, S], ...)"
  std::string describe(const ir::Function& fn) const;
};

}  // namespace tenet::extension
