// Checkpoints: a round trip restores parameters, optimiser state, counters,
// RNG and metadata exactly, so a resumed run continues bit-identically; every
// mismatch is an error naming the file and the tensor, and changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"

namespace tenet::train {
namespace {

using testing::expect_error;
using testing::TempDir;

void make_model(ParameterStore& store) {
  store.add("conv_w", {4, 1, 3, 3}, "kaiming_uniform(fan_in=9)");
  store.add("conv_b", {4}, "constant(0.1)");
  store.add("fc_w", {10, 4}, "xavier_uniform(fan_in=4, fan_out=10)");
}

void fake_grads(ParameterStore& store, int step) {
  for (Parameter& p : store)
    for (int64_t i = 0; i < p.grad.numel(); ++i)
      p.grad.data<float>()[i] =
          float(std::sin(0.3 * double(i) + step) + 0.01 * p.value.data<float>()[i]);
}

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.type() == b.type() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

CheckpointState some_state() {
  Rng rng(99);
  rng.normal();  // leaves a spare normal in the state
  return CheckpointState{.step = 3,
                         .epoch = 1,
                         .rng = rng.snapshot(),
                         .metadata = {{"model_sha256", "deadbeef"}, {"lr", "0.001"}}};
}

TEST(Checkpoint, RoundTripResumesExactly) {
  TempDir tmp;
  const std::string path = tmp.path("ck.safetensors");
  ParameterStore a;
  make_model(a);
  a.initialize(7);
  Adam adam_a(a, {.lr = 0.01});
  for (int s = 1; s <= 3; ++s) {
    fake_grads(a, s);
    adam_a.step();
  }
  const CheckpointState saved = some_state();
  save_checkpoint(path, a, &adam_a, saved);

  ParameterStore b;
  make_model(b);
  b.initialize(8);  // different values: the load must overwrite them
  Adam adam_b(b, {.lr = 0.01});
  const CheckpointState loaded = load_checkpoint(path, b, &adam_b);
  EXPECT_EQ(loaded.step, 3);
  EXPECT_EQ(loaded.epoch, 1);
  EXPECT_EQ(loaded.metadata, saved.metadata);
  EXPECT_EQ(loaded.rng.words, saved.rng.words);
  EXPECT_EQ(loaded.rng.has_spare, true);
  EXPECT_EQ(loaded.rng.spare, saved.rng.spare);
  EXPECT_EQ(adam_b.step_count(), 3);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a[i].value, b[i].value)) << a[i].name;
  const NamedTensors sa = adam_a.state(), sb = adam_b.state();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i)
    EXPECT_TRUE(same(sa[i].tensor, sb[i].tensor)) << sa[i].name;

  for (int s = 4; s <= 5; ++s) {  // both continue identically
    fake_grads(a, s);
    fake_grads(b, s);
    adam_a.step();
    adam_b.step();
  }
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a[i].value, b[i].value)) << a[i].name;
}

TEST(Checkpoint, FileIsPlainSafetensorsWithDocumentedNames) {
  TempDir tmp;
  const std::string path = tmp.path("ck.safetensors");
  ParameterStore store;
  make_model(store);
  Sgd sgd(store, {.lr = 0.1, .momentum = 0.9});
  save_checkpoint(path, store, &sgd, some_state());
  const SafetensorsFile f = read_safetensors(path);
  std::vector<std::string> names;
  for (const NamedTensor& t : f.tensors) names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "conv_w", "conv_b", "fc_w", "optimizer/step", "optimizer/conv_w/momentum_buffer",
                "optimizer/conv_b/momentum_buffer", "optimizer/fc_w/momentum_buffer", "train/step",
                "train/epoch", "train/rng"}));
  EXPECT_EQ(f.metadata.at("tenet.format"), "tenet-checkpoint-1");
  EXPECT_EQ(f.metadata.at("tenet.optimizer"), "sgd");
  EXPECT_EQ(f.metadata.at("model_sha256"), "deadbeef");
}

TEST(Checkpoint, LoadingWithoutAnOptimizerReadsTheWeightsOnly) {
  TempDir tmp;
  const std::string path = tmp.path("ck.safetensors");
  ParameterStore a, b;
  make_model(a);
  make_model(b);
  a.initialize(1);
  Adam adam(a, {});
  save_checkpoint(path, a, &adam, some_state());
  load_checkpoint(path, b, nullptr);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a[i].value, b[i].value));
}

TEST(Checkpoint, MismatchesAreClearErrorsAndChangeNothing) {
  TempDir tmp;
  const std::string path = tmp.path("ck.safetensors");
  ParameterStore saved;
  make_model(saved);
  saved.initialize(1);
  Adam adam(saved, {});
  save_checkpoint(path, saved, &adam, some_state());

  {  // a parameter the file lacks
    ParameterStore m;
    make_model(m);
    m.add("extra", {2}, "ones");
    expect_error([&] { load_checkpoint(path, m, nullptr); },
                 {path + ": checkpoint: missing tensor 'extra'"});
  }
  {  // a shape that differs
    ParameterStore m;
    m.add("conv_w", {4, 1, 5, 5}, "zeros");
    m.add("conv_b", {4}, "zeros");
    m.add("fc_w", {10, 4}, "zeros");
    expect_error([&] { load_checkpoint(path, m, nullptr); },
                 {"parameter 'conv_w' is float32[4, 1, 3, 3] in the file but float32[4, 1, 5, 5] "
                  "in the model"});
  }
  {  // a tensor the model does not have
    ParameterStore m;
    m.add("conv_w", {4, 1, 3, 3}, "zeros");
    m.add("fc_w", {10, 4}, "zeros");
    expect_error([&] { load_checkpoint(path, m, nullptr); },
                 {"tensor 'conv_b' is not a parameter of the model"});
  }
  ParameterStore m;
  make_model(m);
  m.initialize(2);
  Tensor before(m[0].value.type(), m[0].value.shape());
  std::memcpy(before.raw(), m[0].value.raw(), m[0].value.nbytes());
  {  // another optimiser kind
    Sgd sgd(m, {.lr = 0.1, .momentum = 0.9});
    expect_error([&] { load_checkpoint(path, m, &sgd); },
                 {"holds state for a 'adam' optimiser, not 'sgd'"});
    EXPECT_EQ(sgd.step_count(), 0);
  }
  EXPECT_TRUE(same(m[0].value, before));  // nothing was loaded

  // No optimiser state saved, one requested.
  const std::string weights = tmp.path("weights.safetensors");
  save_checkpoint(weights, saved, nullptr, {});
  Adam fresh(m, {});
  expect_error([&] { load_checkpoint(weights, m, &fresh); }, {"it holds no optimiser state"});

  // Not a checkpoint at all.
  const std::string plain = tmp.path("plain.safetensors");
  write_safetensors(plain, {{"conv_w", saved[0].value}});
  expect_error([&] { load_checkpoint(plain, m, nullptr); },
               {plain + ": checkpoint: no 'tenet.format' metadata: not a Tenet checkpoint"});

  // Reserved metadata keys.
  CheckpointState reserved;
  reserved.metadata["tenet.format"] = "mine";
  expect_error([&] { save_checkpoint(tmp.path("r.safetensors"), saved, nullptr, reserved); },
               {"metadata key 'tenet.format' is reserved"});
}

// Found by the second hostile-input round: a NUL in a tensor's name cut the
// message short (what() is a C string), and a newline in one could forge a
// line of output. Names from files are shown with control bytes escaped.
TEST(Checkpoint, ControlCharactersInNamesAreEscapedInMessages) {
  TempDir tmp;
  ParameterStore params;
  make_model(params);
  const std::string name("a\0b\nc\x1b[31m", 10);
  const std::string path = tmp.path("w.safetensors");
  write_safetensors(path, {{name, Tensor(ElemType::F32, {1})}});
  try {
    load_weights(read_safetensors(path), path, params, "m.tn");
    ADD_FAILURE() << "loaded";
  } catch (const BindError& e) {
    EXPECT_STREQ(e.what(),
                 (path + ": tensor 'a\\x00b\\x0Ac\\x1B[31m' is not a parameter of m.tn").c_str());
  }
  // And in the reader's own messages (here: a BOOL value that is not 0 or 1).
  const std::string header =
      "{\"x\\u0000y\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}";
  std::string bytes(8, '\0');
  bytes[0] = char(header.size());
  expect_error(
      [&] { parse_safetensors(bytes + header + "\x02", "b.safetensors"); },
      {"b.safetensors: invalid safetensors file: tensor 'x\\x00y': BOOL value other than 0 "
       "or 1"});
}

// A copy of the checkpoint at `from` with one value of tensor `name` changed.
std::string tampered(const TempDir& tmp, const std::string& from, const std::string& name,
                     int64_t flat, double value) {
  SafetensorsFile f = read_safetensors(from);
  bool found = false;
  for (NamedTensor& t : f.tensors)
    if (t.name == name) {
      t.tensor.set(flat, value);
      found = true;
    }
  EXPECT_TRUE(found) << name;
  const std::string path = tmp.path("tampered.safetensors");
  write_safetensors(path, f.tensors, f.metadata);
  return path;
}

// A diverged state (NaN parameters, a negative second moment...) is neither
// written over a good checkpoint nor resumed from (resuming trained on and
// wrote an all-NaN checkpoint with exit 0).
TEST(Checkpoint, DivergedStatesAreNeitherSavedNorLoaded) {
  TempDir tmp;
  const std::string path = tmp.path("ck.safetensors");
  ParameterStore saved;
  make_model(saved);
  saved.initialize(1);
  Adam adam(saved, {});
  fake_grads(saved, 1);
  adam.step();
  save_checkpoint(path, saved, &adam, some_state());
  const std::string good = testing::read_bytes(path);

  // Saving: nothing is written, the file keeps the last good state.
  const float kept = saved[0].value.data<float>()[5];
  saved[0].value.data<float>()[5] = NAN;
  EXPECT_EQ(invalid_state(saved, &adam), "parameter 'conv_w' holds nan at [0, 0, 1, 2]");
  expect_error([&] { save_checkpoint(path, saved, &adam, some_state()); },
               {path + ": checkpoint not written (the file keeps what it held): parameter "
                       "'conv_w' holds nan at [0, 0, 1, 2]"});
  saved[0].value.data<float>()[5] = kept;
  NamedTensors state = adam.state();  // aliases the buffers
  state[4].tensor.data<float>()[1] = -INFINITY;
  EXPECT_EQ(state[4].name, "conv_b/exp_avg_sq");
  expect_error([&] { save_checkpoint(path, saved, &adam, some_state()); },
               {"checkpoint not written (the file keeps what it held): adam optimiser state: "
                "'conv_b/exp_avg_sq' holds -inf at [1]: the run that saved it diverged"});
  state[4].tensor.data<float>()[1] = 0;
  EXPECT_EQ(testing::read_bytes(path), good);
  EXPECT_EQ(invalid_state(saved, &adam), "");

  // Loading: each refused by name, nothing changed.
  struct Case {
    std::string tensor;
    int64_t flat;
    double value;
    std::string message;
  };
  const Case cases[] = {
      {"conv_w", 5, NAN,
       "checkpoint: parameter 'conv_w' holds nan at [0, 0, 1, 2]: the run that saved it "
       "diverged"},
      {"fc_w", 0, INFINITY, "checkpoint: parameter 'fc_w' holds inf at [0, 0]"},
      {"optimizer/conv_b/exp_avg_sq", 3, -1,
       "adam optimiser state: 'conv_b/exp_avg_sq' holds -1 at [3], but it is a running average "
       "of squares (never negative)"},
      {"optimizer/fc_w/exp_avg", 2, NAN,
       "adam optimiser state: 'fc_w/exp_avg' holds nan at [0, 2]: the run that saved it "
       "diverged"},
      {"optimizer/step", 0, -4, "adam optimiser state: 'step' is -4, outside [0, 2^53]"},
      {"train/step", 0, -5, "checkpoint: 'train/step' is negative (-5)"},
      {"train/epoch", 0, -1, "checkpoint: 'train/epoch' is negative (-1)"},
  };
  ParameterStore m;
  make_model(m);
  m.initialize(2);
  Tensor before(m[0].value.type(), m[0].value.shape());
  std::memcpy(before.raw(), m[0].value.raw(), m[0].value.nbytes());
  Adam fresh(m, {});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tensor);
    const std::string bad = tampered(tmp, path, c.tensor, c.flat, c.value);
    expect_error([&] { load_checkpoint(bad, m, &fresh); }, {bad + ": ", c.message});
    EXPECT_EQ(fresh.step_count(), 0);
    EXPECT_TRUE(same(m[0].value, before));
  }
  load_checkpoint(path, m, &fresh);  // the good file still loads
  EXPECT_EQ(fresh.step_count(), 1);
}

}  // namespace
}  // namespace tenet::train
