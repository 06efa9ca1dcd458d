// Hostile work dirs and output dirs: read-only ones, dangling symlinks in sg*/ (replaced
// atomically), a `transposed_inputs` that is a file or leads outside the work dir, partition
// dirs and planted links that lead outside. Every refusal is exit 1 with a coded diagnostic,
// leaves the work dir as it was, and the directory outside stays byte-for-byte unchanged.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "faults/fault_support.h"
#include "faults/scenarios.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

// Makes a directory read-only for every process, root included: a read-only bind mount of it
// onto itself. Without the right to mount, a non-root user gets the same from permission bits;
// root ignores those, so then the view is unavailable and the test skips.
class ReadOnlyView {
 public:
  explicit ReadOnlyView(const std::string& dir) : dir_(dir) {
    if (mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) == 0) {
      if (mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0) {
        how_ = kMount;
        return;
      }
      umount2(dir.c_str(), MNT_DETACH);
    }
    const std::string mount_error = std::strerror(errno);
    if (geteuid() != 0) {
      fs::permissions(dir, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove);
      how_ = kPermissions;
      return;
    }
    why_not_ = "running as root, which permission bits do not stop, and a read-only bind mount "
               "failed (" + mount_error + ")";
  }
  ~ReadOnlyView() {
    if (how_ == kMount) umount2(dir_.c_str(), MNT_DETACH);
    if (how_ == kPermissions) {
      fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::add);
    }
  }
  bool available() const { return how_ != kNone; }
  const std::string& why_not() const { return why_not_; }

 private:
  enum How { kNone, kMount, kPermissions };
  std::string dir_;
  How how_ = kNone;
  std::string why_not_;
};

// A work dir (the fault scenarios' tensors) beside a directory "outside" holding a decoy
// value_w0.npy and a victim file that links planted in the work dir point at.
class WorkDirFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetUpWorkDir(work_);
    fs::create_directory(outside_);
    WriteFile(outside_ + "/value_w0.npy", "decoy: not to be replaced");
    WriteFile(outside_ + "/victim.npy", "victim: not to be written through");
  }

  ProcessResult Materialize(bool verify) {
    std::vector<std::string> args = {"materialize", work_, "--quiet"};
    if (verify) args.push_back("--verify");
    return RunToolWith(args, {});
  }

  // Runs materialize with and without --verify and expects both to be refused with `code`,
  // changing nothing in the work dir and nothing outside.
  void ExpectRefused(const std::string& code) {
    const Tree work_before = SnapshotTree(work_);
    const Tree outside_before = SnapshotTree(outside_);
    for (bool verify : {true, false}) {
      SCOPED_TRACE(verify ? "materialize --verify" : "materialize");
      const ProcessResult result = Materialize(verify);
      EXPECT_EQ(result.signal, 0);
      EXPECT_EQ(result.exit_code, 1) << result.err;
      EXPECT_NE(result.err.find("iotx: error: " + code + " "), std::string::npos) << result.err;
      EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
      EXPECT_EQ(SnapshotTree(work_), work_before) << DescribeTree(SnapshotTree(work_));
      EXPECT_EQ(SnapshotTree(outside_), outside_before);
    }
  }

  TempDir temp_;
  const std::string work_ = temp_ / "work";
  const std::string outside_ = temp_ / "outside";
};

TEST_F(WorkDirFaultTest, ReadOnlyWorkDirIsRefusedUnchanged) {
  ReadOnlyView read_only(work_);
  if (!read_only.available()) GTEST_SKIP() << read_only.why_not();
  ExpectRefused("IOTX_E302");
}

TEST_F(WorkDirFaultTest, ReadOnlyPartitionDirFailsCleanlyAndARerunConverges) {
  // The reference: the same work dir materialized with nothing in the way.
  const std::string reference = temp_ / "reference";
  SetUpWorkDir(reference);
  const Tree before = SnapshotTree(reference);
  ASSERT_EQ(RunToolWith({"materialize", reference, "--verify", "--quiet"}, {}).exit_code, 0);
  const Tree done = SnapshotTree(reference);

  {
    ReadOnlyView read_only(work_ + "/sg01");
    if (!read_only.available()) GTEST_SKIP() << read_only.why_not();
    const ProcessResult result = Materialize(/*verify=*/true);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(HasErrorCode(result.err)) << result.err;
    EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
    const auto problems = CompareInterrupted(before, done, SnapshotTree(work_), false);
    EXPECT_TRUE(problems.empty()) << problems.front();
  }
  const ProcessResult rerun = Materialize(/*verify=*/true);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(SnapshotTree(work_), done);
}

TEST_F(WorkDirFaultTest, ReadOnlyOutputDirsAreRefusedUnchanged) {
  const std::string root = temp_ / "apply";
  fs::create_directory(root);
  for (const std::string name : {"wrap", "apply_npy", "apply_safetensors"}) {
    SCOPED_TRACE(name);
    const Scenario& scenario = FindScenario(name);
    fs::remove_all(root);
    fs::create_directory(root);
    scenario.setup(root);
    const Tree before = SnapshotTree(root);
    ReadOnlyView read_only(root + "/out");
    if (!read_only.available()) GTEST_SKIP() << read_only.why_not();
    const ProcessResult result = RunToolWith(scenario.args, {.cwd = root});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(HasErrorCode(result.err)) << result.err;
    EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
    EXPECT_EQ(SnapshotTree(root), before);
  }
}

TEST_F(WorkDirFaultTest, DanglingLinksInPartitionDirsAreReplacedWithoutAGap) {
  const std::string reference = temp_ / "reference";
  SetUpWorkDir(reference);
  ASSERT_EQ(RunToolWith({"materialize", reference, "--verify", "--quiet"}, {}).exit_code, 0);
  const Tree done = SnapshotTree(reference);

  // Dangling links where the fan-out puts its own: an absolute one leading nowhere, a relative
  // one to a tensor that is gone, and a link to the outside decoy.
  fs::create_symlink("/nonexistent/iotx/value_w0.npy", work_ + "/sg00/value_w0.npy");
  fs::create_symlink("../../transposed_inputs/value_gone.npy", work_ + "/nc0/sg00/value_b.npy");
  fs::create_symlink(outside_ + "/value_w0.npy", work_ + "/sg01/value_w0.npy");
  const Tree outside_before = SnapshotTree(outside_);

  // While materialize runs, the names must never be missing: each link is renamed over the
  // old one, not removed and re-created.
  std::atomic<bool> running{true};
  std::atomic<int> missing{0};
  std::atomic<long> looks{0};
  std::thread watcher([&] {
    const std::string names[] = {work_ + "/sg00/value_w0.npy", work_ + "/nc0/sg00/value_b.npy",
                                 work_ + "/sg01/value_w0.npy"};
    while (running) {
      for (const std::string& name : names) {
        struct stat st;
        if (lstat(name.c_str(), &st) != 0) ++missing;
        ++looks;
      }
    }
  });
  const ProcessResult result = Materialize(/*verify=*/true);
  running = false;
  watcher.join();

  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(missing, 0) << "a link was missing in " << missing << " of " << looks << " looks";
  EXPECT_EQ(SnapshotTree(work_), done) << DescribeTree(SnapshotTree(work_));
  EXPECT_EQ(SnapshotTree(outside_), outside_before);
  if (PythonCanCheckOutputs()) {
    int exit_code = 0;
    const std::string report = CheckOutputsWithPython({work_}, &exit_code);
    EXPECT_EQ(exit_code, 0) << report;
  }
}

TEST_F(WorkDirFaultTest, TransposedInputsThatIsAFileIsRefused) {
  WriteFile(work_ + "/transposed_inputs", "a regular file where the folder belongs");
  ExpectRefused("IOTX_E304");
}

TEST_F(WorkDirFaultTest, TransposedInputsLinkingOutsideIsRefused) {
  fs::create_symlink(outside_, work_ + "/transposed_inputs");
  ExpectRefused("IOTX_E303");
}

TEST_F(WorkDirFaultTest, RelativeTransposedInputsLinkClimbingOutIsRefused) {
  fs::create_symlink("../outside", work_ + "/transposed_inputs");
  ExpectRefused("IOTX_E303");
}

TEST_F(WorkDirFaultTest, PlantedLinkInTransposedInputsIsNotWrittenThrough) {
  fs::create_directory(work_ + "/transposed_inputs");
  fs::create_symlink(outside_ + "/victim.npy", work_ + "/transposed_inputs/value_w0.npy");
  ExpectRefused("IOTX_E303");
}

TEST_F(WorkDirFaultTest, PartitionDirLinkingOutsideIsRefused) {
  fs::remove(work_ + "/sg01");
  fs::create_symlink(outside_, work_ + "/sg01");
  ExpectRefused("IOTX_E303");
}

TEST_F(WorkDirFaultTest, PlantedLinkInApplyOutputDirIsNotWrittenThrough) {
  const std::string root = temp_ / "apply";
  fs::create_directory(root);
  const Scenario& scenario = FindScenario("apply_npy");
  scenario.setup(root);
  fs::create_symlink(outside_ + "/victim.npy", root + "/out/value_w0.npy");
  const Tree before = SnapshotTree(root);
  const Tree outside_before = SnapshotTree(outside_);
  const ProcessResult result = RunToolWith(scenario.args, {.cwd = root});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("iotx: error: IOTX_E303 "), std::string::npos) << result.err;
  EXPECT_EQ(SnapshotTree(root), before);
  EXPECT_EQ(SnapshotTree(outside_), outside_before);
}

}  // namespace
}  // namespace iotx::test
