// Element-wise expressions: every operator against the same math written as
// plain C++ loops, in the declared type (float32 math rounds at each step).

#include <cmath>
#include <functional>
#include <limits>

#include "tests/interp/interp_test_util.h"

namespace tenet::ir::testing {
namespace {

constexpr ElemType F32 = ElemType::F32;
constexpr ElemType F64 = ElemType::F64;

/// z(i) = body(x(i), y(i)) for i in 0:N.
Function elementwise(ElemType in, const std::function<Expr(Expr, Expr)>& body, bool auto_type) {
  FunctionBuilder fb("f");
  auto x = fb.input("x", in, {sym("N")});
  auto y = fb.input("y", in, {sym("N")});
  Expr e = body(read(x, {"i"}), read(y, {"i"}));
  auto z = auto_type ? fb.compute_auto("z", {{"i", 0, sym("N")}}, {}, ReduceOp::None, e)
                     : fb.compute("z", {{"i", 0, sym("N")}}, {}, ReduceOp::None, e, nullptr, in);
  fb.output(z);
  return fb.finish();
}

template <typename T>
void expect_same_bits(T actual, T expected, const std::string& what, int64_t i) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << " at " << i;
  } else {
    EXPECT_EQ(actual, expected) << what << " at " << i;
  }
}

template <typename T>
void check_unary(ElemType type) {
  struct Case {
    UnOp op;
    std::function<T(T)> ref;
    double lo, hi;
  };
  const std::vector<Case> cases = {
      {UnOp::Neg, [](T v) { return -v; }, -3, 3},
      {UnOp::Exp, [](T v) { return std::exp(v); }, -3, 3},
      {UnOp::Log, [](T v) { return std::log(v); }, 0.01, 5},
      {UnOp::Sqrt, [](T v) { return std::sqrt(v); }, 0, 5},
      {UnOp::Tanh, [](T v) { return std::tanh(v); }, -3, 3},
      {UnOp::Sigmoid, [](T v) { return T(1) / (T(1) + std::exp(-v)); }, -6, 6},
      {UnOp::Abs, [](T v) { return std::fabs(v); }, -3, 3},
  };
  for (const Case& c : cases) {
    Function f = elementwise(
        type, [&](Expr x, Expr) { return make_unary(c.op, x); }, false);
    Tensor x = random_tensor(type, {101}, 7, c.lo, c.hi);
    Tensor y(type, {101});
    Tensor z = interpret(f, {x, y})[0];
    ASSERT_EQ(z.type(), type);
    for (int64_t i = 0; i < x.numel(); ++i)
      expect_same_bits(z.data<T>()[i], c.ref(x.data<T>()[i]), op_name(c.op), i);
  }
}

TEST(InterpElementwise, UnaryFloatOps) {
  check_unary<float>(F32);
  check_unary<double>(F64);
}

template <typename T>
void check_binary(ElemType type) {
  struct Case {
    BinOp op;
    std::function<T(T, T)> ref;
  };
  const std::vector<Case> cases = {
      {BinOp::Add, [](T a, T b) { return a + b; }},
      {BinOp::Sub, [](T a, T b) { return a - b; }},
      {BinOp::Mul, [](T a, T b) { return a * b; }},
      {BinOp::Div, [](T a, T b) { return a / b; }},
      {BinOp::Pow, [](T a, T b) { return std::pow(a, b); }},
      {BinOp::Max, [](T a, T b) { return std::fmax(a, b); }},
      {BinOp::Min, [](T a, T b) { return std::fmin(a, b); }},
  };
  Tensor x = random_tensor(type, {64}, 1, 0.1, 3);
  Tensor y = random_tensor(type, {64}, 2, -2, 2);
  x.set(0, NAN);  // fmax/fmin ignore a NaN operand
  y.set(1, NAN);
  for (const Case& c : cases) {
    Function f = elementwise(
        type, [&](Expr a, Expr b) { return make_binary(c.op, a, b); }, false);
    Tensor z = interpret(f, {x, y})[0];
    for (int64_t i = 0; i < x.numel(); ++i)
      expect_same_bits(z.data<T>()[i], c.ref(x.data<T>()[i], y.data<T>()[i]), op_name(c.op), i);
  }
  Function fmax = elementwise(
      type, [](Expr a, Expr b) { return make_binary(BinOp::Max, a, b); }, false);
  Tensor z = interpret(fmax, {x, y})[0];
  EXPECT_EQ(z.get(0), y.get(0));
  EXPECT_EQ(z.get(1), x.get(1));
}

TEST(InterpElementwise, BinaryFloatOps) {
  check_binary<float>(F32);
  check_binary<double>(F64);
}

TEST(InterpElementwise, Float32RoundsAtEveryOperation) {
  // (x*y + x) / y, rounded to float after each operation; evaluating in double
  // and rounding once differs from this in many elements.
  Function f = elementwise(
      F32,
      [](Expr x, Expr y) {
        return make_binary(BinOp::Div, make_binary(BinOp::Add, make_binary(BinOp::Mul, x, y), x),
                           y);
      },
      false);
  Tensor x = random_tensor(F32, {500}, 3, -1, 1);
  Tensor y = random_tensor(F32, {500}, 4, 0.5, 1);
  Tensor z = interpret(f, {x, y})[0];
  int differs_from_double = 0;
  for (int64_t i = 0; i < 500; ++i) {
    float a = x.data<float>()[i], b = y.data<float>()[i];
    float t1 = a * b;
    float t2 = t1 + a;
    EXPECT_EQ(z.data<float>()[i], t2 / b) << i;
    differs_from_double += float((double(a) * b + a) / b) != t2 / b;
  }
  EXPECT_GT(differs_from_double, 0) << "the test cannot tell float from double math";
}

TEST(InterpElementwise, ComparisonsAndLogic) {
  Tensor x = tensor_of(F32, {4}, {1, 2, 3, NAN});
  Tensor y = tensor_of(F32, {4}, {2, 2, 2, 1});
  struct Case {
    BinOp op;
    std::vector<double> expected;
  };
  for (const Case& c : std::vector<Case>{{BinOp::Lt, {1, 0, 0, 0}},
                                         {BinOp::Le, {1, 1, 0, 0}},
                                         {BinOp::Gt, {0, 0, 1, 0}},
                                         {BinOp::Ge, {0, 1, 1, 0}},
                                         {BinOp::Eq, {0, 1, 0, 0}},
                                         {BinOp::Ne, {1, 0, 1, 1}}}) {
    Function f = elementwise(
        F32, [&](Expr a, Expr b) { return make_binary(c.op, a, b); }, true);
    Tensor z = interpret(f, {x, y})[0];
    EXPECT_EQ(z.type(), ElemType::Bool);
    EXPECT_EQ(values_of(z), c.expected) << op_name(c.op);
  }
  // (x < y) and not (x == 2), (x < y) or (x > y)
  Function logic = elementwise(
      F32,
      [](Expr a, Expr b) {
        Expr lt = make_binary(BinOp::Lt, a, b);
        Expr both =
            make_binary(BinOp::And, lt, make_unary(UnOp::Not, make_binary(BinOp::Eq, a, f32(2))));
        Expr either =
            make_binary(BinOp::Or, make_binary(BinOp::Lt, a, b), make_binary(BinOp::Gt, a, b));
        return make_select(both, f32(10), make_select(either, f32(20), f32(30)));
      },
      false);
  EXPECT_EQ(values_of(interpret(logic, {x, y})[0]), (std::vector<double>{10, 30, 20, 30}));
}

TEST(InterpElementwise, Select) {
  Function f = elementwise(
      F32,
      [](Expr x, Expr y) {
        return make_select(make_binary(BinOp::Gt, x, y), make_binary(BinOp::Sub, x, y),
                           make_binary(BinOp::Mul, y, f32(2)));
      },
      false);
  Tensor x = random_tensor(F32, {300}, 5), y = random_tensor(F32, {300}, 6);
  Tensor z = interpret(f, {x, y})[0];
  for (int64_t i = 0; i < 300; ++i) {
    float a = x.data<float>()[i], b = y.data<float>()[i];
    EXPECT_EQ(z.data<float>()[i], a > b ? a - b : b * 2) << i;
  }
}

TEST(InterpElementwise, IntegerArithmeticTruncatesAndWraps) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  Tensor a = tensor_of(ElemType::I32, {6}, {-7, 7, -8, 100, 0, big});
  Tensor b = tensor_of(ElemType::I32, {6}, {2, -2, 3, 7, 5, 1});
  struct Case {
    BinOp op;
    std::vector<double> expected;
  };
  const double wrapped = double(std::numeric_limits<int32_t>::min());
  for (const Case& c : std::vector<Case>{{BinOp::Add, {-5, 5, -5, 107, 5, wrapped}},
                                         {BinOp::Sub, {-9, 9, -11, 93, -5, big - 1.0}},
                                         {BinOp::Mul, {-14, -14, -24, 700, 0, big}},
                                         {BinOp::Div, {-3, -3, -2, 14, 0, big}},
                                         {BinOp::Max, {2, 7, 3, 100, 5, big}},
                                         {BinOp::Min, {-7, -2, -8, 7, 0, 1}}}) {
    Function f = elementwise(
        ElemType::I32, [&](Expr x, Expr y) { return make_binary(c.op, x, y); }, false);
    Tensor z = interpret(f, {a, b})[0];
    EXPECT_EQ(z.type(), ElemType::I32);
    EXPECT_EQ(values_of(z), c.expected) << op_name(c.op);
  }
  Function neg_abs = elementwise(
      ElemType::I32,
      [](Expr x, Expr y) {
        return make_binary(BinOp::Add, make_unary(UnOp::Neg, x), make_unary(UnOp::Abs, y));
      },
      false);
  EXPECT_EQ(values_of(interpret(neg_abs, {a, b})[0]),
            (std::vector<double>{9, -5, 11, -93, 5, 1.0 - big}));

  Tensor c = tensor_of(ElemType::I8, {3}, {127, -128, 100});
  Tensor d = tensor_of(ElemType::I8, {3}, {1, -1, 100});
  Function add8 = elementwise(
      ElemType::I8, [](Expr x, Expr y) { return make_binary(BinOp::Add, x, y); }, false);
  Function div8 = elementwise(
      ElemType::I8, [](Expr x, Expr y) { return make_binary(BinOp::Div, x, y); }, false);
  EXPECT_EQ(values_of(interpret(add8, {c, d})[0]), (std::vector<double>{-128, 127, -56}));
  EXPECT_EQ(values_of(interpret(div8, {c, d})[0]), (std::vector<double>{127, -128, 1}));
}

TEST(InterpElementwise, Casts) {
  Tensor x = tensor_of(F32, {6}, {-2.7, 2.7, 0.5, -0.5, 0, NAN});
  Function to_int = elementwise(
      F32, [](Expr a, Expr) { return make_cast(a, ElemType::I32); }, true);
  EXPECT_EQ(values_of(interpret(to_int, {x, x})[0]), (std::vector<double>{-2, 2, 0, 0, 0, 0}));

  // float -> bool -> float, and int -> float.
  Function to_bool = elementwise(
      F32, [](Expr a, Expr) { return make_cast(make_cast(a, ElemType::Bool), ElemType::F64); },
      true);
  EXPECT_EQ(values_of(interpret(to_bool, {x, x})[0]), (std::vector<double>{1, 1, 1, 1, 0, 1}));
  Tensor n = tensor_of(ElemType::I64, {3}, {-3, 0, 1 << 30});
  Function to_float = elementwise(
      ElemType::I64, [](Expr a, Expr) { return make_cast(a, ElemType::F32); }, true);
  Tensor z = interpret(to_float, {n, n})[0];
  EXPECT_EQ(z.type(), F32);
  EXPECT_EQ(values_of(z), (std::vector<double>{-3, 0, double(1 << 30)}));
  // float64 -> float32 rounds.
  Tensor w = tensor_of(F64, {1}, {0.1});
  Function narrow = elementwise(
      F64, [](Expr a, Expr) { return make_cast(a, F32); }, true);
  EXPECT_EQ(interpret(narrow, {w, w})[0].data<float>()[0], 0.1f);
}

TEST(InterpElementwise, IndexAndSizeValues) {
  FunctionBuilder fb("f");
  auto x = fb.input("x", F32, {sym("N")});
  Expr i = make_cast(make_index("i"), F32);
  Expr n = make_cast(make_size(sym("N") * 2), F32);
  auto y = fb.compute("y", {{"i", 0, sym("N")}}, {}, ReduceOp::None,
                      make_binary(BinOp::Add, make_binary(BinOp::Mul, i, f32(10)), n));
  fb.output(y);
  fb.output(x);
  Function f = fb.finish();
  Tensor in = tensor_of(F32, {3}, {5, 6, 7});
  auto out = interpret(f, {in});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{6, 16, 26}));
  // An input returned as an output is a copy, not the caller's storage.
  EXPECT_EQ(values_of(out[1]), values_of(in));
  EXPECT_NE(out[1].raw(), in.raw());
}

TEST(InterpElementwise, Scalars) {
  // s() += x(i); y(i) = x(i) / s(); t() = s() * 2
  FunctionBuilder fb("f");
  auto x = fb.input("x", F32, {sym("N")});
  auto s = fb.compute("s", {}, {{"i", 0, sym("N")}}, ReduceOp::Sum, read(x, {"i"}));
  auto y = fb.compute("y", {{"i", 0, sym("N")}}, {}, ReduceOp::None,
                      make_binary(BinOp::Div, read(x, {"i"}), make_read(s, {})));
  auto t =
      fb.compute("t", {}, {}, ReduceOp::None, make_binary(BinOp::Mul, make_read(s, {}), f32(2)));
  fb.output(y);
  fb.output(s);
  fb.output(t);
  Function f = fb.finish();
  auto out = interpret(f, {tensor_of(F32, {4}, {1, 2, 3, 4})});
  EXPECT_EQ(out[1].rank(), 0);
  EXPECT_EQ(values_of(out[1]), std::vector<double>{10});
  EXPECT_EQ(values_of(out[2]), std::vector<double>{20});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{0.1f, 0.2f, 0.3f, 0.4f}));
}

TEST(InterpElementwise, FloatTypeF64RunsDeclaredF32InDouble) {
  // s() += x(i), y(i) = x(i) * 3: 1 + 1e-8 + ... accumulates in float64 either
  // way (a float32 sum is rounded once, at the end), but x(i) * 3 rounds to float32.
  FunctionBuilder fb("f");
  auto x = fb.input("x", F32, {sym("N")});
  auto s = fb.compute("s", {}, {{"i", 0, sym("N")}}, ReduceOp::Sum, read(x, {"i"}));
  auto y = fb.compute("y", {{"i", 0, sym("N")}}, {}, ReduceOp::None,
                      make_binary(BinOp::Mul, read(x, {"i"}), f32(3)));
  fb.output(s);
  fb.output(y);
  fb.output(x);
  Function f = fb.finish();
  Tensor in(F32, {1001});
  in.set(0, 1);
  for (int64_t i = 1; i < 1001; ++i) in.set(i, 1e-8);

  auto declared = interpret(f, {in});
  EXPECT_EQ(declared[0].type(), F32);
  double sum = 1;
  for (int64_t i = 1; i < 1001; ++i) sum += double(1e-8f);
  EXPECT_EQ(declared[0].get(0), double(float(sum)));
  EXPECT_NE(declared[0].get(0), 1.0);  // one float32 at a time would stay at 1
  EXPECT_EQ(declared[1].get(1), double(1e-8f * 3.0f));

  auto wide = interpret(f, {in}, {}, InterpOptions{F64});
  EXPECT_EQ(wide[0].type(), F64);
  EXPECT_EQ(wide[1].type(), F64);
  EXPECT_EQ(wide[2].type(), F64);  // the input itself, converted
  double expected = 1;
  for (int64_t i = 1; i < 1001; ++i) expected += double(1e-8f);
  EXPECT_EQ(wide[0].get(0), expected);
  EXPECT_EQ(wide[1].get(1), double(1e-8f) * 3);

  FunctionBuilder fb64("g");
  auto x64 = fb64.input("x", F64, {2});
  fb64.output(fb64.compute("y", {{"i", 0, 2}}, {}, ReduceOp::None,
                           make_binary(BinOp::Add, read(x64, {"i"}), make_const(0.1, F64)), nullptr,
                           F64));
  Tensor narrow =
      interpret(fb64.finish(), {tensor_of(F64, {2}, {1, 2})}, {}, InterpOptions{F32})[0];
  EXPECT_EQ(narrow.type(), F32);
  EXPECT_EQ(narrow.data<float>()[0], 1.0f + 0.1f);

  EXPECT_EQ(bind_error_of([&] { interpret(f, {in}, {}, InterpOptions{ElemType::I32}); }),
            "the interpreter's float type must be float32 or float64, not int32");
}

}  // namespace
}  // namespace tenet::ir::testing
