// Every bad input to `tenet train`, `eval` and `predict` is a clear error
// (exit status 1, a message naming what is wrong), never a crash: bad flags,
// missing data, a checkpoint of another model, and model files whose
// trainer directives are wrong or missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "tests/training/training_util.h"
#include "train/checkpoint.h"
#include "train/options.h"

namespace tenet::testing {
namespace {

/// A minimal trainable model: a linear classifier. Tests edit its directives.
const char* kLinear = R"(# @train linear loss=loss scores=scores
# @eval linear scores=scores loss=loss
# @data image=image label=label
# @param w uniform(-0.01, 0.01)
# @param bias zeros
# @defaults optimizer=sgd lr=0.1 batch=10 epochs=1
def linear(float(B, 1, 28, 28) image, int32(B) label, float(10, 28, 28) w, float(10) bias)
    -> (float(B, 10) scores, loss) {
  scores(b, k) +=! image(b, 0, y, x) * w(k, y, x)
  err(b, k) = scores(b, k) + bias(k) - select(label(b) == k, 1, 0)
  sq(b) +=! err(b, k) * err(b, k)
  loss +=! sq(b) / float32(B)
}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// EXPECTs exit status 1 and `message` in stderr.
void expect_error(const CommandResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << "stderr:\n" << r.err;
}

TEST_F(Training, BadFlags) {
  expect_error(tenet("train models/mlp.tn --bogus 1"),
               "error: unknown option '--bogus' for 'tenet train'");
  expect_error(tenet("train models/mlp.tn --batch 0"),
               "error: --batch must be an integer from 1 to 1048576, not '0'");
  expect_error(tenet("train models/mlp.tn --epochs two"),
               "error: --epochs must be an integer from 1 to 1048576, not 'two'");
  expect_error(tenet("train models/mlp.tn --lr -1 --out " + path("run")),
               "error: --lr must be a positive number, not '-1'");
  expect_error(tenet("train models/mlp.tn --optimizer rmsprop --out " + path("run")),
               "error: --optimizer must be adam, sgd or adadelta, not 'rmsprop'");
  expect_error(tenet("train models/mlp.tn --lr-decay 1.5 --out " + path("run")),
               "error: --lr-decay must be a number in (0, 1], not '1.5'");
  expect_error(tenet("train models/mlp.tn --shift 30 --out " + path("run")),
               "error: --shift must be an integer from 0 to 27, not '30'");
  expect_error(tenet("train"), "error: expected one FILE argument");
  expect_error(tenet("eval models/mlp.tn"), "error: tenet eval needs --checkpoint CKPT");
  expect_error(tenet("predict models/mlp.tn --checkpoint x --images a --data b"),
               "error: give --images FILE or --data DIR, not both");
}

TEST_F(Training, MissingData) {
  expect_error(tenet("train models/mlp.tn --data " + path("nowhere") + " --out " + path("run")),
               "no MNIST training images in '" + path("nowhere") + "'");
  write("ckpt.safetensors", "");
  expect_error(tenet("eval models/mlp.tn --checkpoint " + path("ckpt.safetensors") + " --data " +
                     path("nowhere")),
               "no MNIST test images in '" + path("nowhere") + "'");
  expect_error(tenet("eval models/mlp.tn --checkpoint " + path("none.safetensors")),
               "error: --checkpoint: " + path("none.safetensors") + " does not exist");
  expect_error(tenet("train models/mlp.tn --resume " + path("")),
               "(the run has not saved a checkpoint yet)");
  // A file that is not IDX images.
  expect_error(tenet("predict models/mlp.tn --checkpoint " + path("ckpt.safetensors") +
                     " --images models/mlp.tn"),
               "models/mlp.tn");
}

// A checkpoint whose tensors are not the model's parameters, or have other
// shapes, is refused with the tensor's name; nothing is trained or evaluated.
TEST_F(Training, CheckpointOfAnotherModel) {
  train::ParameterStore other;
  other.add("conv1_w", {16, 1, 9, 9}, "zeros");
  train::CheckpointState state;
  state.metadata["model.path"] = "tests/training/data/capsnet_tiny.tn";
  train::save_checkpoint(path("other.safetensors"), other, nullptr, state);
  expect_error(tenet("eval models/mlp.tn --checkpoint " + path("other.safetensors")),
               "checkpoint: tensor 'conv1_w' is not a parameter of the model (it was saved by "
               "a run of tests/training/data/capsnet_tiny.tn, not of models/mlp.tn)");

  train::ParameterStore wrong_shape;
  wrong_shape.add("fc1_w", {256, 28, 27}, "zeros");
  for (const char* name : {"fc1_b", "fc2_b"})
    wrong_shape.add(name, {name[2] == '1' ? 256 : 10}, "zeros");
  wrong_shape.add("fc2_w", {10, 256}, "zeros");
  train::save_checkpoint(path("shape.safetensors"), wrong_shape, nullptr, state);
  expect_error(tenet("predict models/mlp.tn --checkpoint " + path("shape.safetensors")),
               "parameter 'fc1_w' is float32[256, 28, 27] in the file but float32[256, 28, 28] in "
               "the model");
}

TEST_F(Training, ResumeKeepsTheHyperParameters) {
  std::string model = write("linear.tn", kLinear);
  CommandResult r =
      tenet("train " + model + " --limit-train 20 --limit-test 10 --out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_error(tenet("train " + model + " --resume " + path("run") + " --batch 5"),
               "error: --batch 5 differs from the run being resumed (batch=10); a resumed run "
               "keeps its hyper-parameters");
  expect_error(tenet("train " + model + " --out " + path("run")),
               path("run") + " already holds a run (last.safetensors): continue it with --resume");
  // A flag that is not a value (the staircase schedule) cannot be added either.
  expect_error(tenet("train " + model + " --resume " + path("run") + " --lr-decay-staircase"),
               "error: --lr-decay-staircase true differs from the run being resumed "
               "(lr_decay_staircase=false)");
  // Repeating a value, or asking for more epochs, is fine.
  CommandResult more =
      tenet("train " + model + " --resume " + path("run") + " --lr 0.1 --epochs 2");
  EXPECT_EQ(more.exit_code, 0) << more.out << more.err;
  EXPECT_NE(more.out.find("epoch 2/2: train loss"), std::string::npos) << more.out;
  expect_error(tenet("train " + model + " --resume " + model), "invalid safetensors file");
}

struct DirectiveCase {
  const char* from;
  const char* to;
  const char* message;
};

// Each mistake in the directives is reported at its line, before anything compiles.
TEST_F(Training, DirectiveErrors) {
  const DirectiveCase cases[] = {
      {"# @param bias zeros\n", "",
       "linear.tn:6:76: error: input 'bias' of 'linear' has no role: declare it with '# @param "
       "bias INITIALISER'"},
      {"# @param bias zeros", "# @param bias kaiming_uniform(gain=2)",
       "linear.tn:5:15: error: bad initialiser"},
      {"# @param bias zeros", "# @param bias",
       "linear.tn:5:3: error: @param needs an input name "
       "and an initialiser"},
      {"# @param bias zeros", "# @param bias zeros\n# @param bias ones",
       "linear.tn:6:10: error: input 'bias' already has a role"},
      {"# @param bias zeros", "# @param weights zeros",
       "linear.tn:5:10: error: 'linear' has no input 'weights'"},
      {"# @data", "# @dat", "linear.tn:3:3: error: unknown directive '@dat'"},
      {"# @train linear loss=loss scores=scores\n", "",
       "linear.tn: error: no '# @train FN loss=OUTPUT' line"},
      {"@train linear", "@train linear2",
       "linear.tn:1:10: error: no function 'linear2' in this file"},
      {"loss=loss scores=scores\n", "loss=scores\n",
       "linear.tn:1:22: error: the loss 'scores' must be a float scalar, but it is float32[B, 10]"},
      {"# @eval linear scores=scores", "# @eval linear scores=loss",
       "linear.tn:2:23: error: the scores 'loss' must be float32[B, 10]"},
      {"# @eval linear scores=scores loss=loss", "# @eval linear loss=loss",
       "linear.tn:2:3: error: @eval needs scores=OUTPUT"},
      {"label=label", "label=image", "linear.tn:3:27: error: input 'image' already has a role"},
      {"lr=0.1", "lr=fast", "linear.tn:6:30: error: 'lr' must be a positive number, not 'fast'"},
      {"optimizer=sgd", "optimizer=rmsprop",
       "linear.tn:6:23: error: 'optimizer' must be adam, sgd or adadelta, not 'rmsprop'"},
      {"epochs=1", "epochs=1 lr_decay_staircase=yes",
       "linear.tn:6:71: error: 'lr_decay_staircase' must be true or false, not 'yes'"},
      {"lr=0.1", "speed=0.1", "linear.tn:6:27: error: unknown key 'speed' in @defaults"},
      // Each value against the options table (train/options.h), at the value.
      {"lr=0.1", "lr=0.1 momentum=1.5",
       "linear.tn:6:43: error: 'momentum' must be a number in [0, 1], not '1.5'"},
      {"lr=0.1", "lr=-1", "linear.tn:6:30: error: 'lr' must be a positive number, not '-1'"},
      {"batch=10", "batch=2.5",
       "linear.tn:6:40: error: 'batch' must be an integer from 1 to 1048576, not '2.5'"},
      {"epochs=1", "epochs=1 seed=-3",
       "linear.tn:6:57: error: 'seed' must be a non-negative integer, not '-3'"},
      {"@param bias zeros", "@param bias zeros\n# @dropout bias p=1",
       "linear.tn:6:19: error: the dropout probability must be in [0, 1), not '1'"},
  };
  for (const DirectiveCase& c : cases) {
    SCOPED_TRACE(c.to);
    write("linear.tn", replaced(kLinear, c.from, c.to));
    CommandResult r =
        run_command("cd " + dir_.string() + " && " + tenet_binary() + " train linear.tn --out run");
    expect_error(r, c.message);
  }
}

// The example of issue 14: `@defaults momentum=1.5` passed the directive
// check, then failed naming a flag (--momentum) the user never passed. Now
// the directive is the error, rendered with its line and a caret under the
// value, and a note saying what the option is.
TEST_F(Training, ADefaultOutOfRangeIsReportedAtTheDirective) {
  write("linear.tn", replaced(kLinear, "lr=0.1", "lr=0.1 momentum=1.5"));
  CommandResult r =
      run_command("cd " + dir_.string() + " && " + tenet_binary() + " train linear.tn --out run");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "linear.tn:6:43: error: 'momentum' must be a number in [0, 1], not '1.5'\n"
            "  # @defaults optimizer=sgd lr=0.1 momentum=1.5 batch=10 epochs=1\n"
            "                                            ^~~\n"
            "linear.tn: note: momentum: SGD momentum (tenet train --help lists the options)\n");
  EXPECT_EQ(r.err.find("--momentum"), std::string::npos);
}

// The flags of `tenet train` are the options table's: each one is listed with
// its range and its default, and a value the table accepts in a directive is
// accepted as a flag (and the other way round).
TEST_F(Training, FlagsComeFromTheOptionsTable) {
  CommandResult help = tenet("train --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const train::TrainingOption& o : train::training_options()) {
    SCOPED_TRACE(o.name);
    size_t at = help.out.find("  " + o.flag() + " ");
    if (at == std::string::npos) at = help.out.find("  " + o.flag() + "\n");
    ASSERT_NE(at, std::string::npos) << help.out;
    size_t end = help.out.find("\n  --", at + 2);
    const std::string entry = help.out.substr(at, end - at);
    EXPECT_NE(entry.find(o.help), std::string::npos) << entry;
    if (o.type != train::OptionType::Bool) {
      EXPECT_NE(entry.find(o.range()), std::string::npos) << entry;
    }
    const std::string fallback = o.default_value.empty() ? ")" : ", else " + o.default_value + ")";
    EXPECT_NE(entry.find("(default: the model's @defaults" + fallback), std::string::npos) << entry;
  }
  // The edge of a range: accepted as a default and as a flag alike.
  std::string model = write("linear.tn", replaced(kLinear, "lr=0.1", "lr=0.1 momentum=1"));
  CommandResult edge = tenet("train " + model +
                             " --momentum 1 --limit-train 10 --limit-test 10 --out " + path("run"));
  EXPECT_EQ(edge.exit_code, 0) << edge.err;
  EXPECT_NE(edge.out.find("optimizer sgd(lr=0.1, momentum=1,"), std::string::npos) << edge.out;
  expect_error(tenet("train " + model + " --momentum 1.5 --out " + path("run2")),
               "error: --momentum must be a number in [0, 1], not '1.5'");
}

// A checkpoint no run can continue from (a diverged one) is refused by name
// on --resume and on eval; before, the run trained on and wrote an all-NaN
// checkpoint with exit status 0.
TEST_F(Training, ResumeFromADivergedCheckpointIsRefused) {
  std::string model = write("linear.tn", kLinear);
  CommandResult r =
      tenet("train " + model +
            " --optimizer adam --lr 0.01 --limit-train 20 --limit-test 10 --out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const train::SafetensorsFile good = train::read_safetensors(path("run/last.safetensors"));
  struct Case {
    std::string tensor;
    double value;
    std::string message;
  };
  const Case cases[] = {
      {"w", NAN,
       "checkpoint: parameter 'w' holds nan at [0, 0, 3]: the run that saved it diverged"},
      {"optimizer/w/exp_avg_sq", -1,
       "adam optimiser state: 'w/exp_avg_sq' holds -1 at [0, 0, 3], but it is a running average of "
       "squares (never negative)"},
      {"optimizer/bias/exp_avg", INFINITY, "adam optimiser state: 'bias/exp_avg' holds inf at [3]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tensor);
    train::SafetensorsFile bad = good;
    for (train::NamedTensor& t : bad.tensors)
      if (t.name == c.tensor) {
        Tensor copy(t.tensor.type(), t.tensor.shape());
        std::memcpy(copy.raw(), t.tensor.raw(), t.tensor.nbytes());
        copy.set(3, c.value);
        t.tensor = copy;
      }
    std::filesystem::create_directories(path("bad"));
    const std::string file = path("bad/last.safetensors");
    train::write_safetensors(file, bad.tensors, bad.metadata);
    const std::string bytes = read_file(file);
    expect_error(tenet("train " + model + " --resume " + file + " --epochs 2"),
                 file + ": " + c.message);
    EXPECT_EQ(read_file(file), bytes);  // not overwritten
    if (c.tensor == "w") expect_error(tenet("eval " + model + " --checkpoint " + file), c.message);
  }
}

// A step with a finite loss can make the parameters infinite (here an
// absurd learning rate): the run stops with an error at the next checkpoint
// instead of writing one that holds them.
TEST_F(Training, DivergenceStopsBeforeACheckpointIsWritten) {
  std::string model = write("linear.tn", kLinear);
  CommandResult r = tenet(
      "train " + model +
      " --lr 1e300 --checkpoint-every 1 --limit-train 20 --limit-test 10 --out " + path("run"));
  expect_error(r, "error: training diverged by step 1: parameter 'w' holds ");
  EXPECT_NE(r.err.find("; no checkpoint written (" + path("run/last.safetensors") +
                       " is left as it was); try a lower learning rate (--lr)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run/last.safetensors")));
}

// sqrt(bias(0) * bias(1)) is 0 at the zero initialisation, its gradient
// 0.5 / 0 * 0 = NaN: the loss is finite, and an optimiser step would make the
// biases NaN, so the run stops before it.
TEST_F(Training, ANonFiniteGradientStopsTheRunBeforeTheStep) {
  std::string model =
      write("nan_grad.tn", replaced(replaced(kLinear, "  loss +=! sq(b) / float32(B)",
                                             "  total +=! sq(b) / float32(B)\n"
                                             "  loss = total + sqrt(bias(0) * bias(1))"),
                                    "# @param bias zeros", "# @param bias zeros"));
  CommandResult r =
      tenet("train " + model + " --limit-train 20 --limit-test 10 --out " + path("run"));
  expect_error(r,
               "but the gradient of bias is nan at [0] (a NaN or infinity the loss does not "
               "show: fmax and comparisons drop NaN) at step 1 (epoch 1, batch 1), so the "
               "parameters were not updated");
}

}  // namespace
}  // namespace tenet::testing
