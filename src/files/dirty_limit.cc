#include "files/dirty_limit.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace iotx::files {
namespace {

// A memory limit at or above this means none (cgroup v1 writes 2^63 rounded down to a page).
constexpr uint64_t kNoLimit = uint64_t{1} << 62;

// The unsigned number at the start of `text` after blanks; nullopt if there is none.
std::optional<uint64_t> LeadingNumber(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return std::nullopt;
  uint64_t value = 0;
  const char* first = text.data() + start;
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
  if (ec != std::errc() || end == first) return std::nullopt;
  return value;
}

// The line of `text` that starts at `at` (without its newline); moves `at` past it.
std::string_view NextLine(std::string_view text, size_t& at) {
  const size_t end = std::min(text.find('\n', at), text.size());
  const std::string_view line = text.substr(at, end - at);
  at = end + 1;
  return line;
}

// The number after `name` and `separator` on a line of `text` starting with them ("MemAvailable"
// and ':' in /proc/meminfo, "file" and ' ' in memory.stat).
std::optional<uint64_t> KeyedNumber(std::string_view text, std::string_view name, char separator) {
  for (size_t at = 0; at < text.size();) {
    const std::string_view line = NextLine(text, at);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == separator) {
      return LeadingNumber(line.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

std::string ReadSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// limit - usage + cache, or nullopt for no limit or unreadable numbers.
std::optional<uint64_t> Room(std::optional<uint64_t> limit, std::optional<uint64_t> usage,
                             std::optional<uint64_t> cache) {
  if (!limit || *limit >= kNoLimit || !usage) return std::nullopt;
  const uint64_t used = *usage - std::min(*usage, cache.value_or(0));
  return *limit - std::min(*limit, used);
}

// Whether the comma-separated `controllers` of a /proc/self/cgroup line name `name`.
bool HasController(std::string_view controllers, std::string_view name) {
  while (!controllers.empty()) {
    const size_t comma = std::min(controllers.find(','), controllers.size());
    if (controllers.substr(0, comma) == name) return true;
    controllers.remove_prefix(std::min(comma + 1, controllers.size()));
  }
  return false;
}

std::optional<uint64_t> Least(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

std::optional<uint64_t> DirtyPageLimit(std::string_view dirty_bytes, std::string_view dirty_ratio,
                                       std::string_view meminfo,
                                       std::optional<uint64_t> cgroup_room) {
  const std::optional<uint64_t> available_kib = KeyedNumber(meminfo, "MemAvailable", ':');
  if (!available_kib || *available_kib > UINT64_MAX / 1024) return std::nullopt;
  const uint64_t available = *available_kib * 1024;
  uint64_t limit = 0;
  if (const std::optional<uint64_t> bytes = LeadingNumber(dirty_bytes); bytes && *bytes > 0) {
    limit = *bytes;
  } else {
    const std::optional<uint64_t> ratio = LeadingNumber(dirty_ratio);
    if (!ratio || *ratio > 100) return std::nullopt;
    limit = available / 100 * *ratio;
  }
  if (cgroup_room && *cgroup_room < available) {
    limit = static_cast<uint64_t>(static_cast<long double>(limit) * *cgroup_room / available);
  }
  return limit;
}

std::optional<uint64_t> MemoryCgroupRoom(const std::filesystem::path& root,
                                         std::string_view proc_self_cgroup) {
  std::optional<uint64_t> room;
  for (size_t at = 0; at < proc_self_cgroup.size();) {
    const std::string_view line = NextLine(proc_self_cgroup, at);
    // "hierarchy-ID:controllers:path"
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::filesystem::path path =
        std::filesystem::path(line.substr(second + 1)).relative_path();
    if (line.substr(0, first) == "0" && controllers.empty()) {
      // cgroup v2: the cgroup and each ancestor have their own limit. The top one too: in a
      // cgroup namespace (a container) the path is "/" and the root directory is the
      // container's cgroup; the host's root has no memory.max.
      for (std::filesystem::path dir = path;; dir = dir.parent_path()) {
        const std::filesystem::path d = root / dir;
        const std::string stat = ReadSmallFile(d / "memory.stat");
        room = Least(room, Room(LeadingNumber(ReadSmallFile(d / "memory.max")),
                                LeadingNumber(ReadSmallFile(d / "memory.current")),
                                KeyedNumber(stat, "file", ' ')));
        if (dir.empty()) break;
      }
    } else if (HasController(controllers, "memory")) {
      // cgroup v1: hierarchical_memory_limit already takes the ancestors into account.
      const std::filesystem::path d = root / "memory" / path;
      const std::string stat = ReadSmallFile(d / "memory.stat");
      room = Least(room, Room(KeyedNumber(stat, "hierarchical_memory_limit", ' '),
                              LeadingNumber(ReadSmallFile(d / "memory.usage_in_bytes")),
                              KeyedNumber(stat, "total_cache", ' ')));
    }
  }
  return room;
}

std::optional<uint64_t> DirtyPageLimit() {
  return DirtyPageLimit(ReadSmallFile("/proc/sys/vm/dirty_bytes"),
                        ReadSmallFile("/proc/sys/vm/dirty_ratio"), ReadSmallFile("/proc/meminfo"),
                        MemoryCgroupRoom("/sys/fs/cgroup", ReadSmallFile("/proc/self/cgroup")));
}

}  // namespace iotx::files
