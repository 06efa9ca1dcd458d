// How much written, unflushed file data the kernel lets pile up before writers wait for the
// disk: the point past which writing through the page cache runs at the disk's speed anyway.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace iotx::files {

// The kernel's dirty-page limit in bytes: vm.dirty_bytes when set, else vm.dirty_ratio percent
// of the memory available (MemAvailable, close to what the kernel counts as dirtyable: free
// pages and the page cache). nullopt where /proc does not say (not Linux, /proc not mounted).
std::optional<uint64_t> DirtyPageLimit();

// The same from the texts of /proc/sys/vm/dirty_bytes, /proc/sys/vm/dirty_ratio and
// /proc/meminfo; nullopt if they do not parse.
std::optional<uint64_t> DirtyPageLimit(std::string_view dirty_bytes, std::string_view dirty_ratio,
                                       std::string_view meminfo);

}  // namespace iotx::files
