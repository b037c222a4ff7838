/// \file
/// The JIT's building blocks that do not know about IR: cache keys, cache
/// directories, atomic file writes and running the compiler.
///
/// Internal to codegen/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tenet::codegen::detail {

/// FNV-1a, 64 bits: a fast non-cryptographic hash. Collisions are caught by
/// comparing the cached source with the new one before a cached library is used.
class Fnv1a {
 public:
  /// Adds a field; fields are length-prefixed so that ("ab", "c") != ("a", "bc").
  void add(const std::string& field);
  uint64_t value() const { return h_; }
  std::string hex() const;

 private:
  void bytes(const void* data, size_t n);
  uint64_t h_ = 0xcbf29ce484222325ull;
};

/// $TENET_CACHE_DIR, $XDG_CACHE_HOME/tenet, ~/.cache/tenet, or a temp folder.
std::string default_cache_dir();

/// The compiler `cxx` (a path, or a name looked up in $PATH) as an absolute
/// path, once checked it is trustworthy (trust.h). `origin` says where the
/// name came from, for messages: "TENET_CXX". Throws BindError naming it when
/// the compiler is missing or could have been written by another user.
std::string resolve_compiler(const std::string& cxx, const std::string& origin);

/// `cxx --version`, run once per compiler per process. A compiler that does
/// not run is a BindError naming `origin`.
std::string compiler_version(const std::string& cxx, const std::string& origin = "TENET_CXX");

/// The CPU model and feature flags (from /proc/cpuinfo), for -march=native keys.
std::string host_cpu_identity();

/// Whether a file name is a runtime header's: tenet_<name>.h.
bool is_runtime_header(const std::string& name);

/// Every runtime header (is_runtime_header) of a folder, as "name\ncontents"
/// in name order. The folder and those files must be trustworthy (trust.h; a
/// BindError naming `variable`, which sets the folder, otherwise).
std::string folder_contents(const std::string& dir, const std::string& variable);

std::string read_text_file(const std::string& path);
/// `path` plus a suffix unique to this process and call, for files that are
/// renamed into place once complete (support/temp_files.h names them).
std::string temporary_name(const std::string& path);
/// Writes under a unique temporary name, then renames over `path`. Throws
/// BindError when the folder is not writable.
void write_file_atomically(const std::string& path, const std::string& text);

struct ProcessResult {
  int exit_code = -1;  // -1: it could not be started or was killed
  int killed_by = 0;   // the signal that killed it, if one did
  std::string output;  // stdout and stderr together
};
/// Runs a program (no shell) and collects its output. The program leads a
/// process group of its own, registered while it runs so that a fatal signal
/// ends it and its children with Tenet (support/child_processes.h). A
/// non-empty `tmpdir` is its TMPDIR (where a compiler puts its temporaries).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& tmpdir = "");

/// argv as a shell would need it typed (for messages and logs).
std::string command_line(const std::vector<std::string>& argv);

}  // namespace tenet::codegen::detail
