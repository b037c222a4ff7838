/// \file
/// The properties the fuzz targets check, one function per reader of untrusted
/// input. The libFuzzer harnesses (fuzz_<target>.cpp) call them on generated
/// inputs; the test suites call them on the inputs kept in
/// tests/fuzz/regressions/<target>/ (replay.h).
///
/// Given arbitrary bytes, a reader may return a value or throw a user error
/// (BindError, CompileError): both are accepted. A value must also survive a
/// round trip through the matching writer. Anything else — an InternalError,
/// another exception, a round trip that changes the value — escapes as an
/// exception (PropertyViolation for the round trips); crashes and sanitizer
/// reports are caught by the instrumentation.
///
/// Header-only, so a suite links just the reader it replays.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "support/npy.h"
#include "support/tensor.h"
#include "train/mnist.h"
#include "train/safetensors.h"

namespace tenet::fuzz {

class PropertyViolation : public std::logic_error {
 public:
  explicit PropertyViolation(const std::string& what) : std::logic_error(what) {}
};

inline void require(bool condition, const std::string& what) {
  if (!condition) throw PropertyViolation(what);
}

/// Runs `body`; user errors are an accepted outcome.
template <typename Body>
void value_or_user_error(Body&& body) {
  try {
    body();
  } catch (const CompileError&) {
  } catch (const BindError&) {
  }
}

inline bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

/// A .npy file reads or is a BindError; what reads writes back to the same tensor.
inline void check_npy(std::string_view bytes) {
  value_or_user_error([&] {
    const Tensor t = parse_npy(bytes, "f.npy");
    const Tensor again = parse_npy(to_npy(t), "written.npy");
    require(same_tensor(t, again), "to_npy . parse_npy changes " + t.describe());
  });
}

/// A safetensors file reads or is a BindError; what reads writes back to the
/// same tensors, in the same order, with the same metadata.
inline void check_safetensors(std::string_view bytes) {
  value_or_user_error([&] {
    const train::SafetensorsFile file = train::parse_safetensors(bytes, "f.safetensors");
    const train::SafetensorsFile again = train::parse_safetensors(
        train::to_safetensors(file.tensors, file.metadata), "written.safetensors");
    require(again.metadata == file.metadata, "metadata changes on a round trip");
    require(again.tensors.size() == file.tensors.size(), "tensor count changes on a round trip");
    for (size_t i = 0; i < file.tensors.size(); ++i)
      require(again.tensors[i].name == file.tensors[i].name &&
                  same_tensor(again.tensors[i].tensor, file.tensors[i].tensor),
              "tensor '" + file.tensors[i].name + "' changes on a round trip");
  });
}

/// The first byte picks the IDX reader (even: images, odd: labels), the rest
/// is the file, raw or gzipped. It reads, in the announced shape, or is a BindError.
inline void check_idx(std::string_view input) {
  if (input.empty()) return;
  const std::string_view file = input.substr(1);
  value_or_user_error([&] {
    if (input[0] & 1) {
      const Tensor labels = train::parse_idx_labels(file, "labels-idx1-ubyte");
      require(labels.rank() == 1, "labels are not a vector");
    } else {
      const Tensor images = train::parse_idx_images(file, "images-idx3-ubyte");
      require(images.rank() == 3 && images.shape()[1] == train::kMnistRows &&
                  images.shape()[2] == train::kMnistCols,
              "images are not N x 28 x 28");
    }
  });
}

/// IR text parses into a verified module or is a CompileError; what parses
/// prints to text that parses back and prints the same (docs/ir.md).
inline void check_ir(std::string_view text) {
  value_or_user_error([&] {
    const std::string printed = ir::print(ir::parse_ir(SourceFile("fuzz.ir", std::string(text))));
    std::string reprinted;
    try {
      reprinted = ir::print(ir::parse_ir(SourceFile("printed.ir", printed)));
    } catch (const CompileError& e) {
      throw PropertyViolation("printed IR does not parse:\n" + printed + "\n" + e.what());
    }
    require(reprinted == printed,
            "print is not a fixed point:\n" + printed + "\n---\n" + reprinted);
  });
}

}  // namespace tenet::fuzz
