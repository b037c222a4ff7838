#include "tests/cuda/cuda_zoo.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "ad/grad.h"
#include "driver/driver.h"
#include "support/error.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {

jit::JitOptions test_jit_options() {
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  return options;
}

namespace {

TargetZoo build(const std::string& target) {
  TargetZoo z;
  const auto start = std::chrono::steady_clock::now();
  try {
    for (const ZooCase& c : zoo_table()) {
      const ir::Function* fn = zoo_module(c.file).find(c.fn);
      TENET_ASSERT(fn, "zoo table: no function " + c.fn + " in " + c.file);
      ir::Function grad = ad::differentiate(*fn, c.request);
      grad.name = case_id(c) + "_grad";
      z.index[case_id(c)] = z.names.size();
      z.names.push_back(grad.name);
      z.reference.push_back(grad.clone());
      z.module.functions.push_back(std::move(grad));
    }
    driver::optimise(z.module, target);
    z.compiled = driver::jit_compile_together(z.module, z.names, test_jit_options(), target);
  } catch (const UsageError& e) {
    z.error = e.what();
    z.unavailable = true;
  } catch (const std::exception& e) {
    z.error = e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[%s zoo] %zu gradient functions built in %.1f s%s\n", target.c_str(),
              z.reference.size(), seconds, z.unavailable ? " (unavailable here)" : "");
  return z;
}

}  // namespace

const TargetZoo& zoo_on(const std::string& target) {
  static std::map<std::string, TargetZoo> built;
  auto it = built.find(target);
  if (it == built.end()) it = built.emplace(target, build(target)).first;
  return it->second;
}

}  // namespace tenet::zoo
