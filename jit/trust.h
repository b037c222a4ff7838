/// \file
/// Which files the JIT may load or execute (docs/security.md): the libraries
/// in its cache, the C++ compiler, the BLAS library it links, the runtime
/// headers compiled into generated code. A file another local user could
/// have written is never used: Tenet would run their code as you.
///
/// Internal to jit/.
#pragma once

#include <string>

namespace tenet::jit::detail {

/// Who may own a trusted file besides nobody else: the current user only (the
/// JIT cache, which Tenet writes), or also root (system files: /usr/bin/c++).
enum class Owners { Me, MeOrRoot };

/// Why `path` could have been changed by another user, or "" when it could
/// not: `path` (a symbolic link followed) and every folder above its real
/// path are owned by the current user or root (`path` itself by `owners`),
/// and none is writable by its group or others, but for folders with the
/// sticky bit (as /tmp, where only a file's owner may rename or delete it).
/// Every symbolic link on the way must be owned by the current user or root.
/// A missing file is not reported here (the caller says it is missing).
std::string untrusted_reason(const std::string& path, Owners owners);

/// The same for a folder or file directly inside a trusted cache folder:
/// it must not be a symbolic link, be owned by the current user and be
/// writable by nobody else. "" when it does not exist.
std::string untrusted_entry_reason(const std::string& path);

/// Creates the missing folders of `dir` with mode 0700 (whatever the umask),
/// keeping those that exist. Throws BindError naming `dir` and `what` to set
/// when it cannot.
void create_private_directories(const std::string& dir, const std::string& what);

/// A file's owner and mode for messages: "owner root, mode 0755".
std::string owner_and_mode(const std::string& path);

}  // namespace tenet::jit::detail
