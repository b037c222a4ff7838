// Call overhead from C++ (benchmark.h).
#include "python/src/benchmark.h"

#include <algorithm>
#include <ctime>
#include <functional>

namespace tenet::python {

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median_seconds_per_call(const std::function<void()>& call, int calls, int rounds) {
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    const double start = cpu_seconds();
    for (int i = 0; i < calls; ++i) call();
    per_call.push_back((cpu_seconds() - start) / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

CallTimes time_calls_from_cpp(const Kernel& kernel, const std::vector<Tensor>& inputs,
                              const ir::SizeBindings& given, int calls, int rounds) {
  const jit::CompiledFunction& f = kernel.compiled();
  CallTimes times;
  times.run = median_seconds_per_call([&] { f.run(inputs, given); }, calls, rounds);

  jit::Executable executable = jit::Executable::for_inputs(f, inputs, given);
  times.executable = median_seconds_per_call([&] { executable.run(inputs); }, calls, rounds);

  std::vector<const void*> in;
  for (const Tensor& t : inputs) in.push_back(t.raw());
  std::vector<Tensor> outputs = executable.outputs();  // shares their memory
  std::vector<void*> out;
  for (Tensor& t : outputs) out.push_back(t.raw());
  times.raw =
      median_seconds_per_call([&] { executable.run_raw(in.data(), out.data()); }, calls, rounds);
  return times;
}

}  // namespace tenet::python
