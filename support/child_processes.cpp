#include "support/child_processes.h"

#include <signal.h>

#include <atomic>
#include <mutex>

static_assert(std::atomic<pid_t>::is_always_lock_free, "read in signal handlers");

namespace tenet {

namespace {

constexpr int kSlots = 64;
std::mutex g_check_mutex;
std::function<void()> g_interrupt_check;
std::atomic<pid_t> g_groups[kSlots];  // 0: free

void on_fatal_signal(int sig) {
  kill_child_groups();
  // The default action: the parent (a shell, a test) sees death by `sig`.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void register_child_group(pid_t group) {
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, group)) return;
  }
}

void unregister_child_group(pid_t group) {
  for (auto& slot : g_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void kill_child_groups() {
  for (auto& slot : g_groups) {
    const pid_t group = slot.load();
    if (group > 0) ::killpg(group, SIGKILL);
  }
}

void end_children_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old = {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction action = {};
    action.sa_handler = on_fatal_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(sig, &action, nullptr);
  }
}

void set_interrupt_check(std::function<void()> check) {
  std::lock_guard<std::mutex> lock(g_check_mutex);
  g_interrupt_check = std::move(check);
}

void check_interrupt() {
  std::function<void()> check;
  {
    std::lock_guard<std::mutex> lock(g_check_mutex);
    check = g_interrupt_check;
  }
  if (check) check();
}

}  // namespace tenet
