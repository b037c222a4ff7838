#include "jit/cache.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "jit/trust.h"
#include "support/child_processes.h"
#include "support/error.h"
#include "support/temp_files.h"

extern char** environ;

namespace tenet::jit::detail {

namespace fs = std::filesystem;

void Fnv1a::bytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h_ ^= p[i];
    h_ *= 0x100000001b3ull;
  }
}

void Fnv1a::add(const std::string& field) {
  uint64_t length = field.size();
  bytes(&length, sizeof length);
  bytes(field.data(), field.size());
}

std::string Fnv1a::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

std::string default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("TENET_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/tenet";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/tenet";
  return (fs::temp_directory_path() / ("tenet-cache-" + std::to_string(::getuid()))).string();
}

std::string resolve_compiler(const std::string& cxx, const std::string& origin) {
  std::string path = cxx;
  if (cxx.find('/') == std::string::npos) {
    // As posix_spawnp would: the first executable of that name in $PATH.
    path.clear();
    const char* env = std::getenv("PATH");
    std::stringstream dirs(env ? env : "/usr/bin:/bin");
    for (std::string dir; path.empty() && std::getline(dirs, dir, ':');) {
      const std::string candidate = (dir.empty() ? "." : dir) + "/" + cxx;
      if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) path = candidate;
    }
    if (path.empty())
      throw BindError("the C++ compiler '" + cxx + "' (" + origin +
                      ") is not found in PATH; set TENET_CXX to a C++17 compiler such as g++");
  }
  std::error_code ec;
  path = fs::absolute(path, ec).lexically_normal().string();
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0)
    throw BindError("the C++ compiler '" + cxx + "' (" + origin + ") " +
                    (fs::exists(path, ec) ? "is not an executable file" : "does not exist") +
                    "; set TENET_CXX to a C++17 compiler such as g++");
  if (std::string why = untrusted_reason(path, Owners::MeOrRoot); !why.empty())
    throw BindError("refusing to run the C++ compiler '" + cxx + "' (" + origin + "): " + why +
                    ", so another user could have changed what it runs. Use a compiler only "
                    "you or root can change");
  return path;
}

std::string compiler_version(const std::string& cxx, const std::string& origin) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(cxx);
  if (it != versions.end()) return it->second;
  ProcessResult r = run_process({cxx, "--version"});
  if (r.exit_code != 0)
    throw BindError("cannot run the C++ compiler '" + cxx + "' (" + origin + "): `--version` " +
                    (r.exit_code < 0 ? std::string("did not finish")
                                     : "exited with status " + std::to_string(r.exit_code)) +
                    (r.output.empty() ? "" : ":\n" + r.output) +
                    "\nset TENET_CXX to a C++17 compiler such as g++");
  return versions[cxx] = r.output;
}

std::string host_cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
  }
  return model + "\n" + flags;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_runtime_header(const std::string& name) {
  return name.size() > 8 && name.compare(0, 6, "tenet_") == 0 &&
         name.compare(name.size() - 2, 2, ".h") == 0;
}

std::string folder_contents(const std::string& dir, const std::string& variable) {
  auto require_trusted = [&](const std::string& path) {
    if (std::string why = untrusted_reason(path, Owners::MeOrRoot); !why.empty())
      throw BindError("refusing to compile the runtime headers in '" + dir + "' (" + variable +
                      "): " + why + ", so another user could change the code Tenet builds. " +
                      "Point " + variable + " to a folder only you or root can change");
  };
  require_trusted(dir);
  std::map<std::string, std::string> files;
  std::error_code ec;
  // Only the runtime's own headers: a folder such as /tmp named by mistake
  // holds other files of any size.
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && is_runtime_header(entry.path().filename().string())) {
      require_trusted(entry.path().string());
      files[entry.path().filename().string()] = read_text_file(entry.path().string());
    }
  if (ec)
    throw BindError("cannot read the runtime headers in '" + dir + "' (" + variable +
                    "): " + ec.message());
  std::string out;
  for (const auto& [name, text] : files) out += name + "\n" + text + "\n";
  return out;
}

std::string temporary_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return temporary_prefix(path) + std::to_string(counter++);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_name(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw BindError("cannot write '" + tmp + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw BindError("cannot create '" + path + "'");
  }
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& tmpdir) {
  ProcessResult result;
  // The environment, with TMPDIR replaced when one is given.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (tmpdir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0) env_strings.push_back(*e);
  if (!tmpdir.empty()) env_strings.push_back("TMPDIR=" + tmpdir);
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Its own process group (pgid = its pid), so that a fatal signal can end the
  // compiler with its children (cc1plus, as). The fatal signals stay blocked
  // in this thread until the group is registered; the child gets the old mask.
  sigset_t fatal, old_mask;
  sigemptyset(&fatal);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&fatal, sig);
  ::pthread_sigmask(SIG_BLOCK, &fatal, &old_mask);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &old_mask);
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), env.data());
  if (spawned == 0) register_child_group(pid);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    result.output = "cannot start '" + argv[0] + "': " + std::strerror(spawned);
    return result;
  }
  // Read until the program closes its output, running the interrupt check
  // (support/child_processes.h) every 100 ms; if it throws, the program's
  // group is killed before the exception goes on.
  try {
    char buf[4096];
    for (;;) {
      struct pollfd ready = {fds[0], POLLIN, 0};
      const int polled = ::poll(&ready, 1, 100);
      if (polled < 0 && errno != EINTR) break;
      if (polled <= 0) {
        check_interrupt();
        continue;
      }
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR)) break;
      if (n > 0) result.output.append(buf, size_t(n));
    }
  } catch (...) {
    ::killpg(pid, SIGKILL);
    ::close(fds[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    unregister_child_group(pid);
    throw;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_child_group(pid);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.killed_by = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return result;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out;
}

}  // namespace tenet::jit::detail

namespace tenet::jit {

namespace fs = std::filesystem;

std::string untrusted_cache_message(const std::string& what, const std::string& why) {
  return "refusing to load code from " + what + ": " + why +
         ", so another user could have put a library there that Tenet would run. "
         "Set TENET_CACHE_DIR to a folder only you can write (Tenet creates it with "
         "mode 0700), or remove the others' write permission (chmod go-w) or the "
         "foreign files";
}

namespace {

/// A hash of a file's bytes, recorded beside each artefact built.
std::string file_checksum(const std::string& path) {
  detail::Fnv1a hash;
  hash.add(detail::read_text_file(path));
  return hash.hex() + "\n";
}

}  // namespace

CacheEntry::CacheEntry(const std::string& cache_dir, const std::string& key) {
  const std::string root = cache_dir.empty() ? detail::default_cache_dir() : cache_dir;
  dir_ = root + "/" + key;
  detail::create_private_directories(root, "TENET_CACHE_DIR");
  if (std::string why = detail::untrusted_reason(root, detail::Owners::Me); !why.empty())
    throw BindError(untrusted_cache_message("the JIT cache folder", why));
  if (::mkdir(dir_.c_str(), 0700) == 0)
    ::chmod(dir_.c_str(), 0700);  // whatever the umask
  else if (errno != EEXIST)
    throw BindError("cannot create the JIT cache folder '" + dir_ + "' (" + std::strerror(errno) +
                    "); set TENET_CACHE_DIR to a writable folder");
  if (std::string why = detail::untrusted_entry_reason(dir_); !why.empty())
    throw BindError(untrusted_cache_message("the JIT cache entry", why));
}

bool CacheEntry::holds(const std::string& name, const std::vector<CacheFile>& sources,
                       bool verbose) const {
  const std::string artefact = path(name);
  if (std::string why = detail::untrusted_entry_reason(artefact); !why.empty())
    throw BindError(untrusted_cache_message("the JIT cache", why));
  std::error_code ec;
  if (!fs::exists(artefact, ec)) return false;
  // The sources beside it guard against a (very unlikely) hash collision,
  // its checksum against a file damaged since (truncated by a full disk:
  // dlopen would die of SIGBUS).
  for (const CacheFile& f : sources)
    if (detail::read_text_file(path(f.name)) != f.text) return false;
  if (detail::read_text_file(artefact + ".fnv1a") == file_checksum(artefact)) {
    if (verbose) std::cerr << "[tenet jit] cache hit: " << artefact << "\n";
    return true;
  }
  std::cerr << "warning: the cached library " << artefact
            << " is damaged (its checksum is not the one recorded when it was built); "
               "building it again\n";
  return false;
}

void CacheEntry::write_sources(const std::vector<CacheFile>& sources, const std::string& name,
                               const std::vector<std::string>& scratch) const {
  std::vector<std::string> names = {name, name + ".fnv1a"};
  for (const CacheFile& f : sources) names.push_back(f.name);
  names.insert(names.end(), scratch.begin(), scratch.end());
  for (const std::string& n : names) remove_stale_temporaries(path(n));
  try {
    for (const CacheFile& f : sources) detail::write_file_atomically(path(f.name), f.text);
  } catch (const BindError& e) {
    throw BindError(std::string(e.what()) + "; set TENET_CACHE_DIR to a writable folder");
  }
}

std::string CacheEntry::temporary(const std::string& name) const {
  return detail::temporary_name(path(name));
}

void CacheEntry::commit(const std::string& temporary, const std::string& name) const {
  detail::write_file_atomically(path(name) + ".fnv1a", file_checksum(temporary));
  std::error_code ec;
  fs::rename(temporary, path(name), ec);
  if (ec)
    throw BindError("cannot move the compiled library to '" + path(name) + "' (" + ec.message() +
                    "); set TENET_CACHE_DIR to a writable folder");
}

}  // namespace tenet::jit
