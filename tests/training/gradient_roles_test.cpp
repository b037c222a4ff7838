// Both trainers find a parameter's gradient through the mark AD puts on it
// (ir::Function::gradient_of), not through its name: a model with parameters
// w and d_w has w's gradient under another name than d_w (the name is
// taken), and reading the `d_` prefix left w untrained in `tenet train` and
// in the standalone project's table.
#include <gtest/gtest.h>

#include <string>

#include "tests/training/training_util.h"

namespace tenet::testing {
namespace {

const char* kTwoParameters = R"(# @train linear loss=loss scores=scores
# @eval linear scores=scores loss=loss
# @data image=image label=label
# @param w zeros
# @param d_w zeros
# @defaults optimizer=sgd lr=0.1 batch=10 epochs=1
def linear(float(B, 1, 28, 28) image, int32(B) label, float(10, 28, 28) w, float(10) d_w)
    -> (float(B, 10) scores, loss) {
  scores(b, k) +=! image(b, 0, y, x) * w(k, y, x)
  err(b, k) = scores(b, k) + d_w(k) - select(label(b) == k, 1, 0)
  sq(b) +=! err(b, k) * err(b, k)
  loss +=! sq(b) / float32(B)
}
)";

bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get(i) != 0) return false;
  return true;
}

TEST_F(Training, TheJitTrainerUpdatesAParameterWhoseGradientNameIsTaken) {
  const std::string model = write("two.tn", kTwoParameters);
  CommandResult r =
      tenet("train " + model + " --limit-train 20 --limit-test 10 --out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const train::NamedTensors params = checkpoint_parameters(path("run/last.safetensors"));
  for (const char* name : {"w", "d_w"}) {
    const Tensor* t = train::find_tensor(params, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_FALSE(all_zero(*t)) << name << " kept its zero initialisation";
  }
}

TEST_F(Training, TheStandaloneTableMarksAGradientWhoseNameIsTaken) {
  const std::string model = write("two.tn", kTwoParameters);
  CommandResult r = tenet("emit " + model + " --train -o " + path("project"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string table = read_file(path("project/two_model.cpp"));
  // {name, role, type, shape, param, dropout p}: w is parameter 0, d_w parameter 1.
  EXPECT_NE(table.find("Role::Gradient, ElemType::F32, {10, 28, 28}, 0, 0},"), std::string::npos)
      << table;
  EXPECT_NE(table.find("{\"d_d_w\", Role::Gradient, ElemType::F32, {10}, 1, 0},"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace tenet::testing
