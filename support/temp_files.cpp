#include "support/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tenet {

namespace fs = std::filesystem;

namespace {

/// The host name with '.' and '/' replaced, so it stays one field of a file name.
std::string host_field() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host = name;
  for (char& c : host)
    if (c == '.' || c == '/') c = '_';
  return host;
}

}  // namespace

std::string temporary_prefix(const std::string& path) {
  static const std::string host = host_field();
  return path + ".tmp." + host + "." + std::to_string(::getpid()) + ".";
}

bool process_is_running(long pid) {
  if (pid <= 0) return false;
  if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  // A zombie (killed, not yet reaped by its parent) has stopped writing.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'Z';
}

int remove_stale_temporaries(const std::string& path) {
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  // Our own prefix without the pid: "<name>.tmp.<host>."
  std::string mine = fs::path(temporary_prefix(path)).filename().string();
  mine.pop_back();
  const std::string same_host = mine.substr(0, mine.rfind('.') + 1);
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, same_host.size(), same_host) != 0) continue;
    const std::string rest = name.substr(same_host.size());  // "<pid>.<unique>"
    char* after = nullptr;
    const long pid = std::strtol(rest.c_str(), &after, 10);
    if (after == rest.c_str() || *after != '.' || process_is_running(pid)) continue;
    std::error_code remove_ec;
    const fs::file_status status = it->symlink_status();
    if (fs::is_regular_file(status) && fs::remove(it->path(), remove_ec)) ++removed;
    // A folder of temporaries (a compiler's TMPDIR); remove_all follows no link.
    if (fs::is_directory(status) && fs::remove_all(it->path(), remove_ec) > 0) ++removed;
  }
  return removed;
}

}  // namespace tenet
