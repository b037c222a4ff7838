// MNIST: the loader on the committed sample (raw and gzip told apart by
// content), every validation error on corrupted copies, the shift
// augmentation, and the batcher's determinism, resumption and buffer reuse.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "tests/support/alloc/allocation_counter.h"
#include "tests/support/golden.h"
#include "tests/train/train_test_util.h"
#include "train/mnist.h"

namespace tenet::train {
namespace {

using testing::expect_error;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

std::string sample(const std::string& name) {
  return tenet::testing::source_path("data/mnist-sample/" + name);
}

// The file decompressed with zlib's gz* interface (not the loader's inflate loop).
std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  gzclose(f);
  return out;
}

std::string big_endian(uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

const MnistDataset& train_sample() {
  static const MnistDataset data =
      load_mnist_dir(tenet::testing::source_path("data/mnist-sample"), MnistSplit::Train);
  return data;
}

TEST(Mnist, LoadsTheSample) {
  const MnistDataset& train = train_sample();
  EXPECT_EQ(train.images.shape(), (std::vector<int64_t>{5000, 1, 28, 28}));
  EXPECT_EQ(train.labels.shape(), (std::vector<int64_t>{5000}));
  // The well-known first labels of MNIST's training and test sets.
  const int32_t first_train[] = {5, 0, 4, 1, 9, 2, 1, 3, 1, 4};
  EXPECT_TRUE(std::equal(first_train, first_train + 10, train.labels.data<int32_t>()));
  const MnistDataset test =
      load_mnist_dir(tenet::testing::source_path("data/mnist-sample"), MnistSplit::Test);
  EXPECT_EQ(test.size(), 1000);
  const int32_t first_test[] = {7, 2, 1, 0, 4, 1, 4, 9, 5, 9};
  EXPECT_TRUE(std::equal(first_test, first_test + 10, test.labels.data<int32_t>()));
  // Pixels are bytes / 255: in [0, 1], with both ends present; every class appears.
  const float* px = train.images.data<float>();
  EXPECT_EQ(*std::min_element(px, px + train.images.numel()), 0.0f);
  EXPECT_EQ(*std::max_element(px, px + train.images.numel()), 1.0f);
  std::set<int32_t> classes(train.labels.data<int32_t>(), train.labels.data<int32_t>() + 5000);
  EXPECT_EQ(classes.size(), 10u);
  // The same values as the IDX bytes, divided by 255.
  const std::string raw = gunzip_file(sample("train-images-idx3-ubyte.gz"));
  for (int64_t i = 0; i < 784 * 3; ++i)
    ASSERT_EQ(px[i], float(uint8_t(raw[16 + size_t(i)])) / 255.0f) << i;
}

TEST(Mnist, TellsGzipFromRawByContentNotName) {
  TempDir tmp;
  // Swap the conventions: raw data named .gz, gzip data without a suffix.
  write_bytes(tmp.path("images.gz"), gunzip_file(sample("t10k-images-idx3-ubyte.gz")));
  write_bytes(tmp.path("labels"), read_bytes(sample("t10k-labels-idx1-ubyte.gz")));
  const MnistDataset swapped = load_mnist(tmp.path("images.gz"), tmp.path("labels"));
  const MnistDataset normal =
      load_mnist(sample("t10k-images-idx3-ubyte.gz"), sample("t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(swapped.images.nbytes(), normal.images.nbytes());
  EXPECT_EQ(std::memcmp(swapped.images.raw(), normal.images.raw(), normal.images.nbytes()), 0);
  EXPECT_EQ(std::memcmp(swapped.labels.raw(), normal.labels.raw(), normal.labels.nbytes()), 0);
  // The limit keeps the first examples.
  const MnistDataset first = load_mnist(tmp.path("images.gz"), tmp.path("labels"), 10);
  EXPECT_EQ(first.size(), 10);
  EXPECT_EQ(std::memcmp(first.images.raw(), normal.images.raw(), first.images.nbytes()), 0);
}

TEST(Mnist, CorruptFilesAreClearErrors) {
  TempDir tmp;
  // /dev/zero was read until memory ran out.
  expect_error([&] { read_idx_images("/dev/zero"); },
               {"/dev/zero: cannot open: it is a character device, not a regular file"});
  const std::string images = gunzip_file(sample("t10k-images-idx3-ubyte.gz"));
  const std::string labels = gunzip_file(sample("t10k-labels-idx1-ubyte.gz"));
  const std::string gz = read_bytes(sample("t10k-images-idx3-ubyte.gz"));
  struct Case {
    std::string name, bytes;
    bool is_labels;
    std::string message;
  };
  std::string bad_label = labels;
  bad_label[8 + 17] = 10;
  std::string flipped = gz;
  for (size_t i = 1000; i < 1100; ++i) flipped[i] = char(~flipped[i]);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] = char(~bad_crc[bad_crc.size() - 6]);  // in the CRC-32 trailer
  const std::string header_29 = big_endian(2051) + big_endian(1) + big_endian(29) + big_endian(28);
  const Case cases[] = {
      {"empty", "", false, "only 0 bytes, too short for an IDX header"},
      {"labels-as-images", labels, false,
       "magic number 2049, expected 2051 for IDX images (this is a label file)"},
      {"images-as-labels", images, true,
       "magic number 2051, expected 2049 for IDX labels (this is an image file)"},
      {"garbage", "hello world, not IDX", false, "magic number 1751477356, expected 2051"},
      {"short-header", images.substr(0, 10), false, "truncated IDX header (10 bytes, needs 16)"},
      {"29x28", header_29 + std::string(29 * 28, '\0'), false, "images are 29x28, expected 28x28"},
      {"truncated", images.substr(0, images.size() - 100), false,
       "truncated: the header announces 1000 images (784016 bytes) but the data has 783916 bytes"},
      {"trailing", images + "xyz", false, "3 unexpected bytes after the 1000 images"},
      {"truncated-labels", labels.substr(0, 500), true,
       "truncated: the header announces 1000 labels (1008 bytes) but the data has 500 bytes"},
      {"bad-label", bad_label, true, "label 10 at index 17 is not a digit 0-9"},
      {"truncated.gz", gz.substr(0, gz.size() / 2), false, "truncated gzip data"},
      {"flipped.gz", flipped, false, "corrupt gzip data"},
      {"crc.gz", bad_crc, false, "corrupt gzip data (incorrect data check)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = tmp.path(c.name);
    write_bytes(path, c.bytes);
    if (c.is_labels)
      expect_error([&] { read_idx_labels(path); }, {path + ": " + c.message});
    else
      expect_error([&] { read_idx_images(path); }, {path + ": " + c.message});
  }
  expect_error([&] { read_idx_images(tmp.path("absent")); },
               {tmp.path("absent") + ": cannot open"});
  // Counts that disagree between the two files.
  write_bytes(tmp.path("labels-10"), labels.substr(0, 8 + 10).replace(4, 4, big_endian(10)));
  expect_error([&] { load_mnist(sample("t10k-images-idx3-ubyte.gz"), tmp.path("labels-10")); },
               {"holds 1000 images but", "labels-10 holds 10 labels"});
  expect_error([&] { load_mnist_dir(tmp.dir().string(), MnistSplit::Train); },
               {"no MNIST training images in '" + tmp.dir().string() + "'",
                "train-images-idx3-ubyte.gz", "scripts/download-mnist.sh"});
}

// dst(y, x) = src(y - dy, x - dx), written pixel by pixel.
std::vector<float> shifted_by_definition(const float* src, int dx, int dy) {
  std::vector<float> out(784, 0.0f);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const int sy = y - dy, sx = x - dx;
      if (sy >= 0 && sy < 28 && sx >= 0 && sx < 28) out[size_t(y * 28 + x)] = src[sy * 28 + sx];
    }
  return out;
}

TEST(Mnist, ShiftMovesTheImageWithZeroFill) {
  const float* img = train_sample().images.data<float>();
  std::vector<float> out(784);
  for (int dy = -3; dy <= 3; ++dy)
    for (int dx = -3; dx <= 3; ++dx) {
      std::fill(out.begin(), out.end(), -1.0f);  // every pixel must be written
      shift_image(img, out.data(), 28, 28, dx, dy);
      ASSERT_EQ(out, shifted_by_definition(img, dx, dy)) << "dx " << dx << " dy " << dy;
    }
  // A one-pixel image: the lit pixel moves right and down for positive shifts.
  std::vector<float> dot(784, 0.0f);
  dot[5 * 28 + 7] = 1.0f;
  shift_image(dot.data(), out.data(), 28, 28, 2, -1);
  EXPECT_EQ(out[4 * 28 + 9], 1.0f);
  EXPECT_EQ(std::count(out.begin(), out.end(), 1.0f), 1);
  shift_image(dot.data(), out.data(), 28, 28, 28, 0);  // moved out entirely
  EXPECT_EQ(std::count(out.begin(), out.end(), 0.0f), 784);
}

std::vector<float> rows_of(const Batch& b) {
  return {b.images->data<float>(), b.images->data<float>() + b.images->numel()};
}

TEST(Batcher, CoversTheDatasetWithAPartialLastBatch) {
  Batcher batcher(train_sample(), {.batch_size = 300});
  EXPECT_EQ(batcher.batches_per_epoch(), 17);  // 16 x 300 + 200
  Batch b;
  int64_t seen = 0, count = 0;
  while (batcher.next(b)) {
    EXPECT_EQ(b.index, count++);
    EXPECT_EQ(b.images->shape()[0], b.size);
    EXPECT_EQ(b.labels->numel(), b.size);
    for (int64_t r = 0; r < b.size; ++r) {
      ASSERT_EQ(b.indices[r], seen + r);  // no shuffle: dataset order
      ASSERT_EQ(b.labels->data<int32_t>()[r], train_sample().labels.data<int32_t>()[seen + r]);
    }
    seen += b.size;
  }
  EXPECT_EQ(seen, 5000);
  EXPECT_EQ(b.size, 200);
  // Without augmentation the images are the dataset's.
  batcher.start_epoch(0, 16);
  ASSERT_TRUE(batcher.next(b));
  EXPECT_EQ(std::memcmp(b.images->raw(), train_sample().images.data<float>() + 4800 * 784,
                        200 * 784 * sizeof(float)),
            0);
  Batcher dropping(train_sample(), {.batch_size = 300, .drop_last = true});
  EXPECT_EQ(dropping.batches_per_epoch(), 16);
}

TEST(Batcher, ShufflesDeterministicallyPerEpoch) {
  const BatchOptions o{.batch_size = 100, .seed = 5, .shuffle = true, .max_shift = 2};
  Batcher a(train_sample(), o), b(train_sample(), o);
  const std::vector<int64_t> e0 = a.epoch_order(0), e1 = a.epoch_order(1);
  EXPECT_EQ(e0, b.epoch_order(0));
  EXPECT_NE(e0, e1);
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], int64_t(i));  // a permutation
  Batcher other_seed(train_sample(), {.batch_size = 100, .seed = 6, .shuffle = true});
  EXPECT_NE(other_seed.epoch_order(0), e0);
  // The batches follow the order.
  a.start_epoch(1);
  Batch batch;
  ASSERT_TRUE(a.next(batch));
  EXPECT_TRUE(std::equal(batch.indices, batch.indices + 100, e1.begin()));
}

TEST(Batcher, AugmentedImagesAreShiftedOriginals) {
  Batcher batcher(train_sample(), {.batch_size = 64, .seed = 11, .shuffle = true, .max_shift = 2});
  batcher.start_epoch(3);
  Batch b;
  ASSERT_TRUE(batcher.next(b));
  std::set<std::pair<int, int>> shifts;
  for (int64_t r = 0; r < b.size; ++r) {
    const int64_t index = b.indices[r];
    const auto [dx, dy] = batcher.shift_of(3, index);
    ASSERT_LE(std::abs(dx), 2);
    ASSERT_LE(std::abs(dy), 2);
    shifts.insert({dx, dy});
    const float* original = train_sample().images.data<float>() + index * 784;
    const std::vector<float> row(b.images->data<float>() + r * 784,
                                 b.images->data<float>() + (r + 1) * 784);
    ASSERT_EQ(row, shifted_by_definition(original, dx, dy)) << "row " << r;
    ASSERT_EQ(b.labels->data<int32_t>()[r], train_sample().labels.data<int32_t>()[index]);
  }
  EXPECT_GT(shifts.size(), 15u);  // of the 25 possible, most appear in 64 draws
  for (int64_t i = 0; i < 5000; ++i) {
    const auto [dx, dy] = batcher.shift_of(3, i);
    shifts.insert({dx, dy});
  }
  EXPECT_EQ(shifts.size(), 25u);
  EXPECT_NE(batcher.shift_of(3, 0), batcher.shift_of(4, 0)) << "one coincidence is possible, "
                                                               "but with this seed they differ";
}

TEST(Batcher, ResumingAtBatchIReproducesTheRun) {
  const BatchOptions o{.batch_size = 128, .seed = 3, .shuffle = true, .max_shift = 2};
  Batcher full(train_sample(), o), resumed(train_sample(), o);
  full.start_epoch(2);
  Batch b;
  std::vector<std::vector<float>> images;
  while (full.next(b)) images.push_back(rows_of(b));
  resumed.start_epoch(2, 30);
  for (size_t i = 30; i < images.size(); ++i) {
    ASSERT_TRUE(resumed.next(b));
    EXPECT_EQ(b.index, int64_t(i));
    ASSERT_EQ(rows_of(b), images[i]) << "batch " << i;
  }
  EXPECT_FALSE(resumed.next(b));
  expect_error([&] { resumed.start_epoch(2, 41); }, {"batch 41 is outside the epoch's 40 batches"});
}

TEST(Batcher, ReusesItsBuffers) {
  Batcher batcher(train_sample(), {.batch_size = 1000, .seed = 1, .shuffle = true, .max_shift = 2});
  Batch b;
  ASSERT_TRUE(batcher.next(b));
  const void* images = b.images->raw();
  const void* labels = b.labels->raw();
  tenet::testing::Counter counter(tenet::testing::Threads::all);
  while (batcher.next(b)) {
    EXPECT_EQ(b.images->raw(), images);
    EXPECT_EQ(b.labels->raw(), labels);
  }
  batcher.start_epoch(1);
  EXPECT_TRUE(batcher.next(b));
  const tenet::testing::Allocations a = counter.stop();
  EXPECT_EQ(a.cxx, 0);
  EXPECT_EQ(a.c_other, 0);
}

TEST(Batcher, InvalidOptions) {
  expect_error([] { Batcher(train_sample(), {}); }, {"batch size must be positive, got 0"});
  expect_error([] { Batcher(train_sample(), {.batch_size = 10, .max_shift = 28}); },
               {"maximum shift must be in 0..27, got 28"});
  expect_error([] { Batcher(train_sample(), {.batch_size = 6000, .drop_last = true}); },
               {"5000 examples, fewer than one batch of 6000"});
  Batcher small(train_sample(), {.batch_size = 6000});  // one partial batch
  Batch b;
  ASSERT_TRUE(small.next(b));
  EXPECT_EQ(b.size, 5000);
  EXPECT_FALSE(small.next(b));
}

}  // namespace
}  // namespace tenet::train
