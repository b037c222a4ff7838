/// \file
/// The safetensors format (https://github.com/huggingface/safetensors), so
/// that PyTorch (safetensors.torch.load_file) reads what Tenet writes and
/// Tenet reads what PyTorch writes.
///
/// Layout: 8 bytes, a little-endian uint64 N; N bytes of UTF-8 JSON, an object
/// mapping each tensor name to {"dtype": "F32", "shape": [2, 3],
/// "data_offsets": [BEGIN, END]} plus an optional "__metadata__" object of
/// string values, padded with trailing spaces; then the data buffer, every
/// tensor's bytes little-endian and row-major at [BEGIN, END) relative to the
/// buffer's start. Supported dtypes: BOOL U8 I8 I16 I32 I64 F32 F64.
///
/// Writing: tensors in the given order, packed without gaps; the header padded
/// so the data starts at a multiple of 8 bytes; atomically (a temporary file
/// in the same directory, fsync, rename, fsync of the directory), so a reader
/// sees the old file or the complete new one.
/// Reading validates everything and throws a BindError naming the file and
/// what is wrong: header length vs file size, JSON syntax, the header's
/// structure (known keys, types, duplicate names), dtypes, shapes, offsets in
/// range, byte counts matching dtype x shape, tensors covering the buffer
/// without overlaps or holes, and sizes: a header of at most 100 MB (as the
/// reference reader), 4 million JSON values (train/json.h) and
/// kMaxSafetensorsTensors tensors. Time is O(n log n) in the header's size.
/// Tensors come back in the order of their data.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "train/named_tensors.h"

namespace tenet::train {

using Metadata = std::map<std::string, std::string>;

/// The most tensors a file read may describe (real checkpoints hold
/// thousands at most); more is refused before anything is copied.
inline constexpr size_t kMaxSafetensorsTensors = 250'000;

struct SafetensorsFile {
  NamedTensors tensors;
  Metadata metadata;
};

/// A name from a file as error messages show it: control characters, NUL
/// and DEL as \xNN (a NUL cut the message short; a newline or a terminal
/// escape would forge output), the rest as is.
std::string printable(std::string_view text);

/// Throws BindError for duplicate or empty names (or "__metadata__") and for
/// I/O failures (naming the path). Every ElemType has a safetensors dtype.
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const Metadata& metadata = {});
SafetensorsFile read_safetensors(const std::string& path);

/// The same, in memory; `name` stands for the file in error messages.
std::string to_safetensors(const NamedTensors& tensors, const Metadata& metadata = {});
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& name);

/// Writes bytes to path atomically (temporary file in the same directory,
/// fsync, rename). BindError naming the path on failure; no temporary is left.
/// Only a regular file is replaced: a path that names a symbolic link, FIFO,
/// device, socket or directory is refused (BindError "will not write over").
/// Temporaries of `path` that processes killed mid-write left behind are
/// removed first (support/temp_files.h).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace tenet::train
