#include "faults/fault_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "iotx/status.h"
#include "support/process.h"
#include "support/python_modules.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

// The size and a digest of a file's bytes: enough to tell files apart in a test (not a security
// digest). The file streams through one reused buffer: a kill test snapshots tens of MB a dozen
// times, and a fresh buffer per file (page faults on new memory, worst under ASan, which maps
// every large allocation anew) was most of its time.
void DigestFile(const fs::path& path, TreeEntry& entry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  static thread_local std::vector<char> buffer(size_t{1} << 20);
  entry.size = 0;
  entry.digest = 0;
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    entry.digest = entry.digest * 0x100000001b3 ^
                   std::hash<std::string_view>{}(std::string_view(buffer.data(), n));
    entry.size += n;
  }
}

}  // namespace

std::chrono::microseconds TimeTool(const std::vector<std::string>& args, const std::string& cwd) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = RunToolWith(args, {.cwd = cwd});
  const auto took = std::chrono::steady_clock::now() - start;
  if (r.exit_code != 0) throw std::runtime_error("iotx failed: " + r.err);
  return std::chrono::duration_cast<std::chrono::microseconds>(took);
}

Tree SnapshotTree(const std::string& root) {
  Tree tree;
  const std::string canonical = fs::canonical(root).string();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    // Lexically: fs::relative would follow a symlink entry to where it leads.
    const std::string relative = it->path().lexically_relative(root).string();
    TreeEntry entry;
    if (it->is_symlink()) {
      entry.kind = 'l';
      entry.link = fs::read_symlink(it->path()).string();
      for (const std::string& prefix : {canonical, root}) {
        if (entry.link.rfind(prefix + "/", 0) == 0) {
          entry.link = "<root>" + entry.link.substr(prefix.size());
        }
      }
    } else if (it->is_directory()) {
      entry.kind = 'd';
    } else if (it->is_fifo() || it->is_socket() || it->is_character_file() ||
               it->is_block_file()) {
      entry.kind = it->is_fifo() ? 'p' : it->is_socket() ? 's' : 'c';  // never read
    } else {
      entry.kind = 'f';
      DigestFile(it->path(), entry);
    }
    tree[relative] = entry;
  }
  return tree;
}

std::string DescribeTree(const Tree& tree) {
  std::ostringstream out;
  for (const auto& [path, e] : tree) {
    out << "  " << path << ": " << e.kind;
    if (e.kind == 'f') out << " " << e.size << " " << std::hex << e.digest << std::dec;
    if (e.kind == 'l') out << " -> " << e.link;
    out << "\n";
  }
  return out.str();
}

bool IsHiddenPath(const std::string& relative_path) {
  return fs::path(relative_path).filename().string().rfind('.', 0) == 0;
}

std::vector<std::string> HiddenEntries(const Tree& tree) {
  std::vector<std::string> hidden;
  for (const auto& [path, entry] : tree) {
    if (IsHiddenPath(path)) hidden.push_back(path);
  }
  return hidden;
}

std::string JoinProblems(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& line : problems) out += "  " + line + "\n";
  return out;
}

std::vector<std::string> CompareInterrupted(const Tree& before, const Tree& done, const Tree& now,
                                            bool allow_hidden) {
  std::vector<std::string> problems;
  for (const auto& [path, entry] : now) {
    if (IsHiddenPath(path)) {
      if (!allow_hidden) problems.push_back(path + ": temporary left behind");
      continue;
    }
    const auto was = before.find(path);
    const auto will = done.find(path);
    const bool as_before = was != before.end() && was->second == entry;
    const bool as_done = will != done.end() && will->second == entry;
    if (!as_before && !as_done) {
      problems.push_back(path + ": neither as before nor as a complete run leaves it (" +
                         (entry.kind == 'f' ? std::to_string(entry.size) + " bytes"
                                            : std::string(1, entry.kind) + " " + entry.link) +
                         ")");
    }
  }
  for (const auto& [path, entry] : before) {
    if (!now.contains(path) && done.contains(path)) problems.push_back(path + ": lost");
  }
  return problems;
}

// True when a line starts "iotx: error: CODE " and CODE is one of the project's codes
// (iotx/error_codes.inc), looked up rather than pattern-matched.
bool HasErrorCode(const std::string& err) {
  constexpr std::string_view kPrefix = "iotx: error: ";
  const std::string_view text = err;
  for (size_t at = text.find(kPrefix); at != std::string_view::npos;
       at = text.find(kPrefix, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    const size_t begin = at + kPrefix.size();
    const size_t space = text.find(' ', begin);
    if (space == std::string_view::npos) continue;
    const std::string_view token = text.substr(begin, space - begin);
    for (ErrorCode code : AllErrorCodes()) {
      if (CodeName(code) == token) return true;
    }
  }
  return false;
}

bool LooksLikeCrash(const std::string& err) {
  for (const char* sign : {"terminate called", "what():", "Sanitizer", "runtime error:",
                           "Assertion", "Segmentation fault", "core dumped", "std::"}) {
    if (err.find(sign) != std::string::npos) return true;
  }
  return false;
}

void PrintTo(const TreeEntry& entry, std::ostream* out) {
  *out << entry.kind;
  if (entry.kind == 'f') *out << " " << entry.size << " bytes, digest " << std::hex << entry.digest << std::dec;
  if (entry.kind == 'l') *out << " -> " << entry.link;
}

std::vector<std::string> WrittenPaths(const std::string& root, const Tree& before,
                                      const Tree& done) {
  std::vector<std::string> paths;
  for (const auto& [path, entry] : done) {
    const auto was = before.find(path);
    if (entry.kind != 'd' && (was == before.end() || was->second != entry)) {
      paths.push_back(root + "/" + path);
    }
  }
  return paths;
}

std::string CheckOutputsWithPython(const std::vector<std::string>& paths, int* exit_code) {
  std::vector<std::string> argv = {IOTX_PYTHON,
                                   std::string(IOTX_SOURCE_DIR) + "/tests/faults/check_outputs.py",
                                   "--protoc", IOTX_PROTOC, "--proto",
                                   std::string(IOTX_TESTDATA_DIR) + "/wrap/hlo_rich_test.proto"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  ProcessResult r = RunProcess(argv);
  *exit_code = r.exit_code;
  return r.out + r.err;
}

bool PythonCanCheckOutputs() { return IOTX_PYTHON_HAS_NUMPY_AND_PROTOBUF; }

}  // namespace iotx::test
