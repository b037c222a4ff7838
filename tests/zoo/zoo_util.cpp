#include "tests/zoo/zoo_util.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>

#include "ir/bind.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "tests/support/golden.h"

namespace tenet::zoo {

void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << "models/zoo/" << c.file << ".tn, " << c.fn;
}

std::string case_id(const ZooCase& c) {
  return c.fn == c.file ? c.file : c.file + "_" + c.fn;
}

const ir::Module& zoo_module(const std::string& file) {
  static std::map<std::string, std::unique_ptr<ir::Module>> modules;
  auto it = modules.find(file);
  if (it == modules.end()) {
    std::string path = testing::source_path("models/zoo/" + file + ".tn");
    auto m = std::make_unique<ir::Module>(lang::compile_source(SourceFile::read(path)));
    it = modules.emplace(file, std::move(m)).first;
  }
  return *it->second;
}

std::vector<Tensor> make_inputs(const ir::Function& fn, const ir::SizeBindings& sizes,
                                uint64_t seed, const std::vector<InputRange>& ranges,
                                int64_t int_hi) {
  for (const InputRange& r : ranges) {
    bool known = std::any_of(fn.inputs.begin(), fn.inputs.end(),
                             [&](const ir::ValuePtr& v) { return v->name == r.input; });
    TENET_ASSERT(known, "zoo table: " + fn.name + " has no input '" + r.input + "'");
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const ir::Value& v = *fn.inputs[i];
    double lo = -1, hi = 1;
    for (const InputRange& r : ranges)
      if (r.input == v.name) lo = r.lo, hi = r.hi;
    inputs.push_back(random_tensor(v.type, ir::concrete_shape(v, sizes), seed + i, lo, hi, int_hi));
  }
  return inputs;
}

std::vector<Tensor> with_cotangents(const ir::Function& primal, const ir::Function& grad,
                                    const std::vector<Tensor>& inputs, uint64_t seed) {
  std::vector<Tensor> all = inputs;
  // The gradient has the primal's size parameters; the primal inputs bind them all.
  ir::SizeBindings sizes = ir::bind_sizes(primal, inputs);
  for (size_t i = inputs.size(); i < grad.inputs.size(); ++i) {
    const ir::Value& v = *grad.inputs[i];
    all.push_back(random_tensor(v.type, ir::concrete_shape(v, sizes), seed * 7919 + 1000 + i));
  }
  return all;
}

double max_rel_to_peak(const Tensor& actual, const Tensor& expected) {
  TENET_ASSERT(actual.shape() == expected.shape(), "max_rel_to_peak: shapes differ");
  double peak = 0, worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double a = actual.get(i), e = expected.get(i);
    if (std::isnan(a) || std::isnan(e)) return INFINITY;
    peak = std::max({peak, std::abs(a), std::abs(e)});
    worst = std::max(worst, std::abs(a - e));
  }
  return peak > 0 ? worst / peak : 0;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!(a.get(i) == b.get(i) || (a.get(i) != a.get(i) && b.get(i) != b.get(i)))) return false;
  return true;
}

ad::GradRequest vjp_request(const ZooCase& c) {
  ad::GradRequest r = c.request;
  if (!r.vjp && !r.output.empty()) r.outputs = {r.output};
  r.output.clear();
  r.vjp = true;
  return r;
}

}  // namespace tenet::zoo
