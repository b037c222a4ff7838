// Classifies MNIST digits with the binarised network that examples/import_bnn.py
// trained in PyTorch (through Tenet) and emitted with Program.emit: the emitted
// library's C API (bnn_train.h), no Python, no libtorch, no Tenet.
//
//   classify WEIGHTS IMAGES LABELS [BATCH]
//
// WEIGHTS is the emitted weights.safetensors (or a file `train --save` wrote);
// IMAGES and LABELS are IDX files, raw or gzipped (data/mnist-sample/t10k-*).
// Prints the first predictions, the accuracy and the time the forward passes took
// (after one untimed call that plans the workspace).
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bnn_train.h"

namespace {

/// The payload of an IDX file of unsigned bytes (gzip or raw: zlib reads both),
/// after checking its magic number (2051 images, 2049 labels); `dims` gets its sizes.
std::vector<uint8_t> read_idx(const std::string& path, uint32_t magic,
                              std::vector<uint32_t>& dims) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error(path + ": cannot open");
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  for (int got; (got = gzread(file, chunk, sizeof chunk)) > 0;)
    bytes.insert(bytes.end(), chunk, chunk + got);
  const bool failed = gzclose(file) != Z_OK;
  const auto word = [&](size_t at) {
    if (at + 4 > bytes.size()) throw std::runtime_error(path + ": truncated header");
    return uint32_t(bytes[at]) << 24 | uint32_t(bytes[at + 1]) << 16 |
           uint32_t(bytes[at + 2]) << 8 | uint32_t(bytes[at + 3]);
  };
  if (failed || word(0) != magic)
    throw std::runtime_error(path + ": not an IDX file of magic " + std::to_string(magic));
  size_t count = 1;
  dims.assign(magic & 0xFF, 0);
  for (size_t d = 0; d < dims.size(); ++d) count *= dims[d] = word(4 + 4 * d);
  const size_t header = 4 + 4 * dims.size();
  if (bytes.size() != header + count)
    throw std::runtime_error(path + ": " + std::to_string(bytes.size() - header) +
                             " bytes of data, not " + std::to_string(count));
  return std::vector<uint8_t>(bytes.begin() + long(header), bytes.end());
}

void check(int status) {
  if (status != 0) throw std::runtime_error(bnn_last_error());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s WEIGHTS IMAGES LABELS [BATCH]\n", argv[0]);
    return 2;
  }
  bnn_model* model = nullptr;
  try {
    std::vector<uint32_t> image_dims, label_dims;
    const std::vector<uint8_t> pixels = read_idx(argv[2], 2051, image_dims);
    const std::vector<uint8_t> labels = read_idx(argv[3], 2049, label_dims);
    if (image_dims[1] != 28 || image_dims[2] != 28 || label_dims[0] != image_dims[0])
      throw std::runtime_error("expected 28x28 images and one label per image");
    const int64_t n = image_dims[0], batch = argc == 5 ? std::stoll(argv[4]) : 100;
    if (batch < 1) throw std::runtime_error("BATCH must be positive");

    check(bnn_create(/*seed=*/0, &model));
    check(bnn_load(model, argv[1]));

    std::vector<float> images(size_t(batch) * 28 * 28), scores(size_t(batch) * 10);
    // The first call of a batch size plans and allocates the workspace: not timed.
    check(bnn_forward(model, images.data(), std::min(batch, n), scores.data()));
    int64_t correct = 0;
    double seconds = 0;
    for (int64_t first = 0; first < n; first += batch) {
      const int64_t size = std::min(batch, n - first);
      for (int64_t i = 0; i < size * 28 * 28; ++i)
        images[size_t(i)] = float(pixels[size_t(first * 28 * 28 + i)]) / 255.0f;
      const auto start = std::chrono::steady_clock::now();
      check(bnn_forward(model, images.data(), size, scores.data()));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (int64_t i = 0; i < size; ++i) {
        const float* row = scores.data() + i * 10;
        const int64_t predicted = std::max_element(row, row + 10) - row;  // ties: the lowest
        correct += predicted == labels[size_t(first + i)];
        if (first + i < 10)
          std::printf("digit %lld: %lld (label %d)\n", static_cast<long long>(first + i),
                      static_cast<long long>(predicted), int(labels[size_t(first + i)]));
      }
    }
    std::printf("accuracy %.2f%% (%lld/%lld)\n", 100.0 * double(correct) / double(n),
                static_cast<long long>(correct), static_cast<long long>(n));
    std::printf("forward %.1f ms for %lld digits in batches of %lld (%.0f digits/s)\n",
                1e3 * seconds, static_cast<long long>(n), static_cast<long long>(batch),
                double(n) / seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "classify: error: %s\n", e.what());
    bnn_destroy(model);
    return 1;
  }
  bnn_destroy(model);
  return 0;
}
