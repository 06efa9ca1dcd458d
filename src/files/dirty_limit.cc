#include "files/dirty_limit.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace iotx::files {
namespace {

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

// The bytes of a "Name:   N kB" line of /proc/meminfo.
std::optional<uint64_t> MeminfoBytes(std::string_view meminfo, std::string_view name) {
  for (size_t at = 0; at < meminfo.size();) {
    size_t end = meminfo.find('\n', at);
    if (end == std::string_view::npos) end = meminfo.size();
    const std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ':') {
      const std::optional<uint64_t> kib = LeadingNumber(line.substr(name.size() + 1));
      if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
      return *kib * 1024;
    }
  }
  return std::nullopt;
}

std::string ReadProcFile(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::optional<uint64_t> DirtyPageLimit(std::string_view dirty_bytes, std::string_view dirty_ratio,
                                       std::string_view meminfo) {
  if (const std::optional<uint64_t> bytes = LeadingNumber(dirty_bytes); bytes && *bytes > 0) {
    return bytes;
  }
  const std::optional<uint64_t> ratio = LeadingNumber(dirty_ratio);
  const std::optional<uint64_t> available = MeminfoBytes(meminfo, "MemAvailable");
  if (!ratio || *ratio > 100 || !available) return std::nullopt;
  return *available / 100 * *ratio;
}

std::optional<uint64_t> DirtyPageLimit() {
  return DirtyPageLimit(ReadProcFile("/proc/sys/vm/dirty_bytes"),
                        ReadProcFile("/proc/sys/vm/dirty_ratio"), ReadProcFile("/proc/meminfo"));
}

}  // namespace iotx::files
