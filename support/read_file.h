/// \file
/// Reading a whole file that a user named (a source, a .npy input, an IDX
/// file, a checkpoint) without trusting what the path is: only a regular
/// file is read. A character device (/dev/zero, /dev/urandom) never ends and
/// a FIFO or socket may block forever or never end, so reading one until its
/// end exhausted memory; a directory reads as an empty file. Each is refused
/// with a reason the caller puts into its own error naming the file. Part of
/// the runtime standalone projects copy: standard library and POSIX only.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace tenet {

/// What a file that is not regular is, from its stat mode: "a directory", "a
/// FIFO", "a symbolic link" (from lstat), "a character device", ...
std::string file_kind(mode_t mode);

/// The bytes of the regular file at `path` (symbolic links followed), or
/// nullopt with `why` set: "No such file or directory" (strerror's words),
/// "it is a directory", "it is a character device, not a regular file", ...,
/// "read error: ...". Opening does not block on a FIFO.
std::optional<std::string> read_regular_file(const std::string& path, std::string& why);

}  // namespace tenet
