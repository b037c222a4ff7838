// Optimisers against the published update rules (torch.optim.SGD,
// torch.optim.Adam and torch.optim.Adadelta documentation), computed here independently in double:
// a few hand-worked steps, then longer runs over every option, the parallel
// path on a large parameter, state export/import, and the schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/support/alloc/allocation_counter.h"
#include "tests/train/train_test_util.h"
#include "train/optimizer.h"

namespace tenet::train {
namespace {

using testing::expect_error;

// The gradient of element i at step t (1-based): varied signs and sizes.
double grad_at(int64_t i, int64_t t) {
  return std::sin(0.7 * double(i) + 1.3 * double(t)) * (1.0 + 0.1 * double(i % 7));
}

double initial_value(int64_t i) {
  return std::cos(0.37 * double(i));
}

// A store with one parameter of n elements (values initial_value(i)).
void add_param(ParameterStore& store, const std::string& name, int64_t n) {
  Parameter& p = store.add(name, {n}, "zeros");
  for (int64_t i = 0; i < n; ++i) p.value.data<float>()[i] = float(initial_value(i));
}

void set_grads(ParameterStore& store, int64_t t) {
  for (Parameter& p : store)
    for (int64_t i = 0; i < p.grad.numel(); ++i) p.grad.data<float>()[i] = float(grad_at(i, t));
}

// torch.optim.SGD's documented algorithm, in double, for one element.
std::vector<double> sgd_reference(const SgdOptions& o, int64_t n, int steps) {
  std::vector<double> p(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = initial_value(i);
  for (int t = 1; t <= steps; ++t)
    for (size_t i = 0; i < p.size(); ++i) {
      double g = double(float(grad_at(int64_t(i), t))) + o.weight_decay * p[i];
      if (o.momentum != 0) {
        b[i] = t > 1 ? o.momentum * b[i] + (1 - o.dampening) * g : g;
        g = o.nesterov ? g + o.momentum * b[i] : b[i];
      }
      p[i] -= o.lr * g;
    }
  return p;
}

// torch.optim.Adam's documented algorithm, in double.
std::vector<double> adam_reference(const AdamOptions& o, int64_t n, int steps) {
  std::vector<double> p(static_cast<size_t>(n)), m(p), v(p);
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = initial_value(i);
  for (int t = 1; t <= steps; ++t)
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = double(float(grad_at(int64_t(i), t))) + o.weight_decay * p[i];
      m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
      v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(o.beta1, t));
      const double v_hat = v[i] / (1 - std::pow(o.beta2, t));
      p[i] -= o.lr * m_hat / (std::sqrt(v_hat) + o.eps);
    }
  return p;
}

// torch.optim.Adadelta's documented algorithm (Zeiler 2012), in double.
std::vector<double> adadelta_reference(const AdadeltaOptions& o, int64_t n, int steps) {
  std::vector<double> p(static_cast<size_t>(n)), s(p), a(p);
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = initial_value(i);
  for (int t = 1; t <= steps; ++t)
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = double(float(grad_at(int64_t(i), t))) + o.weight_decay * p[i];
      s[i] = o.rho * s[i] + (1 - o.rho) * g * g;
      const double d = std::sqrt(a[i] + o.eps) / std::sqrt(s[i] + o.eps) * g;
      a[i] = o.rho * a[i] + (1 - o.rho) * d * d;
      p[i] -= o.lr * d;
    }
  return p;
}

void run(Optimizer& opt, ParameterStore& store, int steps) {
  for (int t = 1; t <= steps; ++t) {
    set_grads(store, opt.step_count() + 1);
    opt.step();
  }
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(actual.numel(), int64_t(expected.size()));
  double worst = 0;
  int64_t at = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double err = std::abs(actual.data<float>()[i] - expected[size_t(i)]) /
                       std::max(1.0, std::abs(expected[size_t(i)]));
    if (err > worst) worst = err, at = i;
  }
  EXPECT_LE(worst, tol) << "element " << at << ": " << actual.data<float>()[at] << " vs "
                        << expected[size_t(at)];
}

// `steps` steps of an Opt made with `o` on one parameter of n elements, then
// the values against `reference(o, n, steps)` (float64).
template <typename Opt, typename Options, typename Reference>
void expect_matches_reference(const Options& o, Reference reference, int64_t n, int steps) {
  ParameterStore store;
  add_param(store, "w", n);
  Opt opt(store, o);
  SCOPED_TRACE(opt.describe());
  run(opt, store, steps);
  EXPECT_EQ(opt.step_count(), steps);
  expect_close(store[0].value, reference(o, n, steps), 2e-6);
}

float value_after(Optimizer& opt, ParameterStore& store, float grad) {
  store[0].grad.data<float>()[0] = grad;
  opt.step();
  return store[0].value.data<float>()[0];
}

TEST(Sgd, HandWorkedSteps) {
  {  // plain: p = 1 - 0.1 * 2
    ParameterStore s;
    s.add("p", {1}, "ones");
    s.initialize(0);
    Sgd sgd(s, {.lr = 0.1});
    EXPECT_FLOAT_EQ(value_after(sgd, s, 2), 0.8f);
  }
  {  // momentum 0.9: buffers 1, 1.9, 2.71
    ParameterStore s;
    s.add("p", {1}, "ones");
    s.initialize(0);
    Sgd sgd(s, {.lr = 0.1, .momentum = 0.9});
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.9f);
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.71f);
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.439f);
  }
  {  // Nesterov: steps along g + 0.9 b: 1.9, then 2.71
    ParameterStore s;
    s.add("p", {1}, "ones");
    s.initialize(0);
    Sgd sgd(s, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.81f);
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.539f);
  }
  {  // weight decay 0.5 adds 0.5 p = 0.5 to the gradient 1
    ParameterStore s;
    s.add("p", {1}, "ones");
    s.initialize(0);
    Sgd sgd(s, {.lr = 0.1, .weight_decay = 0.5});
    EXPECT_FLOAT_EQ(value_after(sgd, s, 1), 0.85f);
  }
}

TEST(Sgd, MatchesTheReferenceForEveryOption) {
  const SgdOptions cases[] = {
      {.lr = 0.05},
      {.lr = 0.05, .momentum = 0.9},
      {.lr = 0.05, .momentum = 0.9, .dampening = 0.3},
      {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.01},
      {.lr = 0.02, .momentum = 0.9, .weight_decay = 0.1, .nesterov = true},
      {.lr = 0.1, .weight_decay = 0.2},
  };
  for (const SgdOptions& o : cases) expect_matches_reference<Sgd>(o, sgd_reference, 37, 6);
}

TEST(Adam, HandWorkedSteps) {
  // Bias correction makes the first steps lr * g / (|g| + eps): 0.1 each.
  ParameterStore s;
  s.add("p", {1}, "ones");
  s.initialize(0);
  Adam adam(s, {.lr = 0.1});
  EXPECT_FLOAT_EQ(value_after(adam, s, 2), 0.9f);
  EXPECT_FLOAT_EQ(value_after(adam, s, 2), 0.8f);
  // Then a gradient of the other sign: m = 0.271*2... computed from the formulas.
  const double m3 = 0.9 * (0.9 * 0.2 + 0.2) + 0.1 * -2;
  const double v3 = 0.999 * (0.999 * 0.004 + 0.004) + 0.001 * 4;
  const double p3 =
      0.8 - 0.1 * (m3 / (1 - 0.729)) / (std::sqrt(v3 / (1 - std::pow(0.999, 3))) + 1e-8);
  EXPECT_FLOAT_EQ(value_after(adam, s, -2), float(p3));
}

TEST(Adam, MatchesTheReferenceForEveryOption) {
  const AdamOptions cases[] = {
      {},
      {.lr = 0.01, .beta1 = 0.5, .beta2 = 0.9},
      {.lr = 0.003, .eps = 1e-3},
      {.lr = 0.001, .weight_decay = 0.05},
  };
  for (const AdamOptions& o : cases) expect_matches_reference<Adam>(o, adam_reference, 41, 7);
}

TEST(Adadelta, HandWorkedSteps) {
  // rho 0.9, eps 1e-6, lr 1, p = 1, g = 2:
  //   s1 = 0.1 * 4 = 0.4;  d1 = sqrt(1e-6) / sqrt(0.4 + 1e-6) * 2;  a1 = 0.1 * d1^2
  ParameterStore s;
  s.add("p", {1}, "ones");
  s.initialize(0);
  Adadelta adadelta(s, {});
  const double s1 = 0.4, d1 = std::sqrt(1e-6) / std::sqrt(s1 + 1e-6) * 2, a1 = 0.1 * d1 * d1;
  EXPECT_FLOAT_EQ(value_after(adadelta, s, 2), float(1 - d1));
  // Then g = -1: the step grows with the accumulated updates a1.
  const double s2 = 0.9 * s1 + 0.1, d2 = std::sqrt(a1 + 1e-6) / std::sqrt(s2 + 1e-6) * -1;
  EXPECT_FLOAT_EQ(value_after(adadelta, s, -1), float(1 - d1 - d2));
  // lr scales the update and nothing else.
  ParameterStore half;
  half.add("p", {1}, "ones");
  half.initialize(0);
  Adadelta slow(half, {.lr = 0.5});
  EXPECT_FLOAT_EQ(value_after(slow, half, 2), float(1 - 0.5 * d1));
}

TEST(Adadelta, MatchesTheReferenceForEveryOption) {
  const AdadeltaOptions cases[] = {
      {},
      {.lr = 0.5, .rho = 0.5},
      {.lr = 1.0, .eps = 1e-3},
      {.lr = 2.0, .rho = 0.95, .weight_decay = 0.05},
  };
  for (const AdadeltaOptions& o : cases)
    expect_matches_reference<Adadelta>(o, adadelta_reference, 41, 7);
}

TEST(Optimizers, LargeParametersTakeTheParallelPathWithTheSameResults) {
  constexpr int64_t n = 1'500'000;
  {
    ParameterStore store;
    add_param(store, "big", n);
    add_param(store, "small", 5);
    const SgdOptions o{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
    Sgd sgd(store, o);
    run(sgd, store, 3);
    expect_close(store[0].value, sgd_reference(o, n, 3), 2e-6);
    expect_close(store[1].value, sgd_reference(o, 5, 3), 2e-6);
  }
  expect_matches_reference<Adam>(AdamOptions{.lr = 0.01, .weight_decay = 0.01}, adam_reference, n,
                                 3);
  expect_matches_reference<Adadelta>(AdadeltaOptions{.lr = 1.0, .weight_decay = 0.01},
                                     adadelta_reference, n, 3);
}

TEST(Optimizers, StepAllocatesNothing) {
  ParameterStore store;
  add_param(store, "a", 100000);
  add_param(store, "b", 10);
  Adam adam(store, {});
  Sgd sgd(store, {.lr = 0.1, .momentum = 0.9});
  Adadelta adadelta(store, {});
  const void* exp_avg = adam.state()[1].tensor.raw();
  const void* momentum = sgd.state()[1].tensor.raw();
  const void* square_avg = adadelta.state()[1].tensor.raw();
  set_grads(store, 1);
  adam.step();
  sgd.step();
  adadelta.step();
  tenet::testing::Counter counter(tenet::testing::Threads::all);
  for (int i = 0; i < 3; ++i) {
    adam.step();
    sgd.step();
    adadelta.step();
  }
  const tenet::testing::Allocations a = counter.stop();
  EXPECT_EQ(a.cxx, 0);
  EXPECT_EQ(a.c_other, 0);
  EXPECT_EQ(adam.state()[1].tensor.raw(), exp_avg);
  EXPECT_EQ(sgd.state()[1].tensor.raw(), momentum);
  EXPECT_EQ(adadelta.state()[1].tensor.raw(), square_avg);
}

// A deep copy of optimiser state (state() aliases the live buffers).
NamedTensors snapshot(const Optimizer& opt) {
  NamedTensors out;
  for (const NamedTensor& t : opt.state()) {
    Tensor copy(t.tensor.type(), t.tensor.shape());
    std::memcpy(copy.raw(), t.tensor.raw(), t.tensor.nbytes());
    out.push_back({t.name, copy});
  }
  return out;
}

void copy_values(const ParameterStore& from, ParameterStore& to) {
  for (size_t i = 0; i < from.size(); ++i)
    std::memcpy(to[i].value.raw(), from[i].value.raw(), from[i].value.nbytes());
}

template <typename Opt, typename Options>
void expect_resume_is_exact(const Options& o) {
  ParameterStore a, b;
  add_param(a, "w", 20);
  add_param(a, "v", 3);
  add_param(b, "w", 20);
  add_param(b, "v", 3);
  Opt first(a, o), resumed(b, o);
  run(first, a, 3);
  copy_values(a, b);
  resumed.load_state(snapshot(first), "test");
  EXPECT_EQ(resumed.step_count(), 3);
  run(first, a, 2);
  run(resumed, b, 2);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::memcmp(a[i].value.raw(), b[i].value.raw(), a[i].value.nbytes()), 0);
}

TEST(Optimizers, StateRoundTripResumesBitExactly) {
  expect_resume_is_exact<Adam>(AdamOptions{.lr = 0.01});
  expect_resume_is_exact<Sgd>(SgdOptions{.lr = 0.01, .momentum = 0.9, .nesterov = true});
  expect_resume_is_exact<Sgd>(SgdOptions{.lr = 0.01});
  expect_resume_is_exact<Adadelta>(AdadeltaOptions{.lr = 1.0, .weight_decay = 0.01});
}

TEST(Optimizers, StateNames) {
  ParameterStore store;
  add_param(store, "w", 4);
  Adam adam(store, {});
  std::vector<std::string> names;
  for (const NamedTensor& t : adam.state()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"step", "w/exp_avg", "w/exp_avg_sq"}));
  Sgd plain(store, {.lr = 1});
  EXPECT_EQ(plain.state().size(), 1u);  // no momentum, no buffer
  Adadelta adadelta(store, {});
  names.clear();
  for (const NamedTensor& t : adadelta.state()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"step", "w/square_avg", "w/acc_delta"}));
}

TEST(Optimizers, LoadStateErrors) {
  ParameterStore store;
  add_param(store, "w", 4);
  Adam adam(store, {});
  const NamedTensors good = snapshot(adam);
  const auto without = [&](const std::string& name) {
    NamedTensors s;
    for (const NamedTensor& t : good)
      if (t.name != name) s.push_back(t);
    return s;
  };
  expect_error([&] { adam.load_state(without("step"), "ck.safetensors"); },
               {"ck.safetensors: adam optimiser state: missing 'step'"});
  expect_error([&] { adam.load_state(without("w/exp_avg_sq"), "f"); }, {"missing 'w/exp_avg_sq'"});
  NamedTensors extra = good;
  extra.push_back({"v/exp_avg", Tensor(ElemType::F32, {4})});
  expect_error([&] { adam.load_state(extra, "f"); }, {"unexpected tensor 'v/exp_avg'"});
  NamedTensors wrong_shape = without("w/exp_avg");
  wrong_shape.push_back({"w/exp_avg", Tensor(ElemType::F32, {5})});
  expect_error([&] { adam.load_state(wrong_shape, "f"); },
               {"'w/exp_avg' is float32[5], expected float32[4]"});
  NamedTensors wrong_step = without("step");
  wrong_step.push_back({"step", Tensor(ElemType::F32, {})});
  expect_error([&] { adam.load_state(wrong_step, "f"); }, {"'step' must be an int64 scalar"});
  Tensor negative(ElemType::I64, {});
  negative.data<int64_t>()[0] = -1;
  NamedTensors negative_step = without("step");
  negative_step.push_back({"step", negative});
  expect_error([&] { adam.load_state(negative_step, "f"); },
               {"f: adam optimiser state: 'step' is -1, outside [0, 2^53]"});
  negative_step.back().tensor.data<int64_t>()[0] = INT64_MAX;  // t + 1 would overflow
  expect_error([&] { adam.load_state(negative_step, "f"); },
               {"'step' is 9223372036854775807, outside [0, 2^53]"});
  EXPECT_EQ(adam.step_count(), 0);  // failed loads changed nothing
}

// State no run reaches, which would make every later step NaN, is refused
// by name before anything changes (resuming from it trained on and wrote an
// all-NaN checkpoint).
TEST(Optimizers, LoadStateRefusesNonFiniteAndNegativeSecondMoments) {
  ParameterStore store;
  add_param(store, "w", 4);
  Adam adam(store, {});
  Adadelta adadelta(store, {});
  Sgd sgd(store, {.lr = 0.1, .momentum = 0.9});
  struct Case {
    Optimizer& optimizer;
    std::string buffer;
    float value;
    std::string message;
  };
  const Case cases[] = {
      {adam, "w/exp_avg", NAN, "'w/exp_avg' holds nan at [2]: the run that saved it diverged"},
      {adam, "w/exp_avg_sq", -1,
       "'w/exp_avg_sq' holds -1 at [2], but it is a running average of squares (never "
       "negative)"},
      {adam, "w/exp_avg_sq", INFINITY, "'w/exp_avg_sq' holds inf at [2]"},
      {adadelta, "w/square_avg", -0.5f, "'w/square_avg' holds -0.5 at [2], but it is a running"},
      {adadelta, "w/acc_delta", -INFINITY, "'w/acc_delta' holds -inf at [2]"},
      {sgd, "w/momentum_buffer", NAN, "'w/momentum_buffer' holds nan at [2]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.buffer);
    NamedTensors state = snapshot(c.optimizer);
    for (NamedTensor& t : state)
      if (t.name == c.buffer) t.tensor.data<float>()[2] = c.value;
    expect_error([&] { c.optimizer.load_state(state, "ck.safetensors"); },
                 {"ck.safetensors: " + c.optimizer.kind() + " optimiser state: " + c.message});
    EXPECT_EQ(c.optimizer.state_problem(state).rfind(c.message, 0), 0u);
    EXPECT_EQ(c.optimizer.state_problem(snapshot(c.optimizer)), "");
  }
  // A negative first moment or momentum is a valid state.
  NamedTensors state = snapshot(adam);
  state[1].tensor.data<float>()[0] = -3;
  adam.load_state(state, "f");
}

TEST(Optimizers, InvalidOptions) {
  ParameterStore store;
  add_param(store, "w", 2);
  expect_error([&] { Sgd(store, {}); }, {"learning rate must be positive, got 0"});
  expect_error([&] { Sgd(store, {.lr = 0.1, .momentum = -1}); }, {"SGD momentum must be >= 0"});
  expect_error([&] { Sgd(store, {.lr = 0.1, .nesterov = true}); },
               {"Nesterov momentum requires momentum > 0 and zero dampening"});
  expect_error([&] { Sgd(store, {.lr = 0.1, .weight_decay = -1}); }, {"weight decay must be >= 0"});
  expect_error([&] { Adam(store, {.beta1 = 1}); }, {"Adam beta1 must be in [0, 1)"});
  expect_error([&] { Adam(store, {.beta2 = -0.1}); }, {"Adam beta2 must be in [0, 1)"});
  expect_error([&] { Adam(store, {.eps = -1}); }, {"Adam eps must be >= 0"});
  expect_error([&] { Adadelta(store, {.rho = 1.5}); }, {"Adadelta rho must be in [0, 1]"});
  expect_error([&] { Adadelta(store, {.eps = -1}); }, {"Adadelta eps must be >= 0"});
  expect_error([&] { Adadelta(store, {.lr = 0}); }, {"learning rate must be positive, got 0"});
  expect_error([&] { Adadelta(store, {.weight_decay = -1}); },
               {"Adadelta weight decay must be >= 0"});
  Adam adam(store, {});
  expect_error([&] { adam.set_lr(-1); }, {"learning rate must be positive, got -1"});
}

TEST(ExponentialDecay, ContinuousAndStaircase) {
  const ExponentialDecay smooth{.initial_lr = 1e-3, .rate = 0.96, .every_steps = 2000};
  EXPECT_DOUBLE_EQ(smooth.lr_at(0), 1e-3);
  EXPECT_DOUBLE_EQ(smooth.lr_at(2000), 1e-3 * 0.96);
  EXPECT_DOUBLE_EQ(smooth.lr_at(1000), 1e-3 * std::sqrt(0.96));
  EXPECT_DOUBLE_EQ(smooth.lr_at(10000), 1e-3 * std::pow(0.96, 5));
  const ExponentialDecay stairs{
      .initial_lr = 1e-3, .rate = 0.5, .every_steps = 10, .staircase = true};
  EXPECT_DOUBLE_EQ(stairs.lr_at(9), 1e-3);
  EXPECT_DOUBLE_EQ(stairs.lr_at(10), 5e-4);
  EXPECT_DOUBLE_EQ(stairs.lr_at(25), 2.5e-4);
  EXPECT_EQ(stairs.describe(), "exponential_decay(lr=0.001, rate=0.5, every=10, staircase)");
  expect_error([] { ExponentialDecay{.initial_lr = 0}.validate(); },
               {"initial learning rate must be positive"});
  expect_error([] { ExponentialDecay{.initial_lr = 1, .rate = 1.5}.validate(); },
               {"rate must be in (0, 1], got 1.5"});
  expect_error([] { ExponentialDecay{.initial_lr = 1, .every_steps = 0}.validate(); },
               {"every_steps must be positive, got 0"});
}

}  // namespace
}  // namespace tenet::train
