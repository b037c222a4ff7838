/// \file
/// The unparser's round trip, shared by the lang suite (forward programs) and
/// the cli suite (gradient programs, which need tenet_ad): print an IR
/// function as source, check that source, and compare the two functions'
/// outputs on random inputs in float64.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "lang/unparse.h"

namespace tenet::testing {

/// Small sizes for every function of models/, keyed "file.tn:function"
/// (a new model needs a line here).
inline const std::map<std::string, ir::SizeBindings>& model_sizes() {
  static const std::map<std::string, ir::SizeBindings> sizes = {
      {"capsnet.tn:squash_primary", {{"B", 2}, {"T", 2}, {"Y", 2}, {"X", 1}, {"D", 3}}},
      {"capsnet.tn:squash_digit", {{"B", 2}, {"K", 3}, {"E", 4}}},
      {"capsnet.tn:softmax_digits", {{"B", 2}, {"T", 2}, {"Y", 1}, {"X", 2}, {"K", 3}}},
      {"capsnet.tn:routing", {{"B", 2}, {"T", 2}, {"Y", 1}, {"X", 2}, {"K", 3}, {"E", 4}}},
      {"capsnet.tn:capsnet", {{"B", 1}}},
      {"capsnet.tn:capsnet_eval", {{"B", 1}}},
      {"capsnet.tn:digit_capsules", {{"B", 1}}},
      {"capsnet.tn:margin_loss", {{"B", 2}, {"K", 3}}},
      {"capsnet.tn:decoder", {{"B", 1}}},
      {"capsule_transform.tn:capsule_transform",
       {{"B", 2}, {"T", 2}, {"Y", 1}, {"X", 2}, {"D", 3}, {"K", 2}, {"E", 3}}},
      {"conv2d.tn:conv2d",
       {{"B", 2}, {"C", 2}, {"H", 6}, {"W", 5}, {"O", 3}, {"KH", 3}, {"KW", 2}}},
      {"conv2d.tn:conv2d_stride2", {{"B", 1}, {"C", 2}, {"H", 12}, {"W", 11}, {"O", 2}}},
      {"layernorm.tn:layernorm", {{"N", 3}, {"D", 4}}},
      {"linear.tn:linear", {{"B", 2}, {"I", 3}, {"O", 4}}},
      {"matmul.tn:matmul", {{"M", 2}, {"K", 3}, {"N", 4}}},
      {"maxpool.tn:maxpool2x2", {{"B", 1}, {"C", 2}, {"H", 6}, {"W", 5}}},
      {"mlp.tn:log_softmax", {{"B", 2}, {"K", 3}}},
      {"mlp.tn:nll_loss", {{"B", 2}, {"K", 3}}},
      {"mlp.tn:mlp", {{"B", 2}}},
      {"embedding_bag.tn:log_softmax", {{"B", 2}, {"K", 3}}},
      {"embedding_bag.tn:nll_loss", {{"B", 2}, {"K", 3}}},
      {"embedding_bag.tn:embedding_bag", {{"B", 2}}},
      {"mnist_cnn.tn:log_softmax", {{"B", 2}, {"K", 3}}},
      {"mnist_cnn.tn:nll_loss", {{"B", 2}, {"K", 3}}},
      {"mnist_cnn.tn:mnist_cnn", {{"B", 1}}},
      {"routing.tn:softmax", {{"B", 2}, {"I", 3}, {"J", 4}}},
      {"routing.tn:squash", {{"B", 2}, {"J", 3}, {"E", 4}}},
      {"routing.tn:routing", {{"B", 2}, {"I", 3}, {"J", 4}, {"E", 5}}},
      {"softmax.tn:softmax", {{"N", 3}, {"K", 4}}},
      {"squash.tn:squash", {{"B", 2}, {"N", 3}, {"D", 4}}},
  };
  return sizes;
}

/// The given sizes that are size parameters of fn (the rest are bound from
/// the inputs' shapes, or fn does not know them).
inline ir::SizeBindings sizes_for(const ir::Function& fn, const ir::SizeBindings& sizes) {
  ir::SizeBindings out;
  for (const std::string& p : fn.size_params)
    if (sizes.count(p)) out[p] = sizes.at(p);
  return out;
}

/// Unparses fn, checks the text, and EXPECTs the checked function to give
/// fn's outputs on random inputs, in float64, to 1e-12 of their magnitude
/// (exactly but for the order of sums). Returns the printed source.
inline std::string expect_unparse_roundtrip(const ir::Function& fn, const ir::SizeBindings& sizes,
                                            uint64_t seed = 3) {
  std::string text = lang::unparse(fn);
  ir::Module back;
  try {
    back = lang::compile_source(SourceFile(fn.name + ".tn", text));
  } catch (const CompileError& e) {
    ADD_FAILURE() << "the unparsed source of " << fn.name << " does not check:\n"
                  << e.what() << "\nsource:\n"
                  << text;
    return text;
  }
  if (back.functions.size() != 1) {
    ADD_FAILURE() << "expected one function in\n" << text;
    return text;
  }
  const ir::Function& g = back.functions[0];
  EXPECT_EQ(g.inputs.size(), fn.inputs.size()) << text;
  EXPECT_EQ(g.outputs.size(), fn.outputs.size()) << text;
  if (g.inputs.size() != fn.inputs.size() || g.outputs.size() != fn.outputs.size()) return text;

  std::vector<Tensor> inputs = ir::random_inputs(fn, sizes_for(fn, sizes), seed);
  ir::InterpOptions f64{ElemType::F64};
  std::vector<Tensor> want = ir::interpret(fn, inputs, sizes_for(fn, sizes), f64);
  std::vector<Tensor> got = ir::interpret(g, inputs, sizes_for(g, sizes), f64);
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].shape() != want[k].shape()) {
      ADD_FAILURE() << fn.name << " output " << k << " has another shape\n" << text;
      return text;
    }
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      double a = want[k].get(i), b = got[k].get(i);
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      if (!(std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(a)))) {
        ADD_FAILURE() << fn.name << " output " << k << " (" << fn.output_names[k] << ") differs at "
                      << i << ": " << a << " vs " << b << "\nsource:\n"
                      << text;
        return text;
      }
    }
  }
  return text;
}

}  // namespace tenet::testing
