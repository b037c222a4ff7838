/// \file
/// Child processes that must not outlive Tenet: the C++ compiler the JIT runs
/// can take minutes and gigabytes, and goes on alone when Tenet is killed.
///
/// Each such child runs as the leader of its own process group (so that the
/// compiler's own children, cc1plus and as, are in it too) and is registered
/// here while it runs. A program that installs end_children_on_signals()
/// (the `tenet` command line does) kills those groups when SIGINT, SIGTERM or
/// SIGHUP ends it. Inside another program nothing is installed; the host may
/// set an interrupt check instead, which runs while a child runs (the Python
/// module's raises KeyboardInterrupt at Ctrl-C; docs/security.md, "Processes").
#pragma once

#include <sys/types.h>

#include <functional>

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

/// A check that code waiting for a child calls about every 100 ms (null: none).
/// When it throws, the child's group is killed and the exception propagates.
void set_interrupt_check(std::function<void()> check);
/// Runs the interrupt check, if one is set.
void check_interrupt();

}  // namespace tenet
