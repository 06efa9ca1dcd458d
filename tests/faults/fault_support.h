// Shared by the fault tests: timing the built tool, and looking at a directory tree before
// and after (they run the tool, under limits or killed midway, through support/process.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/sanitizers.h"

namespace iotx::test {

// Runs the tool and returns how long it took (wall clock), failing the test on a non-zero exit.
std::chrono::microseconds TimeTool(const std::vector<std::string>& args, const std::string& cwd);

// One entry of a directory tree: a regular file (size and a digest of its bytes), a symlink
// (its target, with the tree's root replaced by "<root>"), a directory, or a FIFO, socket or
// device (never read).
struct TreeEntry {
  char kind = '?';  // 'f', 'l', 'd'; 'p' FIFO, 's' socket, 'c' device
  uint64_t size = 0;
  uint64_t digest = 0;
  std::string link;
  bool operator==(const TreeEntry&) const = default;
};
using Tree = std::map<std::string, TreeEntry>;  // by path relative to the root

// Everything under `root` (symlinks not followed).
Tree SnapshotTree(const std::string& root);
// "path: kind size digest|link" lines, for failure messages.
std::string DescribeTree(const Tree& tree);
// True for a hidden name (".NAME.tmp-…"), i.e. a temporary of an atomic write.
bool IsHiddenPath(const std::string& relative_path);
// The hidden entries of `tree`.
std::vector<std::string> HiddenEntries(const Tree& tree);

// Checks a tree left by an interrupted or failed run: every visible entry is either as it
// was before (`before`) or as a complete run leaves it (`done`), and nothing that existed
// before is gone. Hidden temporaries are allowed only when `allow_hidden`. Returns the
// problems found (empty when none).
std::vector<std::string> CompareInterrupted(const Tree& before, const Tree& done,
                                            const Tree& now, bool allow_hidden);
// CompareInterrupted's problems as indented lines, for a failure message.
std::string JoinProblems(const std::vector<std::string>& problems);

// io_transposes.json with one spec: input "a", 2 x 3, transposed.
inline constexpr const char* kSpecA =
    R"([{"input_name": "a", "reshape": [2, 3], "transpose": [1, 0]}])";

// The stderr of a failed run names a stable code: "iotx: error: <CODE> ...".
bool HasErrorCode(const std::string& err);
// Signs of a crash or an escaped exception in a child's stderr (sanitizer reports included).
bool LooksLikeCrash(const std::string& err);

// For gtest's messages.
void PrintTo(const TreeEntry& entry, std::ostream* out);

// The files and links (absolute paths) a run that turned `before` into `done` wrote under
// `root`.
std::vector<std::string> WrittenPaths(const std::string& root, const Tree& before,
                                      const Tree& done);

// tests/faults/check_outputs.py on `paths` (files, or directories to walk): loads every .npy,
// .p, .json, .safetensors and .pb with numpy / pickle / json / Python's protobuf (readers that
// share no code with iotx). Returns its output; exit code in `exit_code`.
std::string CheckOutputsWithPython(const std::vector<std::string>& paths, int* exit_code);

// True when python3 has numpy and google.protobuf (what check_outputs.py needs).
bool PythonCanCheckOutputs();

}  // namespace iotx::test
