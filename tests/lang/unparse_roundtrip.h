/// \file
/// The unparser's round trip, shared by the lang suite (forward programs) and
/// the cli suite (gradient programs, which need tenet_ad): print an IR
/// function as source, check that source, and compare the two functions'
/// outputs on random inputs in float64.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "lang/unparse.h"

namespace tenet::testing {

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
      if (std::isnan(a) && std::isnan(b)) continue;
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
