// Trains a sequence regressor whose recurrent cell is the Tenet operator
// lltm_ops::lltm (the LLTM of PyTorch's C++ extension tutorial, from
// models/zoo/lltm.tn), with LibTorch's C++ frontend and no Python:
//   1. its gradients, through Tenet's derived backward, against the same
//      cell written with LibTorch's own operators (autograd), in float64 and
//      float32;
//   2. training with Adam: the loss must fall.
// Prints what it measured; exits with 0 when both hold, 1 otherwise.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <tuple>

#include "lltm_ops.h"

namespace {

constexpr int64_t kFeatures = 8, kState = 32, kLength = 6, kBatch = 16;

/// The tutorial's LLTM forward, in LibTorch operators (the reference).
std::tuple<torch::Tensor, torch::Tensor> reference_lltm(const torch::Tensor& x,
                                                        const torch::Tensor& h,
                                                        const torch::Tensor& cell,
                                                        const torch::Tensor& weights,
                                                        const torch::Tensor& bias) {
  const int64_t s = h.size(1);
  const torch::Tensor gates = torch::addmm(bias, torch::cat({h, x}, 1), weights.t());
  const torch::Tensor input_gate = torch::sigmoid(gates.slice(1, 0, s));
  const torch::Tensor output_gate = torch::sigmoid(gates.slice(1, s, 2 * s));
  const torch::Tensor candidate = torch::elu(gates.slice(1, 2 * s, 3 * s));
  const torch::Tensor new_cell = cell + candidate * input_gate;
  return {torch::tanh(new_cell) * output_gate, new_cell};
}

struct Regressor : torch::nn::Module {
  Regressor(bool tenet, torch::Dtype dtype) : tenet(tenet) {
    const double bound = 1.0 / std::sqrt(double(kState));  // the tutorial's initialisation
    weights = register_parameter(
        "weights", torch::empty({3 * kState, kState + kFeatures}, dtype).uniform_(-bound, bound));
    bias = register_parameter("bias", torch::empty({3 * kState}, dtype).uniform_(-bound, bound));
    readout = register_module("readout", torch::nn::Linear(kState, 1));
    readout->to(dtype);
  }

  torch::Tensor forward(const torch::Tensor& sequence) {  // (T, B, I)
    const auto options = sequence.options();
    torch::Tensor h = torch::zeros({sequence.size(1), kState}, options);
    torch::Tensor cell = torch::zeros({sequence.size(1), kState}, options);
    for (int64_t t = 0; t < sequence.size(0); ++t)
      std::tie(h, cell) = tenet ? lltm_ops::lltm(sequence[t], h, cell, weights, bias)
                                : reference_lltm(sequence[t], h, cell, weights, bias);
    return readout->forward(h).squeeze(1);
  }

  bool tenet;
  torch::Tensor weights, bias;
  torch::nn::Linear readout{nullptr};
};

/// The largest difference between the two models' parameter gradients,
/// relative to the largest gradient.
double gradient_difference(torch::Dtype dtype) {
  torch::manual_seed(0);
  Regressor tenet(true, dtype), reference(false, dtype);
  {
    torch::NoGradGuard no_grad;
    auto from = tenet.parameters();
    auto to = reference.parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  const torch::Tensor sequence = torch::randn({kLength, kBatch, kFeatures}, dtype);
  const torch::Tensor target = sequence.select(2, 0).mean(0);
  torch::mse_loss(tenet.forward(sequence), target).backward();
  torch::mse_loss(reference.forward(sequence), target).backward();
  double difference = 0, largest = 0;
  auto a = tenet.parameters();
  auto b = reference.parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    difference = std::max(difference, (a[i].grad() - b[i].grad()).abs().max().item<double>());
    largest = std::max(largest, b[i].grad().abs().max().item<double>());
  }
  return difference / largest;
}

/// Trains the Tenet model; returns the mean loss of the first and last ten steps.
std::pair<double, double> train(int steps) {
  torch::manual_seed(1);
  Regressor model(true, torch::kFloat32);
  torch::optim::Adam optimiser(model.parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    const torch::Tensor sequence = torch::randn({kLength, kBatch, kFeatures});
    const torch::Tensor loss =
        torch::mse_loss(model.forward(sequence), sequence.select(2, 0).mean(0));
    optimiser.zero_grad();
    loss.backward();  // through lltm_ops::lltm_backward, kLength times a step
    optimiser.step();
    if (step < 10) first += loss.item<double>() / 10;
    if (step >= steps - 10) last += loss.item<double>() / 10;
  }
  return {first, last};
}

}  // namespace

int main() {
  const double f64 = gradient_difference(torch::kFloat64);
  const double f32 = gradient_difference(torch::kFloat32);
  std::printf("gradients against LibTorch's autograd: float64 %.2e, float32 %.2e (relative)\n", f64,
              f32);
  const auto [first, last] = train(120);
  std::printf("training loss: %.4f in the first ten steps, %.4f in the last ten\n", first, last);
  const bool ok = f64 < 1e-12 && f32 < 1e-5 && last < 0.5 * first;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
