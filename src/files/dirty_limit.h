// How much written, unflushed file data the kernel lets pile up before writers wait for the
// disk: the point past which writing through the page cache runs at the disk's speed anyway.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace iotx::files {

// The kernel's dirty-page limit in bytes for this process: vm.dirty_bytes when set, else
// vm.dirty_ratio percent of the memory available (MemAvailable, close to what the kernel
// counts as dirtyable: free pages and the page cache), scaled down, as the kernel scales a
// memory cgroup's limit, when the process's memory cgroup has less room than that (a container
// or a Kubernetes pod with a memory limit; MemAvailable is the host's). nullopt where /proc
// does not say (not Linux, /proc not mounted).
std::optional<uint64_t> DirtyPageLimit();

// The global limit from the texts of /proc/sys/vm/dirty_bytes, /proc/sys/vm/dirty_ratio and
// /proc/meminfo, scaled by cgroup_room / MemAvailable when cgroup_room is smaller; nullopt if
// the texts do not parse.
std::optional<uint64_t> DirtyPageLimit(std::string_view dirty_bytes, std::string_view dirty_ratio,
                                       std::string_view meminfo,
                                       std::optional<uint64_t> cgroup_room = std::nullopt);

// The room left in the memory cgroups of the process whose /proc/self/cgroup reads
// `proc_self_cgroup`, under the cgroup file system mounted at `root` (/sys/fs/cgroup): the
// least, over the cgroup and its ancestors, of its limit minus its usage plus its page cache
// (reclaimable). cgroup v2 (memory.max, memory.current, memory.stat `file`) or v1
// (memory.stat `hierarchical_memory_limit`, memory.usage_in_bytes, memory.stat `total_cache`).
// nullopt when no memory cgroup along the way has a limit.
std::optional<uint64_t> MemoryCgroupRoom(const std::filesystem::path& root,
                                         std::string_view proc_self_cgroup);

}  // namespace iotx::files
