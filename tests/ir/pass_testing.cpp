#include "tests/ir/pass_testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/ir_parser.h"
#include "tests/support/golden.h"

namespace tenet::ir::testing {

Module read_ir(const std::string& name) {
  return parse_ir(SourceFile::read(tenet::testing::source_path("tests/passes/" + name)));
}

namespace {

bool identical(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void plant_specials(std::vector<Tensor>& inputs) {
  const double specials[] = {-0.0, 0.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), std::nan("")};
  for (Tensor& t : inputs) {
    if (!is_float(t.type())) continue;
    for (int64_t i = 0; i < t.numel() && i < 5; ++i) t.set(i, specials[i]);
  }
}

}  // namespace

void expect_same_outputs(const Function& before, const Function& after, int64_t size) {
  SizeBindings sizes;
  for (const auto& s : before.size_params) sizes[s] = size;
  expect_same_outputs(before, after, sizes);
}

void expect_same_outputs(const Function& before, const Function& after, const SizeBindings& sizes,
                         double float32_tolerance) {
  for (uint64_t seed : {1u, 2u}) {
    std::vector<Tensor> inputs = random_inputs(before, sizes, seed);
    if (seed == 2) plant_specials(inputs);
    for (std::optional<ElemType> mode : {std::optional<ElemType>(), std::optional(ElemType::F64)}) {
      InterpOptions options{mode};
      std::vector<Tensor> want = interpret(before, inputs, sizes, options);
      std::vector<Tensor> got = interpret(after, inputs, sizes, options);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(got[o].shape(), want[o].shape());
        double scale = 0;
        for (int64_t i = 0; i < want[o].numel(); ++i)
          if (std::isfinite(want[o].get(i))) scale = std::max(scale, std::fabs(want[o].get(i)));
        const double tolerance =
            !mode && want[o].type() == ElemType::F32 ? float32_tolerance * scale : 0;
        auto close = [&](double a, double b) {
          return identical(a, b) || (tolerance > 0 && std::isfinite(a) && std::isfinite(b) &&
                                     std::fabs(a - b) <= tolerance);
        };
        for (int64_t i = 0; i < want[o].numel(); ++i)
          ASSERT_TRUE(close(got[o].get(i), want[o].get(i)))
              << before.name << " output " << before.outputs[o]->name << " element " << i
              << ": before " << want[o].get(i) << ", after " << got[o].get(i) << " (seed " << seed
              << (mode ? ", float64 mode)" : ")");
      }
    }
  }
}

const Stmt* find_statement(const std::vector<Stmt>& body, const std::string& name) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::Loop) {
      if (const Stmt* inner = find_statement(s.loop->body, name)) return inner;
    } else if (s.compute.result->name == name) {
      return &s;
    }
  }
  return nullptr;
}

}  // namespace tenet::ir::testing
