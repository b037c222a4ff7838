/// \file
/// Child processes that must not outlive Tenet: the C++ compiler the JIT runs
/// can take minutes and gigabytes, and goes on alone when Tenet is killed.
///
/// Each such child runs as the leader of its own process group (so that the
/// compiler's own children, cc1plus and as, are in it too) and is registered
/// here while it runs. A program that installs end_children_on_signals()
/// (the `tenet` command line does) kills those groups when SIGINT, SIGTERM or
/// SIGHUP ends it. Inside another program (Python) nothing is installed: the
/// host's signal handling decides (docs/security.md, "Processes").
#pragma once

#include <sys/types.h>

namespace tenet {

/// Registers a process group to kill on a fatal signal. Async-signal-safe
/// readers; at most 64 at once (more are run but not registered).
void register_child_group(pid_t group);
void unregister_child_group(pid_t group);

/// Sends SIGKILL to every registered group. Async-signal-safe.
void kill_child_groups();

/// Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored at
/// start, as under nohup) that kill the registered groups, then end the
/// process by the same signal with its default action.
void end_children_on_signals();

}  // namespace tenet
