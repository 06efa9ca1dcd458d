// `iotx plan` and `iotx bench` from the outside: output sections, exit codes, diagnostics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

TEST(PlanCliTest, PrintsTheFoldedProblemKernelTileThreadingAndSbuf) {
  auto r = RunTool({"plan", "--dtype", "f32", "--shape", "6144,256", "--reshape", "3,16,128,2,2,64",
                    "--transpose", "0,4,5,3,1,2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"dtype:    f32", "shape [3, 16, 128, 2, 2, 64]",
                           "output [3, 2, 64, 2, 16, 128]", "6291456 bytes", "folded:",
                           "strategy: ", "machine:", "walk:", "tile:", "driver:", "threads:", "stores:",
                           "sbuf:", "partition"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

// `iotx plan` for `shape` (`dtype`, transposed; `threads` 0: the default) with its streaming
// calibration kept in `cache_dir`.
ProcessResult PlanWithCache(const std::string& cache_dir, const std::string& shape,
                            const std::string& dtype = "f32", int threads = 0) {
  std::vector<std::string> argv = {"env", "IOTX_CACHE_DIR=" + cache_dir};
  std::vector<std::string> plan = {"plan", "--dtype",     dtype, "--shape",
                                   shape,  "--transpose", "1,0"};
  if (threads > 0) {
    plan.push_back("--threads");
    plan.push_back(std::to_string(threads));
  }
  for (std::string& arg : ToolArgv(plan)) argv.push_back(std::move(arg));
  return RunProcess(argv);
}

// Rewrites the thresholds of the one calibration file in `cache_dir`, keeping its signature
// (one_thread_bytes too where it is given).
void SetThresholds(const std::string& cache_dir, int64_t bytes, int64_t staged_bytes,
                   int64_t one_thread_bytes = -1) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir))
    files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u) << "one calibration file expected in " << cache_dir;
  std::ifstream in(files[0]);
  std::string line, text;
  while (std::getline(in, line)) {
    if (line.starts_with("bytes ")) line = "bytes " + std::to_string(bytes);
    if (line.starts_with("staged_bytes ")) line = "staged_bytes " + std::to_string(staged_bytes);
    if (line.starts_with("one_thread_bytes ") && one_thread_bytes >= 0) {
      line = "one_thread_bytes " + std::to_string(one_thread_bytes);
    }
    text += line + "\n";
  }
  in.close();
  std::ofstream(files[0], std::ios::trunc) << text;
}

// The `stores:` line gives the planner's reason: a plan that would stage its tiles says it walks
// in place when the staged threshold made it stream, not when the general one did.
TEST(PlanCliTest, StoresLineNamesWhyThePlanStreams) {
  TempDir cache;
  const std::string shape = "2048,2048";  // 16 MiB, rows 8 KiB apart: staged with ordinary stores
  const ProcessResult first = PlanWithCache(cache.path(), shape);  // calibrates, writes the file
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const size_t machine = first.out.find("machine:  ");
  ASSERT_NE(machine, std::string::npos) << first.out;
  const std::string machine_line =
      first.out.substr(machine, first.out.find('\n', machine) - machine);
  const bool wide = machine_line.find(", 64-byte vectors") != std::string::npos;
  constexpr int64_t kNever = int64_t{1} << 40;
  constexpr int64_t kTwoMiB = int64_t{2} << 20;
  const char* kInPlace = "1-, 2- or 4-byte tiles on 64-byte vectors (this one: it walks in place";
  const char* kByteRule = "for 1-byte tiles in halves walked in place (this one)";

  // The staged threshold alone: the rule's tiles (4-byte on 64-byte vectors) stream in place,
  // narrower vectors keep the staged walk.
  SetThresholds(cache.path(), kNever, kTwoMiB);
  ProcessResult r = PlanWithCache(cache.path(), shape);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!wide) {
    EXPECT_NE(r.out.find("stores:   regular"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(kInPlace), std::string::npos) << r.out;
    GTEST_SKIP() << "the rest is for 64-byte vectors: " << machine_line;
  }
  EXPECT_NE(r.out.find("stores:   cache-bypassing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kInPlace), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(kByteRule), std::string::npos) << r.out;
  // 1-byte tiles that walk in place (rows 1984 B apart, 4 MB) stream from the same threshold,
  // on AVX-512, where they are built in halves; the stores line says which rule decided.
  const ProcessResult bytes = PlanWithCache(cache.path(), "1984,2112", "i8");
  ASSERT_EQ(bytes.exit_code, 0) << bytes.err;
  EXPECT_NE(bytes.out.find("strategy: tiles"), std::string::npos) << bytes.out;
  if (bytes.out.find("AVX3 target") != std::string::npos) {
    EXPECT_NE(bytes.out.find("stores:   cache-bypassing"), std::string::npos) << bytes.out;
    EXPECT_NE(bytes.out.find(kByteRule), std::string::npos) << bytes.out;
  }

  SetThresholds(cache.path(), kTwoMiB, kTwoMiB);  // the general threshold decides first
  r = PlanWithCache(cache.path(), shape);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stores:   cache-bypassing"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(kInPlace), std::string::npos) << r.out;

  SetThresholds(cache.path(), kNever, kNever);
  r = PlanWithCache(cache.path(), shape);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stores:   regular"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("strategy: staged-tiles"), std::string::npos) << r.out;
}

// One thread's staged 8-byte tiles stream in place from where its copies leave the cache
// (one_thread_bytes), and the stores line says that rule decided.
TEST(PlanCliTest, StoresLineNamesOneThreadsWideTileRule) {
  TempDir cache;
  const std::string shape = "2048,2048";  // f64, 32 MiB, rows 16 KiB apart: staged regularly
  const ProcessResult first = PlanWithCache(cache.path(), shape, "f64", 1);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  if (first.out.find(", 64-byte vectors") == std::string::npos) {
    GTEST_SKIP() << "the rule is for 64-byte vectors:\n" << first.out;
  }
  constexpr int64_t kNever = int64_t{1} << 40;
  const char* kRule =
      "for one thread's plans that would stage 8- or 16-byte tiles (this one: it walks in place "
      "instead)";
  SetThresholds(cache.path(), kNever, kNever, int64_t{2} << 20);
  ProcessResult r = PlanWithCache(cache.path(), shape, "f64", 1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(kRule), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stores:   cache-bypassing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("strategy: tiles"), std::string::npos) << r.out;
  // Two threads: the one-thread rules are not asked, the tiles stay staged.
  r = PlanWithCache(cache.path(), shape, "f64", 2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("for one thread's"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("strategy: staged-tiles"), std::string::npos) << r.out;
  // Never: staged, ordinary stores, and the rule is not named.
  SetThresholds(cache.path(), kNever, kNever, 0);
  r = PlanWithCache(cache.path(), shape, "f64", 1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("8- or 16-byte tiles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stores:   regular"), std::string::npos) << r.out;
}

// Outputs too small for the calibration to be asked say so, for one thread and for several.
TEST(PlanCliTest, StoresLineOfOutputsBelowTheL2) {
  TempDir cache;
  ProcessResult r = PlanWithCache(cache.path(), "64,64", "f32", 1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("automatic; below the L2 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(") one thread's stores stay regular"), std::string::npos) << r.out;
  r = PlanWithCache(cache.path(), "64,64", "f32", 2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("automatic; below twice the L2 ("), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(cache.path())) << "calibrated for a 16 KiB output";
}

TEST(PlanCliTest, ShapeAloneIsTheShapeAfterReshape) {
  auto r = RunTool({"plan", "--dtype", "bf16", "--shape", "64,32", "--transpose", "1,0",
                    "--device", "trn1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output [32, 64], 2-byte elements, 4096 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trn1"), std::string::npos);
}

TEST(PlanCliTest, ReshapeMustKeepTheElementCount) {
  auto r = RunTool({"plan", "--shape", "6144,256", "--reshape", "3,16,128", "--transpose", "0,1,2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NCC_IHNW003"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("reshape"), std::string::npos) << r.err;
}

TEST(PlanCliTest, BadPermutationIsAFailureWithItsCode) {
  auto r = RunTool({"plan", "--shape", "4,5", "--transpose", "0,0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("IOTX_E110"), std::string::npos) << r.err;
}

TEST(PlanCliTest, MalformedOptionsAreUsageErrors) {
  EXPECT_EQ(RunTool({"plan", "--shape", "4,x"}).exit_code, 2);
  EXPECT_EQ(RunTool({"plan", "--shape", "4,5", "--transpose", "1;0"}).exit_code, 2);
  EXPECT_EQ(RunTool({"plan", "--shape", "4,5", "--dtype", "f33"}).exit_code, 2);
  EXPECT_EQ(RunTool({"plan", "--shape", "4,5", "--stores", "sometimes"}).exit_code, 2);
  EXPECT_EQ(RunTool({"plan"}).exit_code, 2);
}

TEST(BenchCliTest, JsonReportsBothRatesAndTheirRatio) {
  auto r = RunTool({"bench", "--dtype", "f32", "--shape", "64,48", "--transpose", "1,0", "--reps",
                    "3", "--min-seconds", "0.001", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["bytes"], 64 * 48 * 4);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_GT(j["iotx_gbps"].get<double>(), 0);
  EXPECT_GT(j["memcpy_gbps"].get<double>(), 0);
  EXPECT_GT(j["ratio"].get<double>(), 0);
}

TEST(BenchCliTest, TextOutputAndUsageErrors) {
  auto r = RunTool({"bench", "--dtype", "i8", "--shape", "32,32", "--transpose", "1,0", "--reps",
                    "1", "--min-seconds", "0.001", "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("memcpy"), std::string::npos);
  EXPECT_NE(r.out.find("ratio"), std::string::npos);
  EXPECT_EQ(RunTool({"bench", "--shape", "4,4", "--threads", "0"}).exit_code, 2);
  EXPECT_EQ(RunTool({"bench", "--shape", "4,0", "--transpose", "1,0"}).exit_code, 1);
}

TEST(BenchCliTest, CheckComparesTheOutputWithAnElementByElementPermute) {
  // Layouts of each strategy family and width, one and two threads: --check passes only where
  // the kernel's output equals the naive permute of a source whose bytes all differ.
  const std::vector<std::vector<std::string>> cases = {
      {"--dtype", "f32", "--shape", "64,48", "--transpose", "1,0"},
      {"--dtype", "i8", "--shape", "5,7,9,11,13", "--transpose", "4,3,2,1,0"},
      {"--dtype", "bf16", "--shape", "6144,256", "--reshape", "3,2048,2,128", "--transpose",
       "0,3,2,1"},
      {"--dtype", "c128", "--shape", "33,17,5", "--transpose", "2,0,1"},
      {"--dtype", "f64", "--shape", "96,114,8,2", "--transpose", "3,1,0,2"},
  };
  for (const auto& c : cases) {
    for (const char* threads : {"1", "2"}) {
      std::vector<std::string> args = {"bench", "--reps",  "1",         "--min-seconds",
                                       "0.001", "--check", "--threads", threads};
      args.insert(args.end(), c.begin(), c.end());
      auto r = RunTool(args);
      ASSERT_EQ(r.exit_code, 0) << args[9] << " " << args[11] << "\n" << r.err;
      EXPECT_NE(r.out.find("check        ok"), std::string::npos) << r.out;
    }
  }
  auto j = RunTool({"bench", "--dtype", "u8", "--shape", "24,40", "--transpose", "1,0", "--reps",
                    "1", "--min-seconds", "0.001", "--check", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["check"], "ok") << j.out;
}

}  // namespace
}  // namespace iotx::test
