// The LibTorch level of the abstraction study (bench/study.py): the models of
// bench/study_models.py written with LibTorch's C++ frontend (the same layers,
// shapes, initialisation and random batch), trained with Adam or run for
// inference, timed like bench/study_worker.py and reported in its JSON lines:
//   {"event": "first", ...} after the first step, then the measurement.
//
//   study_libtorch --model cnn|resnet20|capsnet --batch N --resolution R
//                  --mode train|infer [--device cpu|cuda] [--threads N]
//                  [--warmup N] [--min-steps N] [--min-time S] [--max-steps N]
//                  [--init pytorch-default|xavier] [--seed N] [--tenet-ops 0|1]
// With --mnist DIR [--epochs N] [--limit-train N] [--limit-test N]: trains on
// MNIST (the accuracy experiment, bench/study_accuracy.py) instead of timing.
// --tenet-ops 1: CapsNet's capsule layers as a Tenet operator (the study's
// "LibTorch + Tenet ops" level; built with -DSTUDY_TENET_OPS=DIR, the folder
// `tenet emit bench/study_ops/capsules.tn --target torch --fn capsules
// --namespace study_capsules` wrote).
#include <sys/resource.h>
#include <torch/torch.h>

#include <sys/stat.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#ifdef STUDY_TENET_OPS
#include "study_capsules.h"  // bench/study_ops/capsules.tn, emitted by tenet emit --target torch
#endif

namespace {

using torch::Tensor;
namespace F = torch::nn::functional;

// ---- the models ------------------------------------------------------------------------

struct StudyModel : torch::nn::Module {
  virtual std::pair<Tensor, Tensor> forward(const Tensor& x, const Tensor& label) = 0;
};

struct CNN : StudyModel {
  explicit CNN(int64_t resolution) {
    const int64_t side = (resolution - 4) / 2;
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3)));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3)));
    fc1 = register_module("fc1", torch::nn::Linear(64 * side * side, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 10));
  }
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& label) override {
    Tensor x = torch::relu(conv1->forward(input));
    x = torch::relu(conv2->forward(x));
    x = torch::dropout(torch::max_pool2d(x, 2), 0.25, is_training());
    x = torch::dropout(torch::relu(fc1->forward(x.flatten(1))), 0.5, is_training());
    const Tensor scores = torch::log_softmax(fc2->forward(x), 1);
    return {scores, torch::nll_loss(scores, label)};
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false));
}

struct BasicBlock : torch::nn::Module {
  BasicBlock(int64_t channels, int64_t out, int64_t stride) {
    conv1 = register_module("conv1", conv(channels, out, 3, stride, 1));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2 = register_module("conv2", conv(out, out, 3, 1, 1));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
    shortcut = register_module("shortcut", torch::nn::Sequential());
    if (stride != 1 || channels != out) {
      shortcut->push_back(conv(channels, out, 1, stride, 0));
      shortcut->push_back(torch::nn::BatchNorm2d(out));
    }
  }
  Tensor forward(const Tensor& x) {
    const Tensor y = torch::relu(bn1->forward(conv1->forward(x)));
    // an empty Sequential is the identity in Python, an error in C++
    const Tensor skip = shortcut->is_empty() ? x : shortcut->forward(x);
    return torch::relu(bn2->forward(conv2->forward(y)) + skip);
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential shortcut{nullptr};
};

struct ResNet20 : StudyModel {
  ResNet20() {
    conv1 = register_module("conv1", conv(1, 16, 3, 1, 1));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(16));
    layers = register_module("layers", torch::nn::ModuleList());
    int64_t channels = 16;
    for (const auto& [out, stride] : {std::pair<int64_t, int64_t>{16, 1}, {32, 2}, {64, 2}})
      for (int i = 0; i < 3; ++i) {
        layers->push_back(std::make_shared<BasicBlock>(channels, out, i == 0 ? stride : 1));
        channels = out;
      }
    fc = register_module("fc", torch::nn::Linear(64, 10));
  }
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& label) override {
    Tensor x = torch::relu(bn1->forward(conv1->forward(input)));
    for (const auto& block : *layers) x = block->as<BasicBlock>()->forward(x);
    const Tensor scores = fc->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
    return {scores, torch::cross_entropy_loss(scores, label)};
  }
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::Linear fc{nullptr};
};

Tensor squash(const Tensor& s) {
  const Tensor n2 = (s * s).sum(-1, true);
  return s * torch::sqrt(n2 + 1e-7) / (1 + n2);
}

struct CapsNet : StudyModel {
  /// tenet_ops: the capsule layers (squash, predictions, routing) as the Tenet
  /// operator study_capsules::capsules instead of LibTorch operators.
  explicit CapsNet(bool tenet_ops) : tenet_ops(tenet_ops) {
#ifndef STUDY_TENET_OPS
    if (tenet_ops)
      throw std::invalid_argument("built without the Tenet operators (STUDY_TENET_OPS)");
#endif
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 256, 9)));
    primary = register_module("primary",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 256, 9).stride(2)));
    W = register_parameter("W", torch::empty({1152, 10, 16, 8}));
    dec1 = register_module("dec1", torch::nn::Linear(160, 512));
    dec2 = register_module("dec2", torch::nn::Linear(512, 1024));
    dec3 = register_module("dec3", torch::nn::Linear(1024, 784));
  }
  static Tensor routing(const Tensor& u_hat) {  // three iterations from zero logits
    Tensor logits = torch::zeros({u_hat.size(0), u_hat.size(1), u_hat.size(2)}, u_hat.options());
    auto weighted = [&](const Tensor& c) { return (c.unsqueeze(3) * u_hat).sum(1); };
    Tensor v = squash(weighted(torch::softmax(logits, 2)));
    for (int i = 0; i < 2; ++i) {
      logits = logits + (u_hat * v.unsqueeze(1)).sum(3);
      v = squash(weighted(torch::softmax(logits, 2)));
    }
    return v;
  }
  std::pair<Tensor, Tensor> forward(const Tensor& image, const Tensor& label) override {
    const int64_t batch = image.size(0);
    const Tensor relu1 = torch::relu(conv1->forward(image));
    // channel 8 t + d of the primary convolution is dimension d of capsule map t
    const Tensor s =
        primary->forward(relu1).view({batch, 32, 8, 36}).transpose(2, 3).reshape({batch, 1152, 8});
    Tensor v;
    if (tenet_ops) {
#ifdef STUDY_TENET_OPS
      v = study_capsules::capsules(s, W);
#endif
    } else {
      const Tensor u_hat =
          torch::matmul(W.view({1152, 160, 8}), squash(s).unsqueeze(3)).view({batch, 1152, 10, 16});
      v = routing(u_hat);
    }
    const Tensor lengths = torch::sqrt((v * v).sum(2) + 1e-7);
    const Tensor target =
        (label.unsqueeze(1) == torch::arange(10, label.options())).to(v.scalar_type());
    const Tensor shortfall = torch::relu(0.9 - lengths), excess = torch::relu(lengths - 0.1);
    const Tensor margin =
        (target * shortfall * shortfall + 0.5 * (1 - target) * excess * excess).sum(1).mean();
    const Tensor masked = (v * target.unsqueeze(2)).reshape({batch, 160});
    const Tensor hidden = torch::relu(dec2->forward(torch::relu(dec1->forward(masked))));
    const Tensor reconstruction = torch::sigmoid(dec3->forward(hidden));
    const Tensor error = (reconstruction - image.reshape({batch, 784})).pow(2).sum(1).mean();
    return {lengths, margin + 0.0005 * error};
  }
  bool tenet_ops;
  torch::nn::Conv2d conv1{nullptr}, primary{nullptr};
  Tensor W;
  torch::nn::Linear dec1{nullptr}, dec2{nullptr}, dec3{nullptr};
};

std::shared_ptr<StudyModel> build(const std::string& name, int64_t resolution, bool tenet_ops) {
  if (tenet_ops && name != "capsnet")
    throw std::invalid_argument("only CapsNet has a custom part to run as a Tenet operator");
  if (name == "cnn") return std::make_shared<CNN>(resolution);
  if (name == "resnet20") return std::make_shared<ResNet20>();
  if (name == "capsnet" && resolution == 28) return std::make_shared<CapsNet>(tenet_ops);
  throw std::invalid_argument("unknown model '" + name + "' at resolution " +
                              std::to_string(resolution));
}

/// bench/study_models.py's initialise: the same schemes, in the same order.
void initialise(StudyModel& model, const std::string& scheme, uint64_t seed) {
  torch::NoGradGuard no_grad;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (const auto& m : model.modules()) {
    Tensor weight, bias;
    if (auto* c = m->as<torch::nn::Conv2dImpl>()) weight = c->weight, bias = c->bias;
    if (auto* l = m->as<torch::nn::LinearImpl>()) weight = l->weight, bias = l->bias;
    if (auto* b = m->as<torch::nn::BatchNorm2dImpl>()) b->reset_parameters();
    if (auto* caps = dynamic_cast<CapsNet*>(m.get())) caps->W.normal_(0.0, 0.01, generator);
    if (!weight.defined()) continue;
    const double fan_in = double(weight[0].numel());
    double bound = 1.0 / std::sqrt(fan_in);
    if (scheme == "xavier")
      bound = std::sqrt(6.0 / (fan_in + double(weight.size(0) * weight[0][0].numel())));
    else if (scheme != "pytorch-default")
      throw std::invalid_argument("unknown initialisation '" + scheme + "'");
    weight.uniform_(-bound, bound, generator);
    if (bias.defined()) {
      if (scheme == "pytorch-default")
        bias.uniform_(-bound, bound, generator);
      else
        bias.zero_();
    }
  }
}

// ---- the measurement ---------------------------------------------------------------------

/// The sizes of the distinct files mapped into this process (binary and libraries).
int64_t mapped_bytes() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos) paths.insert(line.substr(slash));
  }
  int64_t total = 0;
  for (const std::string& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += st.st_size;
  }
  return total;
}

/// VmHWM: the peak resident set of this process since it started.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return -1;
}

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> args = {
      {"device", "cpu"},           {"threads", "2"},   {"warmup", "2"},
      {"min-steps", "5"},          {"min-time", "1"},  {"max-steps", "200"},
      {"init", "pytorch-default"}, {"seed", "0"},      {"mode", "train"},
      {"resolution", "28"},        {"tenet-ops", "0"}, {"epochs", "1"},
      {"limit-train", "0"},        {"limit-test", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key.rfind("--", 0) != 0) throw std::invalid_argument("expected --option, got " + key);
    args[key.substr(2)] = argv[i + 1];
  }
  for (const char* required : {"model", "batch"})
    if (!args.count(required))
      throw std::invalid_argument(std::string("--") + required + " is required");
  return args;
}

/// The accuracy experiment (bench/study_accuracy.py), as study_worker.py's
/// train_mnist: the same epochs in the same order (torch::randperm from seed +
/// epoch), Adam at lr 1e-3, one JSON line per epoch.
int train_mnist(const std::map<std::string, std::string>& args) {
  torch::set_num_threads(std::stoi(args.at("threads")));
  const uint64_t seed = std::stoull(args.at("seed"));
  const int64_t batch = std::stoll(args.at("batch"));
  auto load = [&](torch::data::datasets::MNIST::Mode mode, const std::string& limit) {
    torch::data::datasets::MNIST data(args.at("mnist"), mode);  // images / 255, float
    const int64_t n = std::stoll(args.at(limit));
    const int64_t count = n > 0 ? std::min(n, data.images().size(0)) : data.images().size(0);
    return std::pair{data.images().slice(0, 0, count), data.targets().slice(0, 0, count)};
  };
  const auto [x, y] = load(torch::data::datasets::MNIST::Mode::kTrain, "limit-train");
  const auto [test_x, test_y] = load(torch::data::datasets::MNIST::Mode::kTest, "limit-test");
  std::shared_ptr<StudyModel> model = build(args.at("model"), 28, args.at("tenet-ops") == "1");
  initialise(*model, args.at("init"), seed);
  torch::manual_seed(seed);
  torch::optim::Adam optimiser(model->parameters(), torch::optim::AdamOptions(1e-3));
  for (int64_t epoch = 0; epoch < std::stoll(args.at("epochs")); ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    model->train();
    const Tensor order = torch::randperm(x.size(0), at::detail::createCPUGenerator(seed + epoch));
    double loss_sum = 0;
    int64_t steps = 0;
    for (int64_t first = 0; first + batch <= x.size(0); first += batch, ++steps) {
      const Tensor idx = order.slice(0, first, first + batch);
      optimiser.zero_grad(true);
      const Tensor loss = model->forward(x.index_select(0, idx), y.index_select(0, idx)).second;
      loss.backward();
      optimiser.step();
      loss_sum += loss.item<double>();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    model->eval();
    int64_t correct = 0;
    {
      torch::NoGradGuard no_grad;
      for (int64_t first = 0; first < test_x.size(0); first += 1000) {
        const Tensor images = test_x.slice(0, first, first + 1000);
        const Tensor labels = test_y.slice(0, first, first + 1000);
        correct += model->forward(images, labels).first.argmax(1).eq(labels).sum().item<int64_t>();
      }
    }
    std::printf(
        "{\"event\": \"epoch\", \"epoch\": %lld, \"train_loss\": %.9g, "
        "\"test_accuracy\": %.6f, \"seconds\": %.3f}\n",
        static_cast<long long>(epoch + 1), loss_sum / double(steps),
        double(correct) / double(test_x.size(0)), seconds);
    std::fflush(stdout);
  }
  return 0;
}

int run(const std::map<std::string, std::string>& args) {
  if (args.count("mnist")) return train_mnist(args);
  torch::set_num_threads(std::stoi(args.at("threads")));
  const torch::Device device(args.at("device") == "cuda" ? torch::kCUDA : torch::kCPU);
  const int64_t batch = std::stoll(args.at("batch")),
                resolution = std::stoll(args.at("resolution"));
  const bool train = args.at("mode") == "train";
  std::shared_ptr<StudyModel> model =
      build(args.at("model"), resolution, args.at("tenet-ops") == "1");
  initialise(*model, args.at("init"), std::stoull(args.at("seed")));
  model->to(device);
  model->train(train);
  torch::manual_seed(std::stoull(args.at("seed")));        // dropout's masks
  at::Generator data = at::detail::createCPUGenerator(0);  // study_models.example_batch
  const Tensor x = torch::rand({batch, 1, resolution, resolution}, data).to(device);
  const Tensor y = torch::randint(0, 10, {batch}, data).to(device);
  torch::optim::Adam optimiser(model->parameters(), torch::optim::AdamOptions(1e-3));
  auto step = [&] {  // returns the loss (train) or the first score (infer)
    Tensor out;
    if (train) {
      optimiser.zero_grad(true);
      out = model->forward(x, y).second;
      out.backward();
      optimiser.step();
    } else {
      torch::NoGradGuard no_grad;
      out = model->forward(x, y).first;
    }
    if (device.is_cuda()) torch::cuda::synchronize();
    return out;
  };
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  clock::time_point t0 = clock::now();
  const double value = step().flatten()[0].item<double>();
  std::printf("{\"event\": \"first\", \"first_step_s\": %.6f, \"value\": %.9g}\n", seconds(t0),
              value);
  std::fflush(stdout);
  for (int i = 0; i < std::stoi(args.at("warmup")); ++i) step();
  const long faults = minor_faults();
  std::vector<double> times;
  const clock::time_point start = clock::now();
  while (int64_t(times.size()) < std::stoll(args.at("max-steps")) &&
         (int64_t(times.size()) < std::stoll(args.at("min-steps")) ||
          seconds(start) < std::stod(args.at("min-time")))) {
    t0 = clock::now();
    step();
    times.push_back(seconds(t0));
  }
  const double per_step = double(minor_faults() - faults) / double(times.size());
  std::sort(times.begin(), times.end());
  std::printf(
      "{\"event\": \"result\", \"step_ms\": %.6f, \"steps\": %zu, \"minflt_per_step\": %.3f, "
      "\"deploy_bytes\": %lld, \"peak_rss_mib\": %.1f}\n",
      1e3 * times[times.size() / 2], times.size(), per_step, static_cast<long long>(mapped_bytes()),
      peak_rss_mib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "study_libtorch: %s\n", e.what());
    return 1;
  }
}
