#include "files/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace iotx::files {
namespace {

// One guarded range. `state` is 0 (free), 1 (being set up or torn down) or 2 (guarding); the
// handler only looks at slots in state 2, so it never sees a half-written range.
struct Slot {
  std::atomic<int> state{0};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};  // page-aligned
  std::atomic<bool> damaged{false};
};

std::array<Slot, kMaxGuardedMappings>& Slots() {
  static std::array<Slot, kMaxGuardedMappings> slots;
  return slots;
}

struct sigaction g_previous = {};
std::once_flag g_installed;

// Replaces [page of addr, end) of a guarded slot by zero pages. Only async-signal-safe calls:
// atomics and mmap(2).
bool Patch(uintptr_t addr) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (Slot& slot : Slots()) {
    if (slot.state.load(std::memory_order_acquire) != 2) continue;
    const uintptr_t begin = slot.begin.load(std::memory_order_relaxed);
    const uintptr_t end = slot.end.load(std::memory_order_relaxed);
    if (addr < begin || addr >= end) continue;
    const uintptr_t from = addr / page * page;
    void* zeros = mmap(reinterpret_cast<void*>(from), end - from, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros == MAP_FAILED) return false;
    slot.damaged.store(true, std::memory_order_release);
    return true;
  }
  return false;
}

void OnSigbus(int signo, siginfo_t* info, void* context) {
  if (info != nullptr && Patch(reinterpret_cast<uintptr_t>(info->si_addr))) return;
  // Not ours: what would have happened without us.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) {
      g_previous.sa_sigaction(signo, info, context);
      return;
    }
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(signo);
    return;
  }
  // The default action: restored, the faulting access runs again and ends the process.
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGBUS, &fallback, nullptr);
}

void Install() {
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, &g_previous);
}

}  // namespace

int GuardMapping(const void* begin, size_t size) noexcept {
  if (begin == nullptr || size == 0) return -1;
  std::call_once(g_installed, Install);
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t end = (first + size + page - 1) / page * page;
  std::array<Slot, kMaxGuardedMappings>& slots = Slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      continue;
    }
    slots[i].begin.store(first, std::memory_order_relaxed);
    slots[i].end.store(end, std::memory_order_relaxed);
    slots[i].damaged.store(false, std::memory_order_relaxed);
    slots[i].state.store(2, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void UnguardMapping(int slot) noexcept {
  if (slot < 0 || static_cast<size_t>(slot) >= kMaxGuardedMappings) return;
  Slots()[slot].state.store(0, std::memory_order_release);
}

bool MappingDamaged(int slot) noexcept {
  if (slot < 0 || static_cast<size_t>(slot) >= kMaxGuardedMappings) return false;
  return Slots()[slot].damaged.load(std::memory_order_acquire);
}

}  // namespace iotx::files
