// `iotx materialize --verify` killed with SIGKILL at random points of a run over ~72 MB of
// tensors: no file under a final name is ever truncated (every value_*.npy that exists loads
// completely in numpy, io_transposes.json parses and is either the original or the
// simplified list), and a re-run completes the job correctly and leaves no temporaries.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "producer_test_util.h"
#include "support/process.h"
#include "support/temp_dir.h"

extern char** environ;

namespace iotx::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Runs `iotx materialize --verify work` and SIGKILLs it after `delay` unless it finished.
// Returns whether the kill landed (the process died of SIGKILL).
bool RunAndKill(const std::string& work, std::chrono::microseconds delay) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string tool = IOTX_TOOL_PATH, command = "materialize", flag = "--verify";
  char* argv[] = {tool.data(), command.data(), const_cast<char*>(work.c_str()), flag.data(),
                  nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start iotx");
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST(MaterializeKillTest, KilledRunsLeaveNoTruncatedFileAndAReRunFinishes) {
  if (!PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
  TempDir temp;
  const std::string work = temp / "work", orig = temp / "orig.json";
  fs::create_directory(work);
  ProcessResult made = RunCheck({"big", work, orig});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string original_json = ReadFile(work + "/io_transposes.json");

  // How long an uninterrupted run takes here, on a copy, so the kills spread over a run. An
  // untimed run first: the first of a fresh build also measures the machine's calibration
  // (written to IOTX_CACHE_DIR; 0.1-0.3 s on a release build, seconds with sanitizers), and
  // timed, it spread most kills past the end of the later, shorter runs (2 of 10 killed).
  const std::string warm_up = temp / "warm-up", probe = temp / "probe";
  fs::copy(work, warm_up, fs::copy_options::recursive);
  ASSERT_EQ(RunTool({"materialize", warm_up, "--verify", "--quiet"}).exit_code, 0);
  fs::remove_all(warm_up);
  fs::copy(work, probe, fs::copy_options::recursive);
  const auto start = Clock::now();
  ASSERT_EQ(RunTool({"materialize", probe, "--verify", "--quiet"}).exit_code, 0);
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  const std::string simplified_json = ReadFile(probe + "/io_transposes.json");
  fs::remove_all(probe);

  std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> fraction(0.02, 1.0);
  int killed = 0;
  for (int round = 0; round < 10; ++round) {
    if (round % 3 == 0) {  // a fresh start now and then, so kills also land on early states
      fs::remove_all(work + "/transposed_inputs");
      std::vector<fs::path> links;  // the fan-out's, which would dangle now
      for (const auto& entry : fs::recursive_directory_iterator(work)) {
        if (entry.is_symlink()) links.push_back(entry.path());
      }
      for (const fs::path& link : links) fs::remove(link);
      WriteFile(work + "/io_transposes.json", original_json);
    }
    const auto delay = std::chrono::microseconds(
        static_cast<int64_t>(static_cast<double>(full.count()) * fraction(rng)));
    SCOPED_TRACE("round " + std::to_string(round) + ", killed after " +
                 std::to_string(delay.count()) + " us of a " + std::to_string(full.count()) +
                 " us run");
    killed += RunAndKill(work, delay) ? 1 : 0;
    ProcessResult intact = RunCheck({"intact", work});
    ASSERT_EQ(intact.exit_code, 0) << intact.err;
    const std::string json = ReadFile(work + "/io_transposes.json");
    EXPECT_TRUE(json == original_json || json == simplified_json) << json;
  }
  EXPECT_GE(killed, 3) << "too few runs were killed midway for the test to mean much";

  ProcessResult rerun = RunTool({"materialize", work, "--verify"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  ProcessResult check = RunCheck({"check", work, orig, "--verify"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(HiddenEntries(work), ::testing::IsEmpty()) << "temporaries were left behind";
}

}  // namespace
}  // namespace iotx::test
