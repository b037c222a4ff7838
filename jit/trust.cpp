#include "jit/trust.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "support/error.h"

namespace tenet::jit::detail {

namespace fs = std::filesystem;

namespace {

std::string user_name(uid_t uid) {
  struct passwd entry;
  struct passwd* found = nullptr;
  std::vector<char> buffer(4096);
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
    return found->pw_name;
  return "uid " + std::to_string(uid);
}

std::string describe(const struct stat& st) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
  return "owner " + user_name(st.st_uid) + ", mode " + mode;
}

bool owner_allowed(uid_t owner, Owners owners) {
  return owner == ::geteuid() || (owners == Owners::MeOrRoot && owner == 0);
}

/// Why one file or folder (its stat) could be changed by another user.
std::string check_one(const std::string& path, const struct stat& st, Owners owners) {
  const std::string who = "'" + path + "' (" + describe(st) + ")";
  if (!owner_allowed(st.st_uid, owners)) return who + " belongs to another user";
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  // In a sticky folder only a file's owner may rename or remove it.
  const bool sticky_folder = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if (others_write && !sticky_folder) return who + " is writable by users other than its owner";
  return "";
}

}  // namespace

std::string owner_and_mode(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::strerror(errno);
  return describe(st);
}

std::string untrusted_reason(const std::string& path, Owners owners) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return "";
  // Symbolic links on the way: whoever owns one decides where it leads.
  fs::path prefix;
  for (const auto& part : absolute) {
    prefix /= part;
    struct stat st;
    if (::lstat(prefix.c_str(), &st) != 0) return "";  // missing: the caller reports it
    if (S_ISLNK(st.st_mode) && !owner_allowed(st.st_uid, Owners::MeOrRoot))
      return "the symbolic link '" + prefix.string() + "' (" + describe(st) +
             ") belongs to another user";
  }
  const fs::path real = fs::canonical(absolute, ec);
  if (ec) return "";
  struct stat st;
  if (::stat(real.c_str(), &st) != 0) return "";
  if (std::string why = check_one(real.string(), st, owners); !why.empty()) return why;
  // Whoever can write a folder above can rename the file away and put theirs.
  for (fs::path folder = real.parent_path();; folder = folder.parent_path()) {
    if (::stat(folder.c_str(), &st) != 0) return "";
    if (std::string why = check_one(folder.string(), st, Owners::MeOrRoot); !why.empty())
      return why;
    if (folder == folder.root_path() || folder.parent_path() == folder) break;
  }
  return "";
}

std::string untrusted_entry_reason(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode))
    return "'" + path + "' (" + describe(st) + ") is a symbolic link, not a file Tenet wrote";
  return check_one(path, st, Owners::Me);
}

void create_private_directories(const std::string& dir, const std::string& what) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec).lexically_normal();
  fs::path prefix;
  for (const auto& part : absolute) {
    prefix /= part;
    if (part.empty() || fs::is_directory(prefix, ec)) continue;
    if (::mkdir(prefix.c_str(), 0700) == 0)
      ::chmod(prefix.c_str(), 0700);  // the umask may have taken bits away
    else if (errno != EEXIST)
      throw BindError("cannot create the folder '" + prefix.string() + "' (" +
                      std::strerror(errno) + "); set " + what + " to a folder you can write");
  }
}

}  // namespace tenet::jit::detail
