#include "train/optimizer.h"

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "support/error.h"

namespace tenet::train {
namespace {

// Parameters with fewer elements are updated by one thread: a parallel region
// costs more than the update itself.
constexpr int64_t kParallelMin = 1 << 15;

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void require(bool ok, const std::string& what) {
  if (!ok) throw BindError(what);
}

std::string shape_text(const Tensor& t) {
  return t.describe();
}

}  // namespace

// ---- Optimizer -----------------------------------------------------------

Optimizer::Optimizer(ParameterStore& params, double lr) : params_(params), lr_(lr) {}

void Optimizer::set_lr(double lr) {
  require(std::isfinite(lr) && lr > 0, "learning rate must be positive, got " + number(lr));
  lr_ = lr;
}

NamedTensors Optimizer::state() const {
  NamedTensors out;
  Tensor step(ElemType::I64, {});
  step.data<int64_t>()[0] = step_count_;
  out.push_back({"step", step});
  const std::vector<std::string> names = buffer_names();
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t b = 0; b < names.size(); ++b)
      out.push_back({params_[i].name + "/" + names[b], buffer(i, b)});
  return out;
}

void Optimizer::load_state(const NamedTensors& state, const std::string& source) {
  const std::string where = source + ": " + kind() + " optimiser state: ";
  std::set<std::string> expected = {"step"};
  const std::vector<std::string> names = buffer_names();
  for (const Parameter& p : params_)
    for (const std::string& b : names) expected.insert(p.name + "/" + b);
  for (const NamedTensor& t : state)
    require(expected.count(t.name), where + "unexpected tensor '" + t.name + "'");

  // Validate everything before changing anything.
  const Tensor* step = find_tensor(state, "step");
  require(step != nullptr, where + "missing 'step'");
  require(step->type() == ElemType::I64 && step->numel() == 1 && step->rank() <= 1,
          where + "'step' must be an int64 scalar, got " + shape_text(*step));
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t b = 0; b < names.size(); ++b) {
      const std::string name = params_[i].name + "/" + names[b];
      const Tensor* t = find_tensor(state, name);
      require(t != nullptr, where + "missing '" + name + "'");
      const Tensor& mine = buffer(i, b);
      require(t->type() == mine.type() && t->shape() == mine.shape(),
              where + "'" + name + "' is " + shape_text(*t) + ", expected " + shape_text(mine));
    }
  const std::string problem = state_problem(state);
  require(problem.empty(), where + problem);

  step_count_ = step->data<int64_t>()[0];
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t b = 0; b < names.size(); ++b) {
      const Tensor* t = find_tensor(state, params_[i].name + "/" + names[b]);
      std::memcpy(buffer(i, b).raw(), t->raw(), t->nbytes());
    }
}

std::string Optimizer::state_problem(const NamedTensors& state) const {
  // PyTorch keeps the step as a float: beyond 2^53 it no longer counts.
  constexpr int64_t kMaxStep = int64_t(1) << 53;
  if (const Tensor* step = find_tensor(state, "step"); step && step->type() == ElemType::I64) {
    const int64_t n = step->data<int64_t>()[0];
    if (n < 0 || n > kMaxStep) return "'step' is " + std::to_string(n) + ", outside [0, 2^53]";
  }
  const std::vector<std::string> names = buffer_names();
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t b = 0; b < names.size(); ++b) {
      const std::string name = params_[i].name + "/" + names[b];
      const Tensor* t = find_tensor(state, name);
      if (!t) continue;
      if (std::string bad = first_non_finite(*t); !bad.empty())
        return "'" + name + "' holds " + bad + ": the run that saved it diverged";
      if (averages_squares(b))
        if (std::string bad = first_negative(*t); !bad.empty())
          return "'" + name + "' holds " + bad +
                 ", but it is a running average of squares (never negative)";
    }
  return "";
}

// ---- SGD -----------------------------------------------------------------

Sgd::Sgd(ParameterStore& params, const SgdOptions& o) : Optimizer(params, o.lr), options_(o) {
  set_lr(o.lr);
  require(o.momentum >= 0, "SGD momentum must be >= 0, got " + number(o.momentum));
  require(o.dampening >= 0 && o.dampening <= 1,
          "SGD dampening must be in [0, 1], got " + number(o.dampening));
  require(o.weight_decay >= 0, "SGD weight decay must be >= 0, got " + number(o.weight_decay));
  require(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
          "Nesterov momentum requires momentum > 0 and zero dampening");
  if (o.momentum > 0)
    for (const Parameter& p : params_) momentum_.emplace_back(ElemType::F32, p.value.shape());
}

std::vector<std::string> Sgd::buffer_names() const {
  if (options_.momentum > 0) return {"momentum_buffer"};
  return {};
}

Tensor& Sgd::buffer(size_t param, size_t) {
  return momentum_[param];
}

void Sgd::step() {
  const float lr = float(lr_), wd = float(options_.weight_decay);
  const float mu = float(options_.momentum), keep = float(1.0 - options_.dampening);
  const bool first = step_count_ == 0, nesterov = options_.nesterov;
  for (size_t i = 0; i < params_.size(); ++i) {
    float* __restrict__ p = params_[i].value.data<float>();
    const float* __restrict__ grad = params_[i].grad.data<float>();
    const int64_t n = params_[i].value.numel();
    if (mu == 0) {
#pragma omp parallel for simd schedule(static) if (parallel : n >= kParallelMin)
      for (int64_t k = 0; k < n; ++k) p[k] -= lr * (grad[k] + wd * p[k]);
      continue;
    }
    float* __restrict__ buf = momentum_[i].data<float>();
#pragma omp parallel for simd schedule(static) if (parallel : n >= kParallelMin)
    for (int64_t k = 0; k < n; ++k) {
      const float g = grad[k] + wd * p[k];
      const float b = first ? g : mu * buf[k] + keep * g;  // PyTorch: the first buffer is g itself
      buf[k] = b;
      p[k] -= lr * (nesterov ? g + mu * b : b);
    }
  }
  ++step_count_;
}

std::string Sgd::describe() const {
  std::ostringstream os;
  os << "sgd(lr=" << lr_ << ", momentum=" << options_.momentum
     << ", dampening=" << options_.dampening << ", weight_decay=" << options_.weight_decay
     << (options_.nesterov ? ", nesterov" : "") << ")";
  return os.str();
}

// ---- Adam ----------------------------------------------------------------

Adam::Adam(ParameterStore& params, const AdamOptions& o) : Optimizer(params, o.lr), options_(o) {
  set_lr(o.lr);
  require(o.beta1 >= 0 && o.beta1 < 1, "Adam beta1 must be in [0, 1), got " + number(o.beta1));
  require(o.beta2 >= 0 && o.beta2 < 1, "Adam beta2 must be in [0, 1), got " + number(o.beta2));
  require(o.eps >= 0, "Adam eps must be >= 0, got " + number(o.eps));
  require(o.weight_decay >= 0, "Adam weight decay must be >= 0, got " + number(o.weight_decay));
  for (const Parameter& p : params_) {
    exp_avg_.emplace_back(ElemType::F32, p.value.shape());
    exp_avg_sq_.emplace_back(ElemType::F32, p.value.shape());
  }
}

std::vector<std::string> Adam::buffer_names() const {
  return {"exp_avg", "exp_avg_sq"};
}

Tensor& Adam::buffer(size_t param, size_t b) {
  return b == 0 ? exp_avg_[param] : exp_avg_sq_[param];
}

void Adam::step() {
  const int64_t t = step_count_ + 1;
  // Scalars in double, as PyTorch computes them in Python; tensors in float32.
  const double bias1 = 1.0 - std::pow(options_.beta1, double(t));
  const double bias2 = 1.0 - std::pow(options_.beta2, double(t));
  const float step_size = float(lr_ / bias1);
  const float inv_sqrt_bias2 = float(1.0 / std::sqrt(bias2));
  const float w1 = float(1.0 - options_.beta1), beta2 = float(options_.beta2);
  const float w2 = float(1.0 - options_.beta2), eps = float(options_.eps);
  const float wd = float(options_.weight_decay);
  for (size_t i = 0; i < params_.size(); ++i) {
    float* __restrict__ p = params_[i].value.data<float>();
    const float* __restrict__ grad = params_[i].grad.data<float>();
    float* __restrict__ m = exp_avg_[i].data<float>();
    float* __restrict__ v = exp_avg_sq_[i].data<float>();
    const int64_t n = params_[i].value.numel();
#pragma omp parallel for simd schedule(static) if (parallel : n >= kParallelMin)
    for (int64_t k = 0; k < n; ++k) {
      const float g = grad[k] + wd * p[k];
      m[k] += w1 * (g - m[k]);  // = beta1 m + (1 - beta1) g, PyTorch's lerp
      v[k] = beta2 * v[k] + w2 * g * g;
      p[k] -= step_size * m[k] / (std::sqrt(v[k]) * inv_sqrt_bias2 + eps);
    }
  }
  step_count_ = t;
}

std::string Adam::describe() const {
  std::ostringstream os;
  os << "adam(lr=" << lr_ << ", beta1=" << options_.beta1 << ", beta2=" << options_.beta2
     << ", eps=" << options_.eps << ", weight_decay=" << options_.weight_decay << ")";
  return os.str();
}

// ---- Adadelta ------------------------------------------------------------

Adadelta::Adadelta(ParameterStore& params, const AdadeltaOptions& o)
    : Optimizer(params, o.lr), options_(o) {
  set_lr(o.lr);
  require(o.rho >= 0 && o.rho <= 1, "Adadelta rho must be in [0, 1], got " + number(o.rho));
  require(o.eps >= 0, "Adadelta eps must be >= 0, got " + number(o.eps));
  require(o.weight_decay >= 0, "Adadelta weight decay must be >= 0, got " + number(o.weight_decay));
  for (const Parameter& p : params_) {
    square_avg_.emplace_back(ElemType::F32, p.value.shape());
    acc_delta_.emplace_back(ElemType::F32, p.value.shape());
  }
}

std::vector<std::string> Adadelta::buffer_names() const {
  return {"square_avg", "acc_delta"};
}

Tensor& Adadelta::buffer(size_t param, size_t b) {
  return b == 0 ? square_avg_[param] : acc_delta_[param];
}

void Adadelta::step() {
  const float lr = float(lr_), rho = float(options_.rho), w = float(1.0 - options_.rho);
  const float eps = float(options_.eps), wd = float(options_.weight_decay);
  for (size_t i = 0; i < params_.size(); ++i) {
    float* __restrict__ p = params_[i].value.data<float>();
    const float* __restrict__ grad = params_[i].grad.data<float>();
    float* __restrict__ s = square_avg_[i].data<float>();
    float* __restrict__ a = acc_delta_[i].data<float>();
    const int64_t n = params_[i].value.numel();
#pragma omp parallel for simd schedule(static) if (parallel : n >= kParallelMin)
    for (int64_t k = 0; k < n; ++k) {
      const float g = grad[k] + wd * p[k];
      s[k] = s[k] * rho + w * g * g;
      // PyTorch's order: sqrt(a + eps), divided by sqrt(s + eps), times g.
      const float d = std::sqrt(a[k] + eps) / std::sqrt(s[k] + eps) * g;
      a[k] = a[k] * rho + w * d * d;
      p[k] -= lr * d;
    }
  }
  ++step_count_;
}

std::string Adadelta::describe() const {
  std::ostringstream os;
  os << "adadelta(lr=" << lr_ << ", rho=" << options_.rho << ", eps=" << options_.eps
     << ", weight_decay=" << options_.weight_decay << ")";
  return os.str();
}

// ---- ExponentialDecay ----------------------------------------------------

void ExponentialDecay::validate() const {
  require(
      std::isfinite(initial_lr) && initial_lr > 0,
      "exponential decay: the initial learning rate must be positive, got " + number(initial_lr));
  require(rate > 0 && rate <= 1, "exponential decay: rate must be in (0, 1], got " + number(rate));
  require(every_steps > 0,
          "exponential decay: every_steps must be positive, got " + std::to_string(every_steps));
}

double ExponentialDecay::lr_at(int64_t step) const {
  double exponent = double(step) / double(every_steps);
  if (staircase) exponent = double(step / every_steps);
  return initial_lr * std::pow(rate, exponent);
}

std::string ExponentialDecay::describe() const {
  std::ostringstream os;
  os << "exponential_decay(lr=" << initial_lr << ", rate=" << rate << ", every=" << every_steps
     << (staircase ? ", staircase" : "") << ")";
  return os.str();
}

}  // namespace tenet::train
