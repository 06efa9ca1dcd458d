#include "files/stale_temps.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <charconv>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <unordered_set>

namespace iotx::files {
namespace {

// The pid in "<pid>-..." at the start of `rest`, if it is one.
std::optional<pid_t> LeadingPid(std::string_view rest) {
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || end == rest.data() || pid <= 0) return std::nullopt;
  if (end == rest.data() + rest.size() || *end != '-') return std::nullopt;
  return pid;
}

// The writer's pid when `entry` is ".<name>.tmp-<pid>-…" or ".<name>.tmp-link-<pid>-…" for a
// name in `names`.
std::optional<pid_t> TempOwner(std::string_view entry,
                               const std::unordered_set<std::string_view>& names) {
  if (!entry.starts_with('.')) return std::nullopt;
  for (std::string_view marker : {".tmp-link-", ".tmp-"}) {
    const size_t at = entry.rfind(marker);
    if (at == std::string_view::npos || at <= 1) continue;
    if (!names.contains(entry.substr(1, at - 1))) continue;
    if (auto pid = LeadingPid(entry.substr(at + marker.size()))) return pid;
  }
  return std::nullopt;
}

bool ProcessGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// Whether `entry` is one of `keep`: the same file, by device and inode, where `keep` names it
// directly or through links. A symlink among the temporaries is compared as itself, so a stale
// link that leads to an input still goes (the input stays either way).
bool Kept(const std::filesystem::path& entry, std::span<const std::filesystem::path> keep) {
  struct stat self {};
  if (lstat(entry.c_str(), &self) != 0) return false;
  const bool link = S_ISLNK(self.st_mode);
  for (const std::filesystem::path& file : keep) {
    struct stat other {};
    if ((link ? lstat(file.c_str(), &other) : stat(file.c_str(), &other)) != 0) continue;
    if (other.st_dev == self.st_dev && other.st_ino == self.st_ino) return true;
  }
  return false;
}

}  // namespace

size_t RemoveStaleTemps(const std::filesystem::path& dir, std::span<const std::string> names,
                        std::span<const std::filesystem::path> keep) {
  const std::unordered_set<std::string_view> wanted(names.begin(), names.end());
  size_t removed = 0;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    // An output of the run itself, however much its name looks like another's temporary (a
    // shard named ".model-1.safetensors.tmp-99-x" beside "model-1.safetensors").
    if (wanted.contains(entry)) continue;
    const std::optional<pid_t> owner = TempOwner(entry, wanted);
    if (!owner || !ProcessGone(*owner) || Kept(it->path(), keep)) continue;
    std::error_code remove_ec;
    // remove() unlinks a symlink itself, never what it points to.
    if (it->symlink_status(remove_ec).type() != std::filesystem::file_type::directory &&
        std::filesystem::remove(it->path(), remove_ec)) {
      ++removed;
    }
  }
  return removed;
}

}  // namespace iotx::files
