#include "kernels/calibration_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>
#include <system_error>

#include "iotx/version.h"

namespace iotx::kernels {
namespace {

// Bump when what Calibrate measures or how it decides changes: older files are then ignored.
constexpr const char* kFormat = "iotx streaming threshold 4";
// Ours are a few hundred bytes; anything much larger is not ours and not read.
constexpr uintmax_t kMaxFileBytes = 64 * 1024;

// FNV-1a: a stable hash for the file name (std::hash may differ between builds).
uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3u;
  }
  return h;
}

// `text` on one line of the cache file: line breaks become spaces.
std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

// A "<key><positive integer>" line.
bool ParseBytes(const std::string& line, std::string_view key, int64_t& value, int64_t least = 1) {
  if (line.rfind(key, 0) != 0) return false;
  const char* first = line.data() + key.size();
  const char* last = line.data() + line.size();
  const auto [end, error] = std::from_chars(first, last, value);
  return error == std::errc() && end == last && value >= least;
}

// The cached threshold, when `path` holds one for `signature`.
std::optional<StreamingThreshold> Read(const std::filesystem::path& path,
                                       const std::string& signature) {
  std::error_code size_error;
  const uintmax_t size = std::filesystem::file_size(path, size_error);
  if (size_error || size > kMaxFileBytes) return std::nullopt;
  std::ifstream in(path);
  std::string format, sig, bytes_line, staged_line, one_thread_line, walk_line, why_line;
  if (!std::getline(in, format) || format != kFormat) return std::nullopt;
  if (!std::getline(in, sig) || sig != "signature " + signature) return std::nullopt;
  if (!std::getline(in, bytes_line) || !std::getline(in, staged_line) ||
      !std::getline(in, one_thread_line)) {
    return std::nullopt;
  }
  if (!std::getline(in, walk_line)) return std::nullopt;
  if (!std::getline(in, why_line) || why_line.rfind("why ", 0) != 0) return std::nullopt;
  StreamingThreshold t;
  if (walk_line == "dram_walk short-strips") {
    t.short_strips = true;
  } else if (walk_line != "dram_walk tall-strips") {
    return std::nullopt;
  }
  if (!ParseBytes(bytes_line, "bytes ", t.bytes) ||
      !ParseBytes(staged_line, "staged_bytes ", t.staged_bytes) ||
      !ParseBytes(one_thread_line, "one_thread_bytes ", t.one_thread_bytes, 0)) {
    return std::nullopt;
  }
  t.why = why_line.substr(4) + " (measured once on this machine, cached in " + path.string() + ")";
  return t;
}

// Writes the file whole or not at all: a temporary beside it, then a rename, so a process
// reading at the same time sees the old file or the new one.
void Write(const std::filesystem::path& path, const std::string& signature,
           const StreamingThreshold& t) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return;
  const std::filesystem::path temp =
      path.string() + fmt::format(".tmp-{}-{:x}", getpid(), Fnv1a(path.string() + t.why));
  const std::string text = fmt::format(
      "{}\nsignature {}\nbytes {}\nstaged_bytes {}\none_thread_bytes {}\ndram_walk {}\nwhy {}\n",
      kFormat, signature, t.bytes, t.staged_bytes, t.one_thread_bytes,
      t.short_strips ? "short-strips" : "tall-strips", OneLine(t.why));
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(temp, ec);
  }
}

}  // namespace

std::optional<std::filesystem::path> CalibrationCacheDir() {
  if (const char* dir = std::getenv("IOTX_CACHE_DIR")) {
    if (*dir == '\0') return std::nullopt;
    return std::filesystem::path(dir);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::filesystem::path(xdg) / "iotx";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return std::filesystem::path(home) / ".cache" / "iotx";
  }
  return std::nullopt;
}

std::string MachineSignature(const Machine& m) {
  return fmt::format("{} | L1d {} {}-way, L2 {}, LLC {} | {} {}-byte vectors | iotx {}",
                     OneLine(CpuModel()), m.l1d_bytes, m.l1d_ways, m.l2_bytes, m.llc_bytes,
                     m.target, m.vector_bytes, IOTX_VERSION_STRING);
}

StreamingThreshold LoadOrCalibrate(const std::optional<std::filesystem::path>& dir,
                                   const std::string& signature,
                                   const std::function<StreamingThreshold()>& calibrate) {
  if (!dir) return calibrate();
  const std::filesystem::path path =
      *dir / fmt::format("streaming-{:016x}.txt", Fnv1a(std::string(kFormat) + signature));
  if (std::optional<StreamingThreshold> cached = Read(path, signature)) return *cached;
  StreamingThreshold t = calibrate();
  if (t.measured) Write(path, signature, t);
  return t;
}

}  // namespace iotx::kernels
