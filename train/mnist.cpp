#include "train/mnist.h"

#ifndef TENET_NO_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.h"
#include "support/read_file.h"
#include "train/rng.h"

namespace tenet::train {
namespace {

constexpr uint32_t kImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension
// Far above the 47 MB of the full training images: a guard against gzip bombs.
constexpr size_t kMaxDecompressedBytes = size_t(1) << 30;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw BindError(path + ": " + what);
}

std::string read_bytes(const std::string& path) {
  std::string why;  // only a regular file: /dev/zero would be read without end
  std::optional<std::string> bytes = read_regular_file(path, why);
  if (!bytes) fail(path, "cannot open: " + why);
  return std::move(*bytes);
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

#ifndef TENET_NO_ZLIB
// Inflates every gzip member in `bytes` (gzip files may be concatenations).
std::string gunzip(std::string_view bytes, const std::string& path) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(path, "zlib initialisation failed");
  std::string out;
  char chunk[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  int rc = Z_OK;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > kMaxDecompressedBytes) break;
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      if (inflateReset(&z) != Z_OK) break;  // another member follows
      continue;
    }
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) break;
  }
  const std::string message = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (out.size() > kMaxDecompressedBytes) fail(path, "gzip data decompresses to more than 1 GiB");
  if (rc == Z_STREAM_END) return out;
  if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
    fail(path, "corrupt gzip data (" + (message.empty() ? "bad stream" : message) + ")");
  if (rc == Z_MEM_ERROR) fail(path, "out of memory decompressing");
  fail(path, "truncated gzip data (the compressed stream ends early)");
}
#else
// Built without zlib (a standalone project where CMake found none).
std::string gunzip(std::string_view, const std::string& path) {
  fail(path,
       "gzip-compressed, but this program was built without zlib: decompress it first "
       "(gunzip) or rebuild with zlib");
}
#endif

uint32_t big_endian_u32(std::string_view bytes, size_t at) {
  const auto b = [&](size_t i) { return uint32_t(uint8_t(bytes[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::string magic_hint(uint32_t magic) {
  if (magic == kImagesMagic) return " (this is an image file)";
  if (magic == kLabelsMagic) return " (this is a label file)";
  return "";
}

// Validates the magic and the header; returns the dimensions.
std::vector<uint32_t> idx_header(std::string_view bytes, const std::string& path,
                                 uint32_t expected_magic, const char* what) {
  if (bytes.size() < 4)
    fail(path, "only " + std::to_string(bytes.size()) + " bytes, too short for an IDX header");
  const uint32_t magic = big_endian_u32(bytes, 0);
  if (magic != expected_magic)
    fail(path, "magic number " + std::to_string(magic) + ", expected " +
                   std::to_string(expected_magic) + " for IDX " + what + magic_hint(magic));
  const size_t dims = expected_magic & 0xff;
  if (bytes.size() < 4 + 4 * dims)
    fail(path, "truncated IDX header (" + std::to_string(bytes.size()) + " bytes, needs " +
                   std::to_string(4 + 4 * dims) + ")");
  std::vector<uint32_t> shape;
  for (size_t d = 0; d < dims; ++d) shape.push_back(big_endian_u32(bytes, 4 + 4 * d));
  return shape;
}

void check_length(std::string_view bytes, const std::string& path, size_t header, uint64_t count,
                  uint64_t item_bytes, const char* items) {
  const uint64_t expected = header + count * item_bytes;
  if (bytes.size() < expected)
    fail(path, "truncated: the header announces " + std::to_string(count) + " " + items + " (" +
                   std::to_string(expected) + " bytes) but the data has " +
                   std::to_string(bytes.size()) + " bytes");
  if (bytes.size() > expected)
    fail(path, std::to_string(bytes.size() - expected) + " unexpected bytes after the " +
                   std::to_string(count) + " " + items + " the header announces");
}

std::string find_file(const std::string& dir, const std::string& base, const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path raw = fs::path(dir) / base;
  const fs::path gz = fs::path(dir) / (base + ".gz");
  if (fs::exists(raw)) return raw.string();
  if (fs::exists(gz)) return gz.string();
  throw BindError("no MNIST " + what + " in '" + dir + "': tried " + raw.string() + " and " +
                  gz.string() + " (scripts/download-mnist.sh downloads them)");
}

// Fills `order` (sized to the dataset) with the epoch's permutation: the
// identity, shuffled (Fisher-Yates) by a generator keyed by seed and epoch.
void order_of_epoch(std::vector<int64_t>& order, const BatchOptions& options, int64_t epoch) {
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  if (!options.shuffle) return;
  Rng rng(hash_key(hash_key(options.seed, "shuffle"), uint64_t(epoch)));
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
}

}  // namespace

Tensor parse_idx_images(std::string_view file, const std::string& path) {
  const std::string inflated = is_gzip(file) ? gunzip(file, path) : std::string();
  const std::string_view bytes = is_gzip(file) ? std::string_view(inflated) : file;
  const std::vector<uint32_t> dims = idx_header(bytes, path, kImagesMagic, "images");
  if (dims[1] != kMnistRows || dims[2] != kMnistCols)
    fail(path, "images are " + std::to_string(dims[1]) + "x" + std::to_string(dims[2]) +
                   ", expected " + std::to_string(kMnistRows) + "x" + std::to_string(kMnistCols));
  check_length(bytes, path, 16, dims[0], kMnistRows * kMnistCols, "images");
  Tensor t(ElemType::U8, {int64_t(dims[0]), kMnistRows, kMnistCols});
  std::memcpy(t.raw(), bytes.data() + 16, t.nbytes());
  return t;
}

Tensor parse_idx_labels(std::string_view file, const std::string& path) {
  const std::string inflated = is_gzip(file) ? gunzip(file, path) : std::string();
  const std::string_view bytes = is_gzip(file) ? std::string_view(inflated) : file;
  const std::vector<uint32_t> dims = idx_header(bytes, path, kLabelsMagic, "labels");
  check_length(bytes, path, 8, dims[0], 1, "labels");
  Tensor t(ElemType::U8, {int64_t(dims[0])});
  std::memcpy(t.raw(), bytes.data() + 8, t.nbytes());
  const uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] >= kMnistClasses)
      fail(path, "label " + std::to_string(p[i]) + " at index " + std::to_string(i) +
                     " is not a digit 0-9");
  return t;
}

Tensor read_idx_images(const std::string& path) {
  return parse_idx_images(read_bytes(path), path);
}

Tensor read_idx_labels(const std::string& path) {
  return parse_idx_labels(read_bytes(path), path);
}

MnistDataset load_mnist(const std::string& images_path, const std::string& labels_path,
                        int64_t limit) {
  const Tensor pixels = read_idx_images(images_path);
  const Tensor digits = read_idx_labels(labels_path);
  if (pixels.shape()[0] != digits.shape()[0])
    throw BindError(images_path + " holds " + std::to_string(pixels.shape()[0]) + " images but " +
                    labels_path + " holds " + std::to_string(digits.shape()[0]) + " labels");
  const int64_t n = limit > 0 ? std::min(limit, digits.numel()) : digits.numel();
  MnistDataset data{Tensor(ElemType::F32, {n, 1, kMnistRows, kMnistCols}),
                    Tensor(ElemType::I32, {n})};
  const uint8_t* src = pixels.data<uint8_t>();
  float* dst = data.images.data<float>();
  for (int64_t i = 0; i < data.images.numel(); ++i) dst[i] = float(src[i]) / 255.0f;
  for (int64_t i = 0; i < n; ++i) data.labels.data<int32_t>()[i] = digits.data<uint8_t>()[i];
  return data;
}

MnistDataset load_mnist_dir(const std::string& dir, MnistSplit split, int64_t limit) {
  const bool train = split == MnistSplit::Train;
  const std::string prefix = train ? "train" : "t10k";
  const std::string what = train ? "training" : "test";
  const std::string images = find_file(dir, prefix + "-images-idx3-ubyte", what + " images");
  const std::string labels = find_file(dir, prefix + "-labels-idx1-ubyte", what + " labels");
  return load_mnist(images, labels, limit);
}

void shift_image(const float* src, float* dst, int64_t rows, int64_t cols, int dx, int dy) {
  // Source columns that land inside the image: x - dx in [0, cols) for x in [0, cols).
  const int64_t x0 = std::clamp<int64_t>(dx, 0, cols), x1 = std::clamp<int64_t>(cols + dx, 0, cols);
  for (int64_t y = 0; y < rows; ++y) {
    float* out = dst + y * cols;
    const int64_t sy = y - dy;
    if (sy < 0 || sy >= rows || x0 >= x1) {
      std::fill_n(out, cols, 0.0f);
      continue;
    }
    std::fill(out, out + x0, 0.0f);
    std::memcpy(out + x0, src + sy * cols + (x0 - dx), size_t(x1 - x0) * sizeof(float));
    std::fill(out + x1, out + cols, 0.0f);
  }
}

// ---- Batcher -------------------------------------------------------------

Batcher::Batcher(const MnistDataset& data, const BatchOptions& options)
    : data_(data), options_(options) {
  if (options.batch_size <= 0)
    throw BindError("batch size must be positive, got " + std::to_string(options.batch_size));
  if (options.max_shift < 0 || options.max_shift >= kMnistRows)
    throw BindError("maximum shift must be in 0..27, got " + std::to_string(options.max_shift));
  if (data.size() == 0) throw BindError("the dataset is empty");
  if (batches_per_epoch() == 0)
    throw BindError("the dataset has " + std::to_string(data.size()) +
                    " examples, fewer than one batch of " + std::to_string(options.batch_size) +
                    " (and the partial batch is dropped)");
  order_.resize(size_t(data.size()));
  const int64_t full = std::min(options.batch_size, data.size());
  full_images_ = Tensor(ElemType::F32, {full, 1, kMnistRows, kMnistCols});
  full_labels_ = Tensor(ElemType::I32, {full});
  const int64_t tail = data.size() % options.batch_size;
  if (tail != 0 && !options.drop_last && data.size() > options.batch_size) {
    tail_images_ = Tensor(ElemType::F32, {tail, 1, kMnistRows, kMnistCols});
    tail_labels_ = Tensor(ElemType::I32, {tail});
  }
  start_epoch(0);
}

int64_t Batcher::batches_per_epoch() const {
  const int64_t n = data_.size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> Batcher::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order(size_t(data_.size()));
  order_of_epoch(order, options_, epoch);
  return order;
}

std::pair<int, int> Batcher::shift_of(int64_t epoch, int64_t index) const {
  if (options_.max_shift == 0) return {0, 0};
  const uint64_t span = uint64_t(2 * options_.max_shift + 1);
  const uint64_t h =
      hash_key(hash_key(hash_key(options_.seed, "shift"), uint64_t(epoch)), uint64_t(index));
  return {int(h % span) - options_.max_shift, int((h / span) % span) - options_.max_shift};
}

void Batcher::start_epoch(int64_t epoch, int64_t first_batch) {
  if (epoch < 0) throw BindError("epoch must be >= 0, got " + std::to_string(epoch));
  if (first_batch < 0 || first_batch > batches_per_epoch())
    throw BindError("batch " + std::to_string(first_batch) + " is outside the epoch's " +
                    std::to_string(batches_per_epoch()) + " batches");
  epoch_ = epoch;
  next_batch_ = first_batch;
  order_of_epoch(order_, options_, epoch);
}

bool Batcher::next(Batch& batch) {
  if (next_batch_ >= batches_per_epoch()) return false;
  const int64_t first = next_batch_ * options_.batch_size;
  const int64_t count = std::min(options_.batch_size, data_.size() - first);
  const bool full = count == full_labels_.numel();
  Tensor& images = full ? full_images_ : tail_images_;
  Tensor& labels = full ? full_labels_ : tail_labels_;
  fill(first, count, images, labels);
  batch = Batch{&images, &labels, order_.data() + first, count, epoch_, next_batch_};
  ++next_batch_;
  return true;
}

void Batcher::fill(int64_t first, int64_t count, Tensor& images, Tensor& labels) {
  constexpr int64_t pixels = kMnistRows * kMnistCols;
  const float* src = data_.images.data<float>();
  float* dst = images.data<float>();
  for (int64_t r = 0; r < count; ++r) {
    const int64_t index = order_[size_t(first + r)];
    labels.data<int32_t>()[r] = data_.labels.data<int32_t>()[index];
    const auto [dx, dy] = shift_of(epoch_, index);
    shift_image(src + index * pixels, dst + r * pixels, kMnistRows, kMnistCols, dx, dy);
  }
}

std::string dataset_digest(const MnistDataset& data) {
  uint64_t h = hash_key(0, uint64_t(data.size()));
  for (const Tensor* t : {&data.images, &data.labels}) {
    const auto* bytes = static_cast<const unsigned char*>(t->raw());
    const size_t n = t->nbytes();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      h = hash_key(h, word);
    }
    for (; i < n; ++i) h = hash_key(h, uint64_t(bytes[i]));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace tenet::train
