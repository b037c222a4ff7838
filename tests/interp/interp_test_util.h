/// \file
/// Small helpers shared by the interpreter tests: tensors from literal values,
/// size symbols and ranges with short names.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/interp.h"
#include "support/error.h"
#include "support/tensor.h"

namespace tenet::ir::testing {

inline SizeExpr sym(const std::string& name) {
  return SizeExpr::sym(name);
}

inline Tensor tensor_of(ElemType type, std::vector<int64_t> shape, const std::vector<double>& v) {
  Tensor t(type, std::move(shape));
  EXPECT_EQ(int64_t(v.size()), t.numel()) << "literal has the wrong number of values";
  for (int64_t i = 0; i < t.numel() && i < int64_t(v.size()); ++i) t.set(i, v[size_t(i)]);
  return t;
}

inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

inline Expr read(const ValuePtr& t, const std::vector<std::string>& indices) {
  std::vector<Affine> a;
  for (const auto& i : indices) a.push_back(Affine::var(i));
  return make_read(t, a);
}

/// coef*index + ... + offset, e.g. affine({{"i", 2}, {"k", 1}}, -1).
inline Affine affine(std::vector<std::pair<std::string, int64_t>> terms, SizeExpr offset = 0) {
  return Affine{std::move(terms), std::move(offset)};
}

inline Expr f32(double v) {
  return make_const(v, ElemType::F32);
}

/// The BindError message of running `f`, or "" when it does not throw.
template <typename F>
std::string bind_error_of(F&& f) {
  try {
    f();
  } catch (const BindError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tenet::ir::testing
