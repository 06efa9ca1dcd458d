// An input truncated while `iotx apply` or `iotx materialize --verify` reads it (issue 18,
// item 4). The tools read their inputs through memory mappings; a page past the new end of
// the file raises SIGBUS, which used to kill the process midway. Now every run must end with
// exit status 1 and a diagnostic with a code (IOTX_E301 when the truncation hit while the
// file was being read; a format error when it came before), never a signal, and every final
// name must hold what it held before or what an uninterrupted run writes: nothing made from
// the damaged input is published. Truncated at random points, several rounds per case; the
// seed is printed so a failure can be replayed (IOTX_TEST_SEED).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "faults/fault_support.h"
#include "faults/scenarios.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::microseconds;

struct Case {
  std::string scenario;
  std::string input;  // the file truncated, relative to the run's root
};

// Rounds per case at most; the case stops early once the guard caught enough truncations.
constexpr int kMaxRounds = 24;
constexpr int kEnoughCaught = 3;

class TruncateTest : public ::testing::TestWithParam<Case> {};

TEST_P(TruncateTest, ATruncatedInputIsACodedErrorAndNothingMadeFromItIsPublished) {
  const Case& c = GetParam();
  const Scenario& scenario = FindScenario(c.scenario);
  TempDir temp;
  const std::string reference = temp / "reference";
  fs::create_directory(reference);
  scenario.setup(reference);
  Tree before = SnapshotTree(reference);
  const microseconds full = TimeTool(scenario.args, reference);
  Tree done = SnapshotTree(reference);
  // The truncated input is expected to change; everything else is judged.
  before.erase(c.input);
  done.erase(c.input);

  const char* env_seed = std::getenv("IOTX_TEST_SEED");
  const uint64_t seed = env_seed ? std::strtoull(env_seed, nullptr, 10) : std::random_device{}();
  std::cout << c.scenario << " truncating " << c.input << ": seed " << seed
            << " (IOTX_TEST_SEED replays it), uninterrupted run " << full.count() / 1000
            << " ms\n";
  std::mt19937_64 rng{seed};
  const std::string root = temp / "run";
  int caught = 0, before_read = 0, finished = 0;
  for (int round = 0; round < kMaxRounds && caught < kEnoughCaught; ++round) {
    fs::remove_all(root);
    fs::create_directory(root);
    scenario.setup(root);
    const std::string input = root + "/" + c.input;
    const auto size = static_cast<off_t>(fs::file_size(input));
    const microseconds delay{
        std::uniform_int_distribution<int64_t>(0, full.count())(rng)};
    SCOPED_TRACE("round " + std::to_string(round) + ": truncated after " +
                 std::to_string(delay.count()) + " us");
    Process process(ToolArgv(scenario.args), {.cwd = root});
    std::this_thread::sleep_for(delay);
    ASSERT_EQ(truncate(input.c_str(), size / 2), 0);
    const ProcessResult result = process.Wait();
    ASSERT_EQ(result.signal, 0) << "killed by signal " << result.signal << "\n" << result.err;
    if (result.exit_code == 0) {
      ++finished;  // it had read everything before the truncation
    } else {
      ASSERT_EQ(result.exit_code, 1) << result.err;
      EXPECT_TRUE(HasErrorCode(result.err)) << result.err;
      EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
      if (result.err.find("IOTX_E301") != std::string::npos) {
        ++caught;
      } else {
        ++before_read;
      }
    }
    Tree now = SnapshotTree(root);
    now.erase(c.input);
    const std::vector<std::string> problems =
        CompareInterrupted(before, done, now, /*allow_hidden=*/false);
    ASSERT_TRUE(problems.empty()) << result.err << JoinProblems(problems);
  }
  std::cout << "  " << caught << " caught while read (IOTX_E301), " << before_read
            << " refused before reading, " << finished << " finished first\n";
  EXPECT_GE(caught, 1) << "no truncation landed while the input was read: the test proved "
                          "nothing";
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, TruncateTest,
    ::testing::Values(Case{"apply_safetensors", "model.safetensors"},
                      Case{"apply_npy", "w1.npy"},  // transposed by the kernel
                      Case{"apply_npy", "x.npy"},   // no spec: written straight from the input
                      Case{"apply_sharded", "model-00002-of-00004.safetensors"},
                      Case{"apply_stacked", "model.safetensors"},  // read in pieces
                      Case{"apply_stacked_mapped", "model.safetensors"},
                      Case{"materialize", "work/inp-000.p"}),
    [](const auto& info) {
      std::string name = info.param.scenario + "_" + info.param.input;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace iotx::test
