// Initialisers: the text form (parse, print back, every error), the values'
// statistics and bounds against the documented formulas, and determinism in
// (seed, parameter name) only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tests/train/train_test_util.h"
#include "train/init.h"
#include "train/params.h"

namespace tenet::train {
namespace {

using testing::expect_error;

struct Stats {
  double mean = 0, stddev = 0, min = 0, max = 0;
};

Stats stats_of(const Tensor& t) {
  const float* p = t.data<float>();
  const int64_t n = t.numel();
  double sum = 0, sq = 0;
  Stats s{0, 0, p[0], p[0]};
  for (int64_t i = 0; i < n; ++i) {
    sum += p[i];
    sq += double(p[i]) * p[i];
    s.min = std::min<double>(s.min, p[i]);
    s.max = std::max<double>(s.max, p[i]);
  }
  s.mean = sum / double(n);
  s.stddev = std::sqrt(sq / double(n) - s.mean * s.mean);
  return s;
}

Tensor drawn(const std::string& spec, int64_t n = 200000, uint64_t seed = 1) {
  Tensor t(ElemType::F32, {n});
  initialize(t, InitSpec::parse(spec), seed, "w");
  return t;
}

// Sampling tolerance for a mean: 5 standard errors.
double mean_tolerance(double stddev, int64_t n) {
  return 5 * stddev / std::sqrt(double(n));
}

TEST(InitParse, CanonicalTextRoundTrips) {
  const std::pair<const char*, const char*> cases[] = {
      {"uniform(-0.1, 0.1)", "uniform(-0.1, 0.1)"},
      {"uniform(low=-1, high=2)", "uniform(-1, 2)"},
      {" normal( 0 , 1e-2 ) ", "normal(0, 0.01)"},
      {"truncated_normal(0, 0.01)", "truncated_normal(0, 0.01)"},
      {"kaiming_uniform(fan_in=81)", "kaiming_uniform(fan_in=81)"},
      {"kaiming_normal(fan_out=27, gain=1)", "kaiming_normal(fan_out=27, gain=1)"},
      {"xavier_uniform(fan_in=784, fan_out=512)", "xavier_uniform(fan_in=784, fan_out=512)"},
      {"xavier_normal(fan_out=10, fan_in=16, gain=2)",
       "xavier_normal(fan_in=16, fan_out=10, gain=2)"},
      {"zeros", "zeros"},
      {"zeros()", "zeros"},
      {"ones", "ones"},
      {"constant(value=0.1)", "constant(0.1)"},
      {"constant(+3)", "constant(3)"},
  };
  for (const auto& [text, canonical] : cases) {
    const InitSpec spec = InitSpec::parse(text);
    EXPECT_EQ(spec.to_string(), canonical) << text;
    EXPECT_EQ(InitSpec::parse(spec.to_string()), spec) << text;
  }
}

TEST(InitParse, FieldsAndDefaults) {
  const InitSpec k = InitSpec::parse("kaiming_uniform(fan_in=81)");
  EXPECT_EQ(k.kind, InitKind::KaimingUniform);
  EXPECT_EQ(k.fan_in, 81);
  EXPECT_EQ(k.fan_out, 0);
  EXPECT_DOUBLE_EQ(k.gain, std::sqrt(2.0));  // ReLU's gain by default
  const InitSpec x = InitSpec::parse("xavier_normal(fan_in=3, fan_out=5)");
  EXPECT_EQ(x.gain, 1.0);
  const InitSpec u = InitSpec::parse("uniform(-0.25, 0.5)");
  EXPECT_EQ(u.low, -0.25);
  EXPECT_EQ(u.high, 0.5);
}

TEST(InitParse, ErrorsSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "expected an initialiser name"},
      {"gaussian(0, 1)", "unknown initialiser 'gaussian' (known: uniform, normal,"},
      {"uniform(0.1, -0.1)", "low must be less than high"},
      {"uniform(-0.1)", "missing argument 'high' (low, high)"},
      {"uniform(1, 2, 3)", "too many arguments for uniform"},
      {"normal(0, 0)", "std must be positive"},
      {"normal(0, 0.1", "missing ')'"},
      {"uniform(-0.1; 0.1)", "expected ',' or ')'"},
      {"normal(0, abc)", "expected '=' after 'abc'"},
      {"constant(1e999)", "expected a number"},
      {"kaiming_uniform(81)",
       "kaiming_uniform takes named arguments only (fan_in=, fan_out=, gain=)"},
      {"kaiming_uniform()", "needs exactly one of fan_in= or fan_out="},
      {"kaiming_normal(fan_in=81, fan_out=81)", "needs exactly one of fan_in= or fan_out="},
      {"kaiming_normal(fan_in=0)", "fans must be positive"},
      {"kaiming_uniform(fan_in=81, gain=-1)", "gain must be positive"},
      {"kaiming_uniform(fan=81)", "unknown argument 'fan' for kaiming_uniform"},
      {"xavier_uniform(fan_in=784)", "missing argument 'fan_out'"},
      {"uniform(low=1, low=2)", "argument 'low' given twice"},
      {"zeros(1)", "too many arguments for zeros (it takes none)"},
      {"constant(0.1) x", "unexpected 'x'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.first);
    expect_error([&] { InitSpec::parse(c.first); },
                 {std::string("bad initialiser \"") + c.first + "\": ", c.second});
  }
}

TEST(InitDescribe, ShowsTheDerivedNumbers) {
  EXPECT_EQ(describe_init("conv1_w", {256, 1, 9, 9}, InitSpec::parse("kaiming_uniform(fan_in=81)")),
            "conv1_w [256,1,9,9] kaiming_uniform(fan_in=81) -> bound 0.272");
  EXPECT_EQ(describe_init("b", {10}, InitSpec::parse("constant(0.1)")),
            "b [10] constant(0.1) -> = 0.1");
  EXPECT_EQ(InitSpec::parse("kaiming_normal(fan_in=50)").derived(), "std 0.2");
  EXPECT_EQ(InitSpec::parse("xavier_uniform(fan_in=784, fan_out=512)").derived(), "bound 0.068");
  EXPECT_EQ(InitSpec::parse("truncated_normal(1, 0.5)").derived(), "std 0.5, within [0, 2]");
}

TEST(InitValues, UniformKindsStayInTheirBoundsAndHaveTheRightSpread) {
  struct Case {
    const char* spec;
    double bound;  // the documented formula, computed here
  };
  const Case cases[] = {
      {"kaiming_uniform(fan_in=81)", std::sqrt(2.0) * std::sqrt(3.0 / 81)},
      {"kaiming_uniform(fan_out=20, gain=1)", std::sqrt(3.0 / 20)},
      {"xavier_uniform(fan_in=784, fan_out=512)", std::sqrt(6.0 / (784 + 512))},
      {"xavier_uniform(fan_in=4, fan_out=4, gain=3)", 3 * std::sqrt(6.0 / 8)},
      {"uniform(-0.1, 0.1)", 0.1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const Tensor t = drawn(c.spec);
    const Stats s = stats_of(t);
    const double stddev = c.bound / std::sqrt(3.0);  // of U(-b, b)
    EXPECT_GE(s.min, -c.bound);
    EXPECT_LE(s.max, c.bound);
    EXPECT_LT(s.min, -0.999 * c.bound);  // the whole range is used
    EXPECT_GT(s.max, 0.999 * c.bound);
    EXPECT_NEAR(s.mean, 0.0, mean_tolerance(stddev, t.numel()));
    EXPECT_NEAR(s.stddev, stddev, 0.01 * stddev);
  }
  const Stats shifted = stats_of(drawn("uniform(2, 3)"));
  EXPECT_GE(shifted.min, 2.0);
  EXPECT_LE(shifted.max, 3.0);
  EXPECT_NEAR(shifted.mean, 2.5, mean_tolerance(1 / std::sqrt(12.0), 200000));
}

TEST(InitValues, NormalKindsHaveTheRightMeanAndStd) {
  struct Case {
    const char* spec;
    double mean, stddev;
  };
  const Case cases[] = {
      {"normal(0.5, 0.01)", 0.5, 0.01},
      {"kaiming_normal(fan_in=81)", 0, std::sqrt(2.0) / std::sqrt(81.0)},
      {"kaiming_normal(fan_in=8, gain=1)", 0, 1 / std::sqrt(8.0)},
      {"xavier_normal(fan_in=784, fan_out=512)", 0, std::sqrt(2.0 / (784 + 512))},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const Tensor t = drawn(c.spec);
    const Stats s = stats_of(t);
    EXPECT_NEAR(s.mean, c.mean, mean_tolerance(c.stddev, t.numel()));
    EXPECT_NEAR(s.stddev, c.stddev, 0.01 * c.stddev);
    EXPECT_GT(s.max - c.mean, 3.5 * c.stddev);  // tails exist: not truncated
  }
}

TEST(InitValues, TruncatedNormalRedrawsOutsideTwoStd) {
  const Tensor t = drawn("truncated_normal(1, 0.1)");
  const Stats s = stats_of(t);
  EXPECT_GE(s.min, 1 - 0.2 - 1e-6);
  EXPECT_LE(s.max, 1 + 0.2 + 1e-6);
  EXPECT_LT(s.min, 1 - 0.199);
  EXPECT_GT(s.max, 1 + 0.199);
  // A standard normal truncated to [-2, 2] has variance 1 - 2*2*phi(2) / (Phi(2) - Phi(-2)).
  const double phi2 = std::exp(-2.0) / std::sqrt(2 * std::numbers::pi);
  const double mass = std::erf(2 / std::sqrt(2.0));
  const double stddev = 0.1 * std::sqrt(1 - 4 * phi2 / mass);
  EXPECT_NEAR(s.stddev, stddev, 0.01 * stddev);
  EXPECT_NEAR(s.mean, 1.0, mean_tolerance(stddev, t.numel()));
}

TEST(InitValues, ConstantsAreExact) {
  for (const auto& [spec, value] :
       {std::pair{"zeros", 0.0f}, std::pair{"ones", 1.0f}, std::pair{"constant(-0.25)", -0.25f}}) {
    const Tensor t = drawn(spec, 1000);
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data<float>()[i], value) << spec;
  }
}

TEST(InitValues, Float64TensorsAndOtherTypes) {
  Tensor d(ElemType::F64, {1000});
  initialize(d, InitSpec::parse("uniform(5, 6)"), 3, "d");
  for (int64_t i = 0; i < d.numel(); ++i) {
    ASSERT_GE(d.data<double>()[i], 5.0);
    ASSERT_LE(d.data<double>()[i], 6.0);
  }
  Tensor n(ElemType::I32, {4});
  expect_error([&] { initialize(n, InitSpec::parse("zeros"), 0, "n"); },
               {"cannot initialise 'n'", "int32[4]", "not a float tensor"});
}

TEST(InitDeterminism, SeedAndNameDecideTheValuesNotTheOrder) {
  ParameterStore a, b;
  a.add("w1", {64, 8}, "normal(0, 1)");
  a.add("w2", {64, 8}, "normal(0, 1)");
  b.add("w2", {64, 8}, "normal(0, 1)");
  b.add("w1", {64, 8}, "normal(0, 1)");
  a.initialize(42);
  b.initialize(42);
  const auto same = [](const Tensor& x, const Tensor& y) {
    return std::equal(x.data<float>(), x.data<float>() + x.numel(), y.data<float>());
  };
  EXPECT_TRUE(same(a.at("w1").value, b.at("w1").value));
  EXPECT_TRUE(same(a.at("w2").value, b.at("w2").value));
  EXPECT_FALSE(same(a.at("w1").value, a.at("w2").value));  // the name changes the stream
  ParameterStore c;
  c.add("w1", {64, 8}, "normal(0, 1)");
  c.initialize(43);
  EXPECT_FALSE(same(a.at("w1").value, c.at("w1").value));  // so does the seed
  c.initialize(42);
  EXPECT_TRUE(same(a.at("w1").value, c.at("w1").value));  // and nothing else
}

}  // namespace
}  // namespace tenet::train
