/// \file
/// Optimisers with exactly the update rules of torch.optim.SGD, torch.optim.Adam
/// and torch.optim.Adadelta (PyTorch 2.x, maximize=False, amsgrad=False), and
/// the exponential learning-rate decay of the CapsNet paper's setup.
///
/// With g = grad + weight_decay * p (L2 regularisation, as in PyTorch), t the
/// step number counted from 1:
///
///   SGD:  b_1 = g;  b_t = momentum * b_{t-1} + (1 - dampening) * g   (momentum > 0)
///         d = nesterov ? g + momentum * b_t : b_t     (d = g when momentum = 0)
///         p -= lr * d
///   Adam: m_t = beta1 * m_{t-1} + (1 - beta1) * g
///         v_t = beta2 * v_{t-1} + (1 - beta2) * g^2
///         p -= (lr / (1 - beta1^t)) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)
///   Adadelta (Zeiler 2012):
///         s_t = rho * s_{t-1} + (1 - rho) * g^2
///         d = sqrt(a_{t-1} + eps) / sqrt(s_t + eps) * g
///         a_t = rho * a_{t-1} + (1 - rho) * d^2
///         p -= lr * d
///
/// Expects: the ParameterStore outlives the optimiser and gets no new
/// parameters after the optimiser is made; gradients are in Parameter::grad
/// when step() is called.
/// Guarantees: step() allocates nothing (all state is allocated by the
/// constructor); loops are vectorised and OpenMP-parallel over elements for
/// large parameters; state() / load_state() round-trip everything a resumed
/// run needs (the step count and every buffer), so a resumed run takes
/// bit-identical steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/named_tensors.h"
#include "train/params.h"

namespace tenet::train {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update of every parameter from its gradient, at the current lr.
  virtual void step() = 0;

  /// "sgd", "adam" or "adadelta": stored in checkpoints and checked on load.
  virtual std::string kind() const = 0;
  /// The hyper-parameters as text, e.g. "adam(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
  /// weight_decay=0)".
  virtual std::string describe() const = 0;

  double lr() const { return lr_; }
  /// Sets the learning rate used by the next step() (a schedule calls this).
  void set_lr(double lr);
  /// Steps taken so far (0 before the first).
  int64_t step_count() const { return step_count_; }

  /// The state as named tensors: "step" (an int64 scalar, shape []) and
  /// "<param>/<buffer>" (float32, the parameter's shape) for each buffer
  /// (SGD: momentum_buffer, when momentum > 0; Adam: exp_avg, exp_avg_sq;
  /// Adadelta: square_avg, acc_delta — PyTorch's names).
  /// The tensors alias the optimiser's buffers: copy them to keep a snapshot.
  NamedTensors state() const;
  /// Copies the state back in. A BindError when a name is missing, unknown or
  /// has the wrong shape or type, or a value is one no run can reach (see
  /// state_problem); `source` names where it came from (a file).
  void load_state(const NamedTensors& state, const std::string& source);
  /// Values in `state` (names and shapes as state() makes them) that no
  /// training run reaches and that would make every later step NaN: a
  /// buffer value that is NaN or infinite, a negative running average of
  /// squares (Adam's exp_avg_sq, Adadelta's), a step count outside
  /// [0, 2^53]. The first one as text ("'w/exp_avg_sq' holds -1 at [2], ..."),
  /// or empty.
  std::string state_problem(const NamedTensors& state) const;

 protected:
  Optimizer(ParameterStore& params, double lr);
  /// The buffers of every parameter, in the store's order: "momentum_buffer", ...
  virtual std::vector<std::string> buffer_names() const = 0;
  /// Buffer b of parameter i (allocated by the constructor).
  virtual Tensor& buffer(size_t param, size_t b) = 0;
  /// Whether buffer b is a running average of squares (never negative).
  virtual bool averages_squares(size_t /*b*/) const { return false; }
  const Tensor& buffer(size_t param, size_t b) const {
    return const_cast<Optimizer*>(this)->buffer(param, b);
  }

  ParameterStore& params_;
  double lr_;
  int64_t step_count_ = 0;
};

struct SgdOptions {
  double lr = 0;  // required: must be set (> 0)
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;  // needs momentum > 0 and dampening = 0 (as in PyTorch)
};

class Sgd final : public Optimizer {
 public:
  /// A BindError for invalid options (lr <= 0, negative momentum or weight decay, ...).
  Sgd(ParameterStore& params, const SgdOptions& options);
  void step() override;
  std::string kind() const override { return "sgd"; }
  std::string describe() const override;
  const SgdOptions& options() const { return options_; }

 private:
  std::vector<std::string> buffer_names() const override;
  Tensor& buffer(size_t param, size_t b) override;
  SgdOptions options_;
  std::vector<Tensor> momentum_;  // one per parameter when momentum > 0
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // L2 added to the gradient (torch.optim.Adam, not AdamW)
};

class Adam final : public Optimizer {
 public:
  /// A BindError for invalid options (lr <= 0, betas outside [0, 1), eps < 0, ...).
  Adam(ParameterStore& params, const AdamOptions& options);
  void step() override;
  std::string kind() const override { return "adam"; }
  std::string describe() const override;
  const AdamOptions& options() const { return options_; }

 private:
  std::vector<std::string> buffer_names() const override;
  Tensor& buffer(size_t param, size_t b) override;
  bool averages_squares(size_t b) const override { return b == 1; }  // exp_avg_sq
  AdamOptions options_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

struct AdadeltaOptions {
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0;  // L2 added to the gradient, as in torch.optim.Adadelta
};

class Adadelta final : public Optimizer {
 public:
  /// A BindError for invalid options (lr <= 0, rho outside [0, 1], eps < 0, ...).
  Adadelta(ParameterStore& params, const AdadeltaOptions& options);
  void step() override;
  std::string kind() const override { return "adadelta"; }
  std::string describe() const override;
  const AdadeltaOptions& options() const { return options_; }

 private:
  std::vector<std::string> buffer_names() const override;
  Tensor& buffer(size_t param, size_t b) override;
  bool averages_squares(size_t) const override { return true; }  // square_avg, acc_delta
  AdadeltaOptions options_;
  std::vector<Tensor> square_avg_, acc_delta_;
};

/// lr(step) = initial_lr * rate^(step / every_steps), with the exponent
/// floored when staircase (tf.train.exponential_decay, as in the CapsNet
/// paper's code: rate 0.96 every 2000 steps). `step` counts steps taken.
struct ExponentialDecay {
  double initial_lr = 0;
  double rate = 1;
  int64_t every_steps = 1;
  bool staircase = false;

  /// A BindError unless initial_lr > 0, 0 < rate <= 1 and every_steps > 0.
  void validate() const;
  double lr_at(int64_t step) const;
  /// "exponential_decay(lr=0.001, rate=0.96, every=2000, staircase)"
  std::string describe() const;
};

}  // namespace tenet::train
