// Hostile work dirs and output dirs: read-only ones, dangling symlinks in sg*/ (replaced
// atomically), a `transposed_inputs` that is a file or leads outside the work dir, partition
// dirs and planted links that lead outside, directories aliased onto each other (a partition
// dir that is transposed_inputs/, or the other way round), FIFOs and devices where outputs go. Every refusal is exit 1 with a coded diagnostic,
// leaves the work dir as it was, and the directory outside stays byte-for-byte unchanged.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

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

// A Unix socket bound at `path` (nobody listens: it only has to be there).
void MakeSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(address.sun_path)) << path;
  std::copy(path.begin(), path.end(), address.sun_path);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  close(fd);
}

// A work dir (the fault scenarios' tensors) beside a directory "outside" holding a decoy
// value_w0.npy and a victim file that links planted in the work dir point at.
class WorkDirFaultTest : public ::testing::Test {
 protected:
  // Small inputs: these tests are about paths, and some run the tool dozens of times.
  void SetUp() override {
    SetUpWorkDir(work_, WorkDirInputs::kSmall);
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
  SetUpWorkDir(reference, WorkDirInputs::kSmall);
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
  // The large inputs: the watcher below looks while the run replaces the links.
  fs::remove_all(work_);
  SetUpWorkDir(work_, WorkDirInputs::kLarge);
  const std::string reference = temp_ / "reference";
  SetUpWorkDir(reference, WorkDirInputs::kLarge);
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

// Every way the fan-out's source and a partition dir can be one directory (issue 18, item 1):
// each layout is materialized twice with --verify and twice without, and after every run
// each value_*.npy a complete run makes is readable, byte for byte, from transposed_inputs/
// and from every partition dir, and no path in the work dir is a link loop.
TEST_F(WorkDirFaultTest, AliasedDirsNeverTurnAFileIntoALinkToItself) {
  const std::string reference = temp_ / "reference";
  SetUpWorkDir(reference, WorkDirInputs::kSmall);
  ASSERT_EQ(RunToolWith({"materialize", reference, "--verify", "--quiet"}, {}).exit_code, 0);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(reference + "/transposed_inputs")) {
    if (entry.path().extension() == ".npy") names.push_back(entry.path().filename());
  }
  ASSERT_FALSE(names.empty());

  struct Layout {
    std::string name;
    std::function<void(const std::string&)> make;
  };
  const auto link = [](const std::string& target, const std::string& at) {
    fs::remove_all(at);
    fs::create_directories(fs::path(at).parent_path());
    fs::create_symlink(target, at);
  };
  const std::vector<Layout> layouts = {
      {"sg01 -> transposed_inputs (relative)",
       [&](const std::string& w) {
         fs::create_directory(w + "/transposed_inputs");
         link("transposed_inputs", w + "/sg01");
       }},
      {"sg01 -> transposed_inputs (absolute)",
       [&](const std::string& w) {
         fs::create_directory(w + "/transposed_inputs");
         link(w + "/transposed_inputs", w + "/sg01");
       }},
      {"nc0/sg00 -> ../transposed_inputs",
       [&](const std::string& w) {
         fs::create_directory(w + "/transposed_inputs");
         link("../transposed_inputs", w + "/nc0/sg00");
       }},
      {"transposed_inputs -> sg00", [&](const std::string& w) { link("sg00", w + "/transposed_inputs"); }},
      {"transposed_inputs -> nc0/sg00",
       [&](const std::string& w) { link("nc0/sg00", w + "/transposed_inputs"); }},
      {"transposed_inputs -> sg00 and sg01 -> sg00",
       [&](const std::string& w) {
         link("sg00", w + "/transposed_inputs");
         link("sg00", w + "/sg01");
       }},
      {"sg00 -> sg01", [&](const std::string& w) { link("sg01", w + "/sg00"); }},
      {"sg00 -> the work dir itself", [&](const std::string& w) { link(".", w + "/sg00"); }},
      {"transposed_inputs/value_*.npy -> sg00/value_*.npy (files made there by a first run)",
       [&](const std::string& w) {
         ASSERT_EQ(RunToolWith({"materialize", w, "--verify", "--quiet"}, {}).exit_code, 0);
         for (const std::string& name : names) {
           fs::remove(w + "/sg00/" + name);
           fs::rename(w + "/transposed_inputs/" + name, w + "/sg00/" + name);
           fs::create_symlink("../sg00/" + name, w + "/transposed_inputs/" + name);
         }
       }},
  };
  for (const Layout& layout : layouts) {
    for (bool verify_first : {true, false}) {
      SCOPED_TRACE(layout.name + (verify_first ? ", --verify first" : ", plain first"));
      fs::remove_all(work_);
      SetUpWorkDir(work_, WorkDirInputs::kSmall);
      layout.make(work_);
      for (int run = 0; run < 4; ++run) {
        const bool verify = (run < 2) == verify_first;
        SCOPED_TRACE("run " + std::to_string(run) + (verify ? " --verify" : ""));
        const ProcessResult result = Materialize(verify);
        ASSERT_EQ(result.signal, 0);
        ASSERT_TRUE(result.exit_code == 0 || (result.exit_code == 1 && HasErrorCode(result.err)))
            << result.err;
        EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
        // No loops: every path resolves.
        for (const auto& entry : fs::recursive_directory_iterator(work_)) {
          std::error_code ec;
          const fs::path resolved = fs::canonical(entry.path(), ec);
          ASSERT_FALSE(ec) << entry.path() << " -> " << resolved << ": " << ec.message();
        }
        // Once a --verify run has made them, the files are there, complete, wherever they
        // should be seen.
        if (!fs::exists(work_ + "/transposed_inputs/" + names.front())) continue;
        for (const std::string dir : {"transposed_inputs", "sg00", "sg01", "nc0/sg00"}) {
          for (const std::string& name : names) {
            const std::string path = work_ + "/" + dir + "/" + name;
            ASSERT_TRUE(fs::exists(path)) << path << "\n" << result.err;
            ASSERT_EQ(ReadFile(path), ReadFile(reference + "/transposed_inputs/" + name)) << path;
          }
        }
      }
    }
  }
}

// A FIFO, a socket or a link to a device where materialize or apply puts an output is refused
// before anything is written, and stays what it was (issue 18, item 2).
TEST_F(WorkDirFaultTest, FifosAndDevicesWhereOutputsGoAreRefusedUnchanged) {
  struct Place {
    std::string scenario;
    std::string path;  // relative to the scenario's root
  };
  const std::vector<Place> places = {
      {"materialize", "work/transposed_inputs/value_w0.npy"},
      {"materialize", "work/transposed_inputs/inp-000.p"},
      {"materialize", "work/sg01/value_w1.npy"},
      {"materialize", "work/nc0/sg00/value_b.npy"},
      {"apply_npy", "out/value_w0.npy"},
      {"apply_npy", "out/value_x.npy"},
      {"apply_safetensors", "out/model.safetensors"},
  };
  const std::string root = temp_ / "outputs";
  for (const Place& place : places) {
    const bool partition_dir = place.path.find("/sg0") != std::string::npos;
    for (const std::string kind : {"fifo", "socket", "link to /dev/null", "link to /dev/stdout"}) {
      // A link in a partition dir is the fan-out's own to replace (never written through:
      // DanglingLinksInPartitionDirsAreReplacedWithoutAGap).
      if (partition_dir && kind.starts_with("link")) continue;
      SCOPED_TRACE(place.scenario + ": " + place.path + " is a " + kind);
      fs::remove_all(root);
      fs::create_directory(root);
      const Scenario& scenario = FindScenario(place.scenario);
      scenario.setup(root);
      const std::string path = root + "/" + place.path;
      fs::create_directories(fs::path(path).parent_path());
      if (kind == "fifo") {
        ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
      } else if (kind == "socket") {
        MakeSocket(path);
      } else {
        fs::create_symlink(kind == "link to /dev/null" ? "/dev/null" : "/dev/stdout", path);
      }
      const Tree before = SnapshotTree(root);
      const ProcessResult result = RunToolWith(scenario.args, {.cwd = root});
      EXPECT_EQ(result.signal, 0);
      EXPECT_EQ(result.exit_code, 1) << result.err;
      // A FIFO is refused as not a regular file; a link to a device also leads outside the
      // directory, which may be what is reported.
      const bool not_regular = result.err.find("iotx: error: IOTX_E305 ") != std::string::npos;
      const bool outside = result.err.find("iotx: error: IOTX_E303 ") != std::string::npos;
      EXPECT_TRUE(not_regular || (kind.starts_with("link") && outside)) << result.err;
      EXPECT_EQ(SnapshotTree(root), before) << DescribeTree(SnapshotTree(root));
      EXPECT_TRUE(kind != "fifo" || fs::is_fifo(path));
    }
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace iotx::test
