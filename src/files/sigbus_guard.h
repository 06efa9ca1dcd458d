// Reading a mapped file that changes under us without dying of SIGBUS.
//
// A page of a file mapping that no longer exists in the file (someone truncated it while we
// read) or cannot be read (an I/O error) raises SIGBUS when touched, which kills the process
// midway through its writes. A guarded mapping instead gets the rest of its range, from the
// faulting page on, replaced by zero pages, and is marked damaged: the access goes on (reading
// zeros), and the owner checks MappingDamaged() before it trusts, or publishes, anything
// computed from the mapping. Any thread may take the fault (the kernel's oneTBB workers do).
//
// The handler is installed process-wide on first use and passes every other SIGBUS on to the
// handler that was there before (or to the default action, which ends the process).
#pragma once

#include <cstddef>

namespace iotx::files {

// The most mappings guarded at once.
inline constexpr size_t kMaxGuardedMappings = 4096;

// Guards the read-only private mapping [begin, begin + size). Returns its slot, or -1 when
// kMaxGuardedMappings are guarded already (the mapping then stays unguarded). Thread-safe.
int GuardMapping(const void* begin, size_t size) noexcept;

// Stops guarding `slot` (from GuardMapping; -1 is ignored). Call before unmapping, once no
// thread reads the mapping any more.
void UnguardMapping(int slot) noexcept;

// True once a guarded read of `slot` faulted: the data read from it from then on are zeros.
bool MappingDamaged(int slot) noexcept;

}  // namespace iotx::files
