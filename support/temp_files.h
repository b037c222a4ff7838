/// \file
/// Temporary files that are renamed into place once complete (checkpoints,
/// JIT libraries), and the clean-up of those a killed process left behind.
///
/// A temporary of `path` is named "<path>.tmp.<host>.<pid>.<unique>", so a
/// later process can tell whose it was: one whose process no longer runs on
/// this host is stale and may be removed. Files of other hosts (a shared
/// network folder) and of live processes are never touched.
#pragma once

#include <string>

namespace tenet {

/// "<path>.tmp.<host>.<pid>.": the prefix of this process's temporaries of
/// `path`; append something unique per call (mkstemp's XXXXXX, a counter).
std::string temporary_prefix(const std::string& path);

/// Removes the temporaries of `path` (named as above: files, or folders with
/// what is in them) whose process is gone.
/// Returns how many were removed; errors (an unreadable folder) remove nothing.
int remove_stale_temporaries(const std::string& path);

/// Whether a process `pid` exists on this machine (a zombie counts as gone).
bool process_is_running(long pid);

}  // namespace tenet
