// A vector-Jacobian program cut into its halves (ad/split.h), on every program
// of the operator zoo: the backward run on the forward's saved values gives the
// whole program's gradients, bitwise in the interpreter (the same statements on
// the same values) and within rounding when compiled; the forward gives the
// whole program's outputs; every statement lands in exactly one half.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "ad/split.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "jit/jit.h"
#include "support/error.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 7;
constexpr double kCompiledTolerance = 1e-4;  // as the zoo suite's (zoo_test.cpp)

struct Cut {
  ir::Function whole;  // optimised by the shared passes
  ad::SplitVjp halves;
};

Cut cut(const ZooCase& c, const ir::Function& fn) {
  ir::Module m;
  m.functions.push_back(ad::differentiate(fn, vjp_request(c)));
  driver::run_passes(m, {"simplify", "dce", "hoist", "index_split", "contraction", "fuse"});
  Cut out{m.functions[0].clone(), {}};
  out.halves = ad::split_vjp(out.whole, fn.inputs.size(), fn.outputs.size());
  return out;
}

/// The backward's arguments: the inputs, the forward's saved outputs, the cotangents.
std::vector<Tensor> backward_arguments(const Cut& c, size_t inputs,
                                       const std::vector<Tensor>& whole_inputs,
                                       const std::vector<Tensor>& forward_results) {
  std::vector<Tensor> args(whole_inputs.begin(), whole_inputs.begin() + long(inputs));
  for (const std::string& name : c.halves.saved) {
    const auto& names = c.halves.forward.output_names;
    const size_t k = size_t(std::find(names.begin(), names.end(), name) - names.begin());
    EXPECT_LT(k, names.size()) << "saved value " << name << " is not an output of the forward";
    args.push_back(forward_results.at(k));
  }
  args.insert(args.end(), whole_inputs.begin() + long(inputs), whole_inputs.end());
  return args;
}

class SplitZoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(SplitZoo, HalvesGiveTheWholeProgramsResultsInTheInterpreter) {
  const ZooCase& c = GetParam();
  const ir::Function& fn = *zoo_module(c.file).find(c.fn);
  const Cut cut_ = cut(c, fn);
  // Every statement of the whole in exactly one half (the forward may add copies).
  std::map<const ir::Value*, int> halves_of;
  for (const ir::Function* half : {&cut_.halves.forward, &cut_.halves.backward})
    for (const ir::Stmt& s : half->body) ++halves_of[s.compute.result.get()];
  for (const ir::Stmt& s : cut_.whole.body)
    EXPECT_EQ(halves_of[s.compute.result.get()], 1) << s.source;
  for (const ir::Stmt& s : cut_.halves.backward.body)
    EXPECT_EQ(s.annotations.ad, ir::AdOrigin::Backward) << s.source;
  // A copy only where the backward reads an output that updates an input.
  bool updates = false;
  for (size_t k = 0; k < fn.outputs.size(); ++k) updates = updates || fn.updated_input(k) >= 0;
  if (!updates) {
    EXPECT_EQ(cut_.halves.forward.body.size() + cut_.halves.backward.body.size(),
              cut_.whole.body.size());
  }

  const std::vector<Tensor> inputs = make_inputs(fn, c.sizes, kSeed, c.ranges, c.int_hi);
  const std::vector<Tensor> all = with_cotangents(fn, cut_.whole, inputs, kSeed);
  const std::vector<Tensor> expected = ir::interpret(cut_.whole, all);
  const std::vector<Tensor> forward = ir::interpret(cut_.halves.forward, inputs);
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    EXPECT_TRUE(bitwise_equal(forward[i], expected[i])) << fn.output_names[i];
  const std::vector<Tensor> backward =
      ir::interpret(cut_.halves.backward, backward_arguments(cut_, fn.inputs.size(), all, forward));
  ASSERT_EQ(backward.size(), expected.size() - fn.outputs.size());
  for (size_t i = 0; i < backward.size(); ++i)
    EXPECT_TRUE(bitwise_equal(backward[i], expected[fn.outputs.size() + i]))
        << cut_.halves.backward.output_names[i];
}

// Compiled, a few programs whose halves differ in kind (GEMMs, convolutions and
// a convolution library call, normalisations, a scan, CapsNet's routing): each
// half against the interpreter running the same half.
TEST(SplitZooCompiled, HalvesCompiledMatchTheInterpretedHalves) {
  const std::vector<std::string> chosen = {"batch_norm", "conv2d_stride2", "lltm",
                                           "scans",      "softmax",        "routing3"};
  ir::Module m;
  std::vector<const ZooCase*> cases;
  std::vector<Cut> cuts;
  for (const ZooCase& c : zoo_table()) {
    if (std::find(chosen.begin(), chosen.end(), case_id(c)) == chosen.end()) continue;
    cases.push_back(&c);
    cuts.push_back(cut(c, *zoo_module(c.file).find(c.fn)));
    m.functions.push_back(cuts.back().halves.forward.clone());
    m.functions.back().name = case_id(c) + "_forward";
    m.functions.push_back(cuts.back().halves.backward.clone());
    m.functions.back().name = case_id(c) + "_backward";
  }
  ASSERT_EQ(cases.size(), chosen.size()) << "a chosen program left the zoo table";
  std::vector<std::string> names;
  for (const ir::Function& f : m.functions) names.push_back(f.name);
  driver::run_passes(m, {"schedule"});  // the CPU target's pass, after the cut as in the driver
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");  // CTest: a cache in the build folder
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  const std::vector<jit::CompiledFunction> compiled =
      driver::jit_compile_together(m, names, options);
  for (size_t k = 0; k < cases.size(); ++k) {
    const ZooCase& c = *cases[k];
    const ir::Function& fn = *zoo_module(c.file).find(c.fn);
    const std::vector<Tensor> inputs = make_inputs(fn, c.sizes, kSeed, c.ranges, c.int_hi);
    const std::vector<Tensor> all = with_cotangents(fn, cuts[k].whole, inputs, kSeed);
    const std::vector<Tensor> forward = compiled[2 * k].run(inputs);
    const std::vector<Tensor> forward_expected = ir::interpret(cuts[k].halves.forward, inputs);
    for (size_t i = 0; i < forward.size(); ++i)
      EXPECT_LE(max_rel_to_peak(forward[i], forward_expected[i]), kCompiledTolerance)
          << case_id(c) << ": forward " << cuts[k].halves.forward.output_names[i];
    const std::vector<Tensor> args = backward_arguments(cuts[k], fn.inputs.size(), all, forward);
    const std::vector<Tensor> backward = compiled[2 * k + 1].run(args);
    const std::vector<Tensor> backward_expected = ir::interpret(cuts[k].halves.backward, args);
    for (size_t i = 0; i < backward.size(); ++i)
      EXPECT_LE(max_rel_to_peak(backward[i], backward_expected[i]), kCompiledTolerance)
          << case_id(c) << ": backward " << cuts[k].halves.backward.output_names[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, SplitZoo, ::testing::ValuesIn(zoo_table()),
                         [](const ::testing::TestParamInfo<ZooCase>& param_info) {
                           return case_id(param_info.param);
                         });

}  // namespace
}  // namespace tenet::zoo
