// Tenet's side of the PyTorch comparison (bench/bench.py, docs/benchmark.md):
// compiles a .tn program through the driver (driver/driver.h; differentiated
// when asked), JIT-compiles it (jit/jit.h), binds it to the
// inputs' sizes (jit/executable.h: workspace and outputs allocated once)
// and times calls on inputs read from .npy files, printing one JSON line.
//
//   tenet_bench forward FILE FN --inputs DIR [options]   the function itself
//   tenet_bench vjp FILE FN --inputs DIR --wrt a,b        outputs and the gradients
//                                                         of a, b for the cotangents
//                                                         DIR/d_<output>.npy
//   tenet_bench train FILE FN --inputs DIR --wrt a,b --output loss
//                                                         one training step: the
//                                                         gradient of `loss`, then an
//                                                         Adam update of a, b
//   tenet_bench gemm N [options]                          cblas_sgemm of two N x N
//                                                         matrices (the GEMM floor)
// options: --label NAME (names the measurement), --dump DIR (writes the outputs
// of the first call as DIR/<output>.npy), --warmup N (untimed calls, default
// 2), --min-steps N (default 5), --min-time S (keep timing until S seconds
// have passed, default 1), --max-steps N (default 100).
//
// Expects: DIR/<input>.npy for every input the called function takes, with
// the right shapes (a BindError names the input otherwise).
// Guarantees: prints exactly one JSON object on stdout (the fields are listed
// in docs/benchmark.md); errors go to stderr with a non-zero exit status.
// The training step uses train::Adam (torch.optim.Adam's update, default
// betas and eps, lr 1e-3) on the parameters named by --wrt; every step sees
// the parameters the previous one updated.
#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "jit/executable.h"
#include "jit/jit.h"
#include "runtime/tenet_parallel.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "support/npy.h"
#include "support/tensor.h"
#include "train/optimizer.h"
#include "train/params.h"

namespace {

using namespace tenet;

struct Options {
  std::string mode, file, function;  // gemm: `function` holds N
  std::string inputs_dir, dump_dir, label, output;
  std::vector<std::string> wrt;
  int warmup = 2, min_steps = 5, max_steps = 100;
  double min_time = 1.0;
};

[[noreturn]] void usage(const std::string& why) {
  throw BindError(why +
                  "\nusage: tenet_bench forward|vjp|train FILE FN --inputs DIR [--wrt a,b] "
                  "[--output NAME] [--dump DIR] [--label NAME] [--warmup N] [--min-steps N] "
                  "[--min-time S] [--max-steps N]\n       tenet_bench gemm N [--label NAME] ...");
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int parse_count(const std::string& flag, const std::string& text, int lowest) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < lowest || v > 1000000)
    usage(flag + " needs an integer >= " + std::to_string(lowest) + ", got '" + text + "'");
  return int(v);
}

Options parse_options(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      positional.push_back(a);
      continue;
    }
    if (i + 1 >= args.size()) usage(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--inputs")
      o.inputs_dir = v;
    else if (a == "--dump")
      o.dump_dir = v;
    else if (a == "--label")
      o.label = v;
    else if (a == "--output")
      o.output = v;
    else if (a == "--wrt")
      o.wrt = split_commas(v);
    else if (a == "--warmup")
      o.warmup = parse_count(a, v, 0);
    else if (a == "--min-steps")
      o.min_steps = parse_count(a, v, 1);
    else if (a == "--max-steps")
      o.max_steps = parse_count(a, v, 1);
    else if (a == "--min-time")
      o.min_time = std::atof(v.c_str());
    else
      usage("unknown option " + a);
  }
  if (positional.empty()) usage("no mode given");
  o.mode = positional[0];
  const size_t wanted = o.mode == "gemm" ? 2 : 3;
  if (positional.size() != wanted) usage("wrong number of arguments for mode '" + o.mode + "'");
  if (o.mode == "gemm") {
    o.function = positional[1];
  } else {
    if (o.mode != "forward" && o.mode != "vjp" && o.mode != "train")
      usage("unknown mode " + o.mode);
    o.file = positional[1];
    o.function = positional[2];
    if (o.inputs_dir.empty()) usage("--inputs DIR is required");
    if (o.mode == "train" && (o.wrt.empty() || o.output.empty()))
      usage("train needs --wrt (the parameters) and --output (the loss)");
  }
  o.max_steps = std::max(o.max_steps, o.min_steps);
  if (o.label.empty()) o.label = o.mode + ":" + o.function;
  return o;
}

// ---- measuring ------------------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

long minor_faults() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

/// VmHWM, the peak resident set of this process image. (Not ru_maxrss: across
/// fork + exec that keeps the parent's peak, here the Python driver's.)
double peak_rss_mib() {
  double kib = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmHWM: %lf kB", &kib) == 1) break;
    std::fclose(f);
  }
  return kib / 1024.0;
}

double current_rss_mib() {
  long pages_total = 0, pages_resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return double(pages_resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Measurement {
  std::vector<double> wall, cpu;  // per timed step, seconds
  double first_call_s = 0;        // the first warm-up call
  double minflt_per_step = 0;
};

/// Untimed warm-up calls, then timed calls until both min_steps and
/// min_time are reached (or max_steps).
Measurement measure(const std::function<void()>& step, const Options& o) {
  Measurement m;
  for (int i = 0; i < o.warmup; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    if (i == 0) m.first_call_s = seconds_since(t0);
  }
  const long faults0 = minor_faults();
  const auto start = std::chrono::steady_clock::now();
  while (int(m.wall.size()) < o.max_steps &&
         (int(m.wall.size()) < o.min_steps || seconds_since(start) < o.min_time)) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    step();
    m.cpu.push_back(process_cpu_seconds() - c0);
    m.wall.push_back(seconds_since(t0));
  }
  m.minflt_per_step = double(minor_faults() - faults0) / double(m.wall.size());
  return m;
}

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

/// The one JSON line; `extra` is more `"key": value` text (or empty).
void print_json(const Options& o, const Measurement& m, double setup_s, double rss_start_mib,
                const std::string& extra) {
  std::printf(
      "{\"framework\": \"tenet\", \"workload\": \"%s\", \"median_s\": %.6g, "
      "\"cpu_median_s\": %.6g, \"steps\": %zu, \"warmup\": %d, \"times_s\": %s, "
      "\"first_call_s\": %.6g, \"minflt_per_step\": %.6g, \"peak_rss_mib\": %.6g, "
      "\"rss_start_mib\": %.6g, \"setup_s\": %.6g%s%s}\n",
      o.label.c_str(), median(m.wall), median(m.cpu), m.wall.size(), o.warmup,
      json_list(m.wall).c_str(), m.first_call_s, m.minflt_per_step, peak_rss_mib(), rss_start_mib,
      setup_s, extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

// ---- compiling and running programs ---------------------------------------

/// The driver (AD unless forward), then the JIT: the callable function.
jit::CompiledFunction compile_program(const Options& o) {
  driver::Request request;
  request.path = o.file;
  driver::FunctionRequest fn{o.function, std::nullopt};
  if (o.mode != "forward") {
    ad::GradRequest grad;
    grad.wrt = o.wrt;
    grad.vjp = o.mode == "vjp";
    grad.output = o.output;
    fn.grad = grad;
  }
  request.functions = {fn};
  return driver::load(request, driver::compile(request)).at(0);
}

/// The tensor for each input of `fn`: a parameter's value when the store has
/// it (so Adam's updates are seen), else DIR/<name>.npy.
std::vector<Tensor> bind_inputs(const ir::Function& fn, const std::string& dir,
                                const train::ParameterStore& params) {
  std::vector<Tensor> inputs;
  for (const auto& v : fn.inputs) {
    if (const train::Parameter* p = params.find(v->name))
      inputs.push_back(p->value);
    else
      inputs.push_back(read_npy(dir + "/" + v->name + ".npy"));
  }
  return inputs;
}

/// Parameters for --wrt, each initialised from DIR/<name>.npy.
void load_parameters(const Options& o, train::ParameterStore& params) {
  for (const std::string& name : o.wrt) {
    const Tensor initial = read_npy(o.inputs_dir + "/" + name + ".npy");
    if (initial.type() != ElemType::F32)
      throw BindError("parameter '" + name + "' must be float32, got " + initial.describe());
    train::Parameter& p = params.add(name, initial.shape(), "zeros");
    std::memcpy(p.value.raw(), initial.raw(), initial.nbytes());
  }
}

void dump_outputs(const jit::CompiledFunction& f, const std::vector<Tensor>& outputs,
                  const std::string& dir) {
  std::filesystem::create_directories(dir);
  const auto& names = f.function().output_names;
  for (size_t i = 0; i < outputs.size(); ++i) write_npy(dir + "/" + names[i] + ".npy", outputs[i]);
}

int run_program(const Options& o) {
  const double rss_start = current_rss_mib();
  const auto start = std::chrono::steady_clock::now();
  const jit::CompiledFunction f = compile_program(o);
  train::ParameterStore params;
  if (o.mode == "train") load_parameters(o, params);
  const std::vector<Tensor> inputs = bind_inputs(f.function(), o.inputs_dir, params);
  // Bound once: the workspace and the outputs are allocated (and pre-faulted)
  // here, so a call allocates nothing.
  jit::Executable executable = jit::Executable::for_inputs(f, inputs);

  std::function<void()> step = [&] { executable.run(inputs); };
  std::unique_ptr<train::Adam> adam;
  if (o.mode == "train") {
    // Each parameter's gradient is the output AD marked as its gradient
    // (ir::Function::gradient_output); the executable overwrites them in
    // place at every call, so Adam can read them there.
    const ir::Function& fn = f.function();
    for (size_t i = 0; i < params.size(); ++i)
      for (size_t k = 0; k < fn.inputs.size(); ++k)
        if (fn.inputs[k]->name == params[i].name)
          params[i].grad = executable.outputs().at(size_t(fn.gradient_output(k)));
    adam = std::make_unique<train::Adam>(params, train::AdamOptions{});
    step = [&] {
      executable.run(inputs);
      adam->step();
    };
  }
  const double setup_s = seconds_since(start);

  // The outputs of the very first call (before any parameter update) go to --dump.
  bool dumped = o.dump_dir.empty();
  const std::function<void()> timed = [&] {
    step();
    if (!dumped) dump_outputs(f, executable.outputs(), o.dump_dir);
    dumped = true;
  };
  const Measurement m = measure(timed, o);
  char extra[160];
  std::snprintf(extra, sizeof extra, "\"jit_cache_hit\": %s, \"workspace_mib\": %.6g",
                f.cache_hit() ? "true" : "false",
                double(executable.workspace_bytes()) / (1024.0 * 1024.0));
  print_json(o, m, setup_s, rss_start, extra);
  return 0;
}

// ---- the GEMM floor ---------------------------------------------------------

/// cblas_sgemm from the library generated code links (jit::blas_library()),
/// on two N x N matrices: C = A . B, row-major.
int run_gemm(const Options& o) {
  const int n = parse_count("gemm N", o.function, 1);
  const std::string library = jit::blas_library();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw BindError("cannot load the BLAS library '" + library + "'");
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  auto sgemm = reinterpret_cast<Sgemm>(::dlsym(handle, "cblas_sgemm"));
  if (!sgemm) throw BindError("'" + library + "' has no cblas_sgemm");
  const Tensor a = random_tensor(ElemType::F32, {n, n}, 1);
  const Tensor b = random_tensor(ElemType::F32, {n, n}, 2);
  Tensor c(ElemType::F32, {n, n});
  constexpr int kRowMajor = 101, kNoTrans = 111;  // the CBLAS enumerators
  const Measurement m = measure(
      [&] {
        sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n,
              0.0f, c.data<float>(), n);
      },
      o);
  const double gflop = 2.0 * double(n) * double(n) * double(n) * 1e-9;
  char extra[256];
  std::snprintf(extra, sizeof extra, "\"gflop\": %.6g, \"gflops\": %.6g, \"library\": \"%s\"",
                gflop, gflop / median(m.wall), library.c_str());
  print_json(o, m, 0.0, current_rss_mib(), extra);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tenet::settle_openmp_waiting(argv);  // as the tenet CLI: idle threads spin briefly
  // OpenBLAS picks its kernels for this CPU unless OPENBLAS_CORETYPE forces
  // others (some environments force AVX2 ones). Unset before any BLAS loads.
  ::unsetenv("OPENBLAS_CORETYPE");
  try {
    const Options o = parse_options(argc, argv);
    return o.mode == "gemm" ? run_gemm(o) : run_program(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tenet_bench: %s\n", e.what());
    return 1;
  }
}
