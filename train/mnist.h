/// \file
/// MNIST: the IDX file reader, the dataset in memory, and the batcher that
/// shuffles and augments it (shifts of up to 2 pixels with zero padding, as in
/// the CapsNet paper).
///
/// IDX files are read raw or gzip-compressed, told apart by their first bytes
/// (the gzip magic 1f 8b), never by the file name. Reading validates the magic
/// number (2051 for images: unsigned bytes, 3 dimensions; 2049 for labels: 1
/// dimension), the dimensions (28 x 28), the file length against the header
/// (truncated or trailing bytes), labels in 0..9, and that images and labels
/// have the same count. Every failure is a BindError naming the file and what
/// is wrong.
///
/// Batches are deterministic functions of (seed, epoch, batch index): the
/// order of epoch e is a permutation drawn from hash_key(seed, e), and the
/// shift of an image from (seed, e, the image's index in the dataset), so a
/// run resumed at batch i of epoch e sees the same batches as an uninterrupted
/// one, whatever the batch size history.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/tensor.h"

namespace tenet::train {

inline constexpr int64_t kMnistRows = 28;
inline constexpr int64_t kMnistCols = 28;
inline constexpr int64_t kMnistClasses = 10;

struct MnistDataset {
  Tensor images;  // float32 [N, 1, 28, 28], pixel / 255 in [0, 1]
  Tensor labels;  // int32 [N], 0..9
  int64_t size() const { return labels.numel(); }
};

/// A hash of the dataset's images and labels (16 hex digits): ranks of a
/// data-parallel run compare theirs at start.
std::string dataset_digest(const MnistDataset& data);

/// An IDX file's contents after validation: raw pixels (uint8 [N, 28, 28]) or
/// labels (uint8 [N]).
Tensor read_idx_images(const std::string& path);
Tensor read_idx_labels(const std::string& path);
/// The same, from a file's bytes (raw or gzip); `path` names it in errors.
Tensor parse_idx_images(std::string_view bytes, const std::string& path);
Tensor parse_idx_labels(std::string_view bytes, const std::string& path);

/// Loads an image file and a label file; `limit` > 0 keeps only the first
/// `limit` examples.
MnistDataset load_mnist(const std::string& images_path, const std::string& labels_path,
                        int64_t limit = 0);

enum class MnistSplit { Train, Test };

/// Loads DIR/train-images-idx3-ubyte[.gz] and DIR/train-labels-idx1-ubyte[.gz]
/// (or t10k-* for Test); the uncompressed name is preferred when both exist.
/// A BindError lists the names tried when the files are missing.
MnistDataset load_mnist_dir(const std::string& dir, MnistSplit split, int64_t limit = 0);

/// Copies a rows x cols image moved by (dx, dy) pixels (right and down are
/// positive) into dst, filling uncovered pixels with zero: dst(y, x) =
/// src(y - dy, x - dx), or 0 outside. src and dst must not overlap.
void shift_image(const float* src, float* dst, int64_t rows, int64_t cols, int dx, int dy);

struct BatchOptions {
  int64_t batch_size = 0;  // required, > 0
  uint64_t seed = 0;
  bool shuffle = false;    // a new permutation each epoch (training)
  int max_shift = 0;       // per-image random shift in [-max_shift, max_shift] (2 for training)
  bool drop_last = false;  // skip the final partial batch
};

/// One batch: views of the batcher's buffers, valid until the next call to
/// next() or start_epoch(). A final partial batch has its own (smaller)
/// buffers, so `images` always has exactly `size` rows.
struct Batch {
  const Tensor* images = nullptr;    // float32 [size, 1, 28, 28]
  const Tensor* labels = nullptr;    // int32 [size]
  const int64_t* indices = nullptr;  // dataset index of each row
  int64_t size = 0;
  int64_t epoch = 0;
  int64_t index = 0;  // batch number within the epoch
};

class Batcher {
 public:
  /// Shares the dataset's storage (Tensor copies alias). A BindError for a
  /// batch size <= 0, a max_shift outside 0..27, an empty dataset, or no
  /// batch at all (drop_last with fewer examples than the batch size).
  Batcher(const MnistDataset& data, const BatchOptions& options);

  int64_t batches_per_epoch() const;
  const BatchOptions& options() const { return options_; }

  /// Positions the batcher at batch `first_batch` of `epoch` (0-based);
  /// a BindError when first_batch > batches_per_epoch().
  void start_epoch(int64_t epoch, int64_t first_batch = 0);
  /// Fills the next batch of the current epoch; false at the end of it.
  /// Allocates nothing.
  bool next(Batch& batch);

  /// The dataset index order of an epoch (the identity without shuffle).
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  /// The shift applied to dataset image `index` in `epoch`; (0, 0) without augmentation.
  std::pair<int, int> shift_of(int64_t epoch, int64_t index) const;

 private:
  void fill(int64_t first, int64_t count, Tensor& images, Tensor& labels);

  MnistDataset data_;
  BatchOptions options_;
  int64_t epoch_ = 0;
  int64_t next_batch_ = 0;
  std::vector<int64_t> order_;
  Tensor full_images_, full_labels_;  // [batch_size, ...]
  Tensor tail_images_, tail_labels_;  // [N % batch_size, ...] when not empty
};

}  // namespace tenet::train
