/// \file
/// The build cache every target's compiler shares (CacheEntry), and the
/// building blocks of the host JIT that do not know about IR (jit::detail:
/// cache keys, atomic file writes, running the compiler).
///
/// The cache rules, the same for every target (docs/security.md):
///   - one folder per key, <cache_dir>/<key>/, where the key hashes
///     everything the artefact depends on (the printed source, the runtime
///     headers, the compiler, its version and flags, the machine when the
///     code is tuned for it);
///   - the cache folder and each entry are created with mode 0700 and
///     checked (jit/trust.h) before anything in them is read or loaded: a
///     BindError says which folder another user could have written, and to
///     set TENET_CACHE_DIR;
///   - an artefact (a shared library, a device module) appears only
///     complete: built under a temporary name, its checksum recorded beside
///     it, then renamed into place, so concurrent processes share the cache;
///   - it is used only when the sources beside it equal the new ones (a hash
///     collision otherwise) and its checksum is still the recorded one; a
///     damaged artefact is built again, with a warning on stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tenet::jit {

/// A file of the cache: its name in the entry, and its text.
struct CacheFile {
  std::string name;
  std::string text;
};

/// One entry of the build cache.
class CacheEntry {
 public:
  /// The entry of `key` (a detail::Fnv1a hex, say) in `cache_dir` (empty:
  /// detail::default_cache_dir()), created and checked as above.
  CacheEntry(const std::string& cache_dir, const std::string& key);

  const std::string& dir() const { return dir_; }
  /// The path of the file `name` in the entry.
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// Whether the artefact `name` is there, built from `sources` and
  /// unchanged since (a damaged one: a warning, false). A BindError when
  /// another user could have written it.
  bool holds(const std::string& name, const std::vector<CacheFile>& sources, bool verbose) const;
  /// Removes what killed builds left of `sources`, of the artefact `name`
  /// and of `scratch` (support/temp_files.h), then writes `sources` (each
  /// renamed into place complete). A BindError naming TENET_CACHE_DIR when
  /// the entry is not writable.
  void write_sources(const std::vector<CacheFile>& sources, const std::string& name,
                     const std::vector<std::string>& scratch) const;
  /// A temporary path in the entry to build the artefact `name` under.
  std::string temporary(const std::string& name) const;
  /// Records the checksum of the artefact built at `temporary` and renames
  /// it to `name`. A BindError when it cannot.
  void commit(const std::string& temporary, const std::string& name) const;

 private:
  std::string dir_;
};

/// The BindError refusing `what` (a cache folder or file) because of `why`
/// (jit/trust.h), with what to do about it.
std::string untrusted_cache_message(const std::string& what, const std::string& why);

}  // namespace tenet::jit

namespace tenet::jit::detail {

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

}  // namespace tenet::jit::detail
