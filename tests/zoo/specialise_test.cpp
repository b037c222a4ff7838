// Functions specialised to their sizes (ir/specialise.h, Request::static_sizes),
// on every program of the operator zoo: the specialised function computes what
// the general one computes at those sizes (its forward bitwise in the
// interpreter; its gradient, which AD may derive with other reduction orders
// once it can compare ranges, to float64 rounding), and compiled with the
// sizes compiled in, it matches the interpreter.
#include "ir/specialise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "support/error.h"
#include "tests/support/golden.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 11;
constexpr double kFloat64Tolerance = 1e-12;
constexpr double kCompiledTolerance = 1e-4;  // as the zoo suite's (zoo_test.cpp)

/// The case's sizes that are size parameters of `fn` (a table row may bind more).
ir::SizeBindings own_sizes(const ZooCase& c, const ir::Function& fn) {
  ir::SizeBindings out;
  for (const auto& [name, value] : c.sizes)
    if (std::find(fn.size_params.begin(), fn.size_params.end(), name) != fn.size_params.end())
      out[name] = value;
  return out;
}

class SpecialiseZoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(SpecialiseZoo, ComputesWhatTheGeneralFunctionDoesAtThoseSizes) {
  const ZooCase& c = GetParam();
  const ir::Function& fn = *zoo_module(c.file).find(c.fn);
  const ir::SizeBindings sizes = own_sizes(c, fn);
  const ir::Function spec = ir::specialise_sizes(fn, sizes);
  EXPECT_TRUE(spec.size_params.empty()) << "every size parameter is bound";
  for (const ir::ValuePtr& v : spec.inputs)
    for (const ir::SizeExpr& d : v->shape) EXPECT_TRUE(d.constant()) << v->name << ": " << d.str();

  const std::vector<Tensor> inputs = make_inputs(fn, c.sizes, kSeed, c.ranges, c.int_hi);
  const std::vector<Tensor> general = ir::interpret(fn, inputs, sizes);
  const std::vector<Tensor> special = ir::interpret(spec, inputs);
  ASSERT_EQ(general.size(), special.size());
  for (size_t i = 0; i < general.size(); ++i)
    EXPECT_TRUE(bitwise_equal(general[i], special[i])) << fn.output_names[i];

  const ir::Function general_grad = ad::differentiate(fn, vjp_request(c));
  const ir::Function special_grad = ad::differentiate(spec, vjp_request(c));
  const std::vector<Tensor> all = with_cotangents(fn, general_grad, inputs, kSeed);
  ir::InterpOptions f64;
  f64.float_type = ElemType::F64;
  const std::vector<Tensor> expected = ir::interpret(general_grad, all, sizes, f64);
  const std::vector<Tensor> actual = ir::interpret(special_grad, all, {}, f64);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(max_rel_to_peak(actual[i], expected[i]), kFloat64Tolerance)
        << general_grad.output_names[i];
}

INSTANTIATE_TEST_SUITE_P(Zoo, SpecialiseZoo, ::testing::ValuesIn(zoo_table()),
                         [](const ::testing::TestParamInfo<ZooCase>& param_info) {
                           return case_id(param_info.param);
                         });

/// The driver's path (Request::static_sizes), compiled, for programs whose
/// lowering turns on sizes (GEMMs, convolutions, a convolution library call,
/// normalisations, a scan, CapsNet's routing): the specialised vector-Jacobian
/// program against the interpreter running the same program.
TEST(SpecialiseZooCompiled, CompiledWithStaticSizesMatchesTheInterpreter) {
  const std::vector<std::string> chosen = {"batch_norm", "conv2d_padded", "conv2d_stride2",
                                           "scans",      "softmax",       "routing3"};
  int seen = 0;
  for (const ZooCase& c : zoo_table()) {
    if (std::find(chosen.begin(), chosen.end(), case_id(c)) == chosen.end()) continue;
    ++seen;
    const ir::Function& fn = *zoo_module(c.file).find(c.fn);
    driver::Request r;
    r.path = tenet::testing::source_path("models/zoo/" + c.file + ".tn");
    r.functions = {{c.fn, vjp_request(c)}};
    r.static_sizes = own_sizes(c, fn);
    const driver::Compilation compiled = driver::compile(r);
    const ir::Function& grad = compiled.derived.functions.at(0);
    EXPECT_TRUE(grad.size_params.empty()) << case_id(c);
    jit::JitOptions options;
    const char* dir = std::getenv("TENET_CACHE_DIR");  // CTest: a cache in the build folder
    options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
    const std::vector<Tensor> inputs = make_inputs(fn, c.sizes, kSeed, c.ranges, c.int_hi);
    const std::vector<Tensor> all = with_cotangents(fn, grad, inputs, kSeed);
    const std::vector<Tensor> actual = driver::load(r, compiled, options).at(0).run(all);
    const std::vector<Tensor> expected = ir::interpret(grad, all);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
      EXPECT_LE(max_rel_to_peak(actual[i], expected[i]), kCompiledTolerance)
          << case_id(c) << ": " << grad.output_names[i];
  }
  EXPECT_EQ(seen, int(chosen.size())) << "a chosen program left the zoo table";
}

TEST(Specialise, RefusesUnknownNegativeAndEmptySizes) {
  const ir::Function& conv = *zoo_module("conv2d_stride1").find("conv2d_stride1");
  try {
    ir::specialise_sizes(conv, {{"Q", 2}});
    ADD_FAILURE() << "no error for an unknown size";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("has no size parameter 'Q'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ir::specialise_sizes(conv, {{"B", -1}}), BindError);
  // A 3x3 kernel over a 1-pixel-high image: the output's height is negative.
  ir::SizeBindings sizes;
  for (const std::string& p : conv.size_params) sizes[p] = 3;
  sizes["H"] = 1;
  try {
    ir::specialise_sizes(conv, sizes);
    ADD_FAILURE() << "no error for a negative extent";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("has an empty range [0, -1) for H = 1, KH = 3"),
              std::string::npos)
        << e.what();
  }
  // The same with the other sizes free: the constant extent itself.
  try {
    ir::specialise_sizes(conv, {{"H", 1}, {"KH", 3}});
    ADD_FAILURE() << "no error for a negative extent";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("negative extent -1"), std::string::npos) << e.what();
  }
  // Partly bound: the rest stay parameters.
  const ir::Function part = ir::specialise_sizes(conv, {{"B", 2}});
  EXPECT_EQ(std::count(part.size_params.begin(), part.size_params.end(), "B"), 0);
  EXPECT_EQ(part.size_params.size() + 1, conv.size_params.size());
}

TEST(Specialise, AnIndexCheckThatTheSizesMakeFailStillFailsAtRunTime) {
  // With N = 1 the computed index select(N > 1, 0, N) is the constant 1, outside
  // x's one element: it stays a computed index, so its range check reports it
  // (an affine index would read outside x unchecked); with N = 2 it is 0.
  driver::Request r;
  r.path = "check.tn";
  r.text = "def check(float(N) x) -> (y) {\n  y(i) = x(i) + x(select(N > 1, 0, N))\n}\n";
  r.functions = {{"check", std::nullopt}};
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  for (int64_t n : {1, 2}) {
    r.static_sizes = {{"N", n}};
    const driver::Compilation c = driver::compile(r);
    const ir::Function& fn = c.optimised.functions.at(0);
    const std::vector<Tensor> x = {Tensor(ElemType::F32, {n})};
    auto compiled = [&] { return driver::load(r, c, options).at(0).run(x); };
    if (n == 1) {
      EXPECT_THROW(ir::interpret(fn, x), BindError);
      try {
        compiled();
        ADD_FAILURE() << "no error for an index out of range";
      } catch (const BindError& e) {
        EXPECT_NE(std::string(e.what()).find("outside [0, 1)"), std::string::npos) << e.what();
      }
    } else {
      EXPECT_EQ(compiled().at(0).numel(), 2);
      EXPECT_EQ(ir::interpret(fn, x).at(0).numel(), 2);
    }
  }
}

}  // namespace
}  // namespace tenet::zoo
