// A full disk under every writing command: first as a file size limit (RLIMIT_FSIZE with
// SIGXFSZ ignored, so write/fallocate fail with EFBIG; works anywhere), then as a real small
// tmpfs (ENOSPC; needs the right to mount, else skipped). Each command runs under a sweep of
// limits from nothing at all to just short of its largest file. Every starved run must fail
// with exit status 1 and a diagnostic with a code (never a signal), leave every final name
// as it was or complete (byte-identical to an unstarved run), and leave no temporary behind.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "faults/fault_support.h"
#include "faults/scenarios.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

// The largest regular file a complete run writes (or rewrites).
uint64_t LargestOutput(const Tree& before, const Tree& done) {
  uint64_t largest = 0;
  for (const auto& [path, entry] : done) {
    auto was = before.find(path);
    if (entry.kind == 'f' && (was == before.end() || was->second != entry)) {
      largest = std::max(largest, entry.size);
    }
  }
  return largest;
}

constexpr uint64_t kPage = 4096;  // tmpfs sizes and file blocks come in pages

// Budgets from nothing to just short of `largest` bytes: the failure lands before the first
// write, in the middle of the big files and at the last one. `granule` is what the limit
// counts in (1 byte for RLIMIT_FSIZE, a page for tmpfs).
std::vector<uint64_t> Budgets(uint64_t largest, uint64_t granule) {
  return {0, granule, 4 * kPage, 1 << 20, largest / 3, largest / 2, largest - 2 * granule};
}

uint64_t PageRounded(uint64_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

void ExpectCleanFailure(const ProcessResult& result, const Tree& before, const Tree& done,
                        const Tree& now) {
  EXPECT_EQ(result.signal, 0) << "killed by signal " << result.signal << "\n" << result.err;
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(HasErrorCode(result.err)) << result.err;
  EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
  const std::vector<std::string> problems =
      CompareInterrupted(before, done, now, /*allow_hidden=*/false);
  EXPECT_TRUE(problems.empty()) << JoinProblems(problems);
}

struct Reference {
  Tree before;
  Tree done;
};

Reference RunReference(const Scenario& scenario, const std::string& root) {
  fs::create_directory(root);
  scenario.setup(root);
  Reference ref;
  ref.before = SnapshotTree(root);
  const ProcessResult result = RunToolWith(scenario.args, {.cwd = root});
  if (result.exit_code != 0) throw std::runtime_error("reference run failed: " + result.err);
  ref.done = SnapshotTree(root);
  return ref;
}

class FullDiskTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FullDiskTest, FileSizeLimitGivesACodedErrorAndNoPartialFile) {
  const Scenario& scenario = FindScenario(GetParam());
  TempDir temp;
  const Reference ref = RunReference(scenario, temp / "reference");
  const uint64_t largest = LargestOutput(ref.before, ref.done);
  ASSERT_GT(largest, 1u << 20);

  for (uint64_t budget : Budgets(largest, 1)) {
    SCOPED_TRACE(GetParam() + ": RLIMIT_FSIZE " + std::to_string(budget) + " of " +
                 std::to_string(largest) + " bytes");
    const std::string root = temp / ("limit-" + std::to_string(budget));
    fs::create_directory(root);
    scenario.setup(root);
    const ProcessResult result =
        RunToolWith(scenario.args, {.cwd = root, .file_size_limit = static_cast<int64_t>(budget)});
    ExpectCleanFailure(result, ref.before, ref.done, SnapshotTree(root));
    fs::remove_all(root);
  }
}

// A tmpfs of a given size mounted at a directory, unmounted (lazily) on destruction.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& dir, uint64_t bytes) : dir_(dir) {
    fs::create_directories(dir);
    const std::string options = "size=" + std::to_string(bytes);
    if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      error_ = std::strerror(errno);
    }
  }
  ~SmallTmpfs() {
    if (error_.empty()) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  std::string error_;
};

// The inputs stay outside the small file system; the output directory is the tmpfs. For
// materialize, whose outputs go into the work dir beside its inputs, the tmpfs holds the
// whole work dir and the budget is on top of the inputs.
TEST_P(FullDiskTest, SmallTmpfsGivesACodedErrorAndNoPartialFile) {
  const Scenario& scenario = FindScenario(GetParam());
  TempDir temp;
  {
    SmallTmpfs probe(temp / "probe", 1 << 20);
    if (!probe.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (" << probe.error() << ")";
  }
  const Reference ref = RunReference(scenario, temp / "reference");
  const uint64_t largest = LargestOutput(ref.before, ref.done);
  const bool in_place = GetParam() == "materialize";
  const std::string full_dir = in_place ? "work" : "out";
  uint64_t inputs = 0;
  for (const auto& [path, entry] : ref.before) {
    if (in_place && path.rfind("work/", 0) == 0) inputs += PageRounded(entry.size);
  }

  for (uint64_t budget : Budgets(largest, kPage)) {
    // Whole pages (a size of 0 would mean no limit at all).
    const uint64_t size = std::max(inputs + budget / kPage * kPage, kPage);
    SCOPED_TRACE(GetParam() + ": tmpfs of " + std::to_string(size) + " bytes at " + full_dir +
                 "/, largest output " + std::to_string(largest));
    const std::string root = temp / ("tmpfs-" + std::to_string(budget));
    fs::create_directory(root);
    SmallTmpfs tmpfs(root + "/" + full_dir, size);
    ASSERT_TRUE(tmpfs.mounted()) << tmpfs.error();
    scenario.setup(root);
    const Tree before = SnapshotTree(root);
    const ProcessResult result = RunToolWith(scenario.args, {.cwd = root});
    // Partial progress is allowed (materialize writes tensor by tensor), a partial file is not.
    ExpectCleanFailure(result, before, ref.done, SnapshotTree(root));
  }
}

INSTANTIATE_TEST_SUITE_P(Commands, FullDiskTest,
                         ::testing::Values("wrap", "materialize", "apply_npy",
                                           "apply_safetensors"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace iotx::test
