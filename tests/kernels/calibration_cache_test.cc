#include "kernels/calibration_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::kernels {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace fs = std::filesystem;

// A calibration that counts its runs and answers `bytes`.
struct FakeCalibration {
  int runs = 0;
  int64_t bytes = 16 << 20;
  int64_t staged_bytes = 4 << 20;
  int64_t one_thread_bytes = 2 << 20;
  bool measured = true;
  bool short_strips = true;
  StreamingThreshold operator()() {
    ++runs;
    StreamingThreshold t;
    t.bytes = bytes;
    t.staged_bytes = staged_bytes;
    t.one_thread_bytes = one_thread_bytes;
    t.short_strips = short_strips;
    t.why = "calibrated: fake";
    t.measured = measured;
    return t;
  }
};

std::string OnlyFile(const fs::path& dir) {
  std::string found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    EXPECT_TRUE(found.empty()) << "a second file " << e.path();
    found = e.path().string();
  }
  return found;
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(CalibrationCacheTest, TheFirstProcessMeasuresAndLaterOnesRead) {
  test::TempDir dir;
  FakeCalibration fake;
  auto calibrate = [&] { return fake(); };
  const StreamingThreshold first = LoadOrCalibrate(dir.path(), "machine A", calibrate);
  EXPECT_EQ(fake.runs, 1);
  EXPECT_EQ(first.bytes, 16 << 20);
  EXPECT_EQ(first.why, "calibrated: fake");
  const std::string file = OnlyFile(dir.path());
  EXPECT_THAT(Slurp(file), HasSubstr("signature machine A\nbytes 16777216\nstaged_bytes 4194304\n"
                                     "one_thread_bytes 2097152\ndram_walk short-strips\n"));

  fake.bytes = 1;  // a second measurement would answer differently: it must not run
  fake.staged_bytes = 1;
  fake.one_thread_bytes = 1;
  fake.short_strips = false;
  const StreamingThreshold again = LoadOrCalibrate(dir.path(), "machine A", calibrate);
  EXPECT_EQ(fake.runs, 1);
  EXPECT_EQ(again.bytes, 16 << 20);
  EXPECT_EQ(again.staged_bytes, 4 << 20);
  EXPECT_EQ(again.one_thread_bytes, 2 << 20);
  EXPECT_TRUE(again.short_strips);
  EXPECT_THAT(again.why, StartsWith("calibrated: fake (measured once on this machine"));
  EXPECT_THAT(again.why, HasSubstr(file));
}

TEST(CalibrationCacheTest, AnotherMachineOrVersionMeasuresAnew) {
  test::TempDir dir;
  FakeCalibration fake;
  auto calibrate = [&] { return fake(); };
  LoadOrCalibrate(dir.path(), "machine A", calibrate);
  fake.bytes = 8 << 20;
  fake.one_thread_bytes = 0;  // regular copies never the slower: kept as such
  EXPECT_EQ(LoadOrCalibrate(dir.path(), "machine B", calibrate).bytes, 8 << 20);
  EXPECT_EQ(fake.runs, 2);
  // Each keeps its own file.
  EXPECT_EQ(LoadOrCalibrate(dir.path(), "machine A", calibrate).bytes, 16 << 20);
  const StreamingThreshold b = LoadOrCalibrate(dir.path(), "machine B", calibrate);
  EXPECT_EQ(b.bytes, 8 << 20);
  EXPECT_EQ(b.one_thread_bytes, 0);
  EXPECT_EQ(fake.runs, 2);
}

TEST(CalibrationCacheTest, ADamagedFileIsMeasuredOver) {
  test::TempDir dir;
  FakeCalibration fake;
  auto calibrate = [&] { return fake(); };
  LoadOrCalibrate(dir.path(), "m", calibrate);
  const std::string file = OnlyFile(dir.path());
  const std::string good = Slurp(file);
  for (const std::string& damaged :
       {std::string(), good.substr(0, good.size() / 2), std::string("iotx streaming threshold 0\n"),
        std::string("\xff\xfe garbage\n"),
        std::string(good).replace(good.find("bytes ") + 6, 1, "x"),
        std::string(good).replace(good.find("bytes ") + 6, 8, "-1      "),
        std::string(good).replace(good.find("staged_bytes ") + 13, 1, "x"),
        // The first format, without staged_bytes (an older iotx wrote it).
        std::string(good)
            .replace(0, good.find('\n'), "iotx streaming threshold 1")
            .erase(good.find("staged_bytes "), good.find("why ") - good.find("staged_bytes ")),
        std::string(good).replace(good.find("signature m"), 11, "signature n"),
        std::string(good).replace(good.find("one_thread_bytes ") + 17, 1, "-"),
        // The third format, without one_thread_bytes (before one thread's copies were timed).
        std::string(good)
            .replace(0, good.find('\n'), "iotx streaming threshold 3")
            .erase(good.find("one_thread_bytes "),
                   good.find("dram_walk ") - good.find("one_thread_bytes ")),
        // This format's header without one_thread_bytes: a line missing, not an old file.
        std::string(good).erase(good.find("one_thread_bytes "),
                                good.find("dram_walk ") - good.find("one_thread_bytes ")),
        std::string(good).replace(good.find("short-strips"), 12, "sideways"),
        // The second format, without dram_walk (before the walk was calibrated).
        std::string(good)
            .replace(0, good.find('\n'), "iotx streaming threshold 2")
            .erase(good.find("dram_walk "), good.find("why ") - good.find("dram_walk "))}) {
    SCOPED_TRACE(damaged);
    std::ofstream(file, std::ios::trunc) << damaged;
    const int before = fake.runs;
    EXPECT_EQ(LoadOrCalibrate(dir.path(), "m", calibrate).bytes, 16 << 20);
    EXPECT_EQ(fake.runs, before + 1);
    EXPECT_EQ(Slurp(file), good);  // rewritten whole
  }
}

TEST(CalibrationCacheTest, NothingIsKeptWithoutADirectoryOrAMeasurement) {
  test::TempDir dir;
  FakeCalibration fake;
  auto calibrate = [&] { return fake(); };
  // Off: every call measures.
  LoadOrCalibrate(std::nullopt, "m", calibrate);
  LoadOrCalibrate(std::nullopt, "m", calibrate);
  EXPECT_EQ(fake.runs, 2);
  // A fallback (the buffers could not be allocated) is not a measurement to keep.
  fake.measured = false;
  LoadOrCalibrate(dir.path(), "m", calibrate);
  EXPECT_TRUE(fs::is_empty(dir.path()));
  // A directory that cannot be made or written: measured, nothing written, no failure.
  fake.measured = true;
  test::WriteFile(dir / "file", "not a directory");
  EXPECT_EQ(LoadOrCalibrate(fs::path(dir / "file") / "iotx", "m", calibrate).bytes, 16 << 20);
  ASSERT_EQ(chmod(dir.path().c_str(), 0500), 0);
  if (geteuid() != 0) {  // root writes anyway
    EXPECT_EQ(LoadOrCalibrate(fs::path(dir / "sub"), "m", calibrate).bytes, 16 << 20);
    EXPECT_FALSE(fs::exists(dir / "sub"));
  }
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

TEST(CalibrationCacheTest, TheDirectoryComesFromTheEnvironment) {
  const auto saved = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v) {
      setenv(name, v->c_str(), 1);
    } else {
      unsetenv(name);
    }
  };
  const auto cache = saved("IOTX_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");
  setenv("IOTX_CACHE_DIR", "/somewhere/iotx", 1);
  EXPECT_EQ(CalibrationCacheDir(), fs::path("/somewhere/iotx"));
  setenv("IOTX_CACHE_DIR", "", 1);
  EXPECT_EQ(CalibrationCacheDir(), std::nullopt);
  unsetenv("IOTX_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(CalibrationCacheDir(), fs::path("/xdg/iotx"));
  setenv("XDG_CACHE_HOME", "relative", 1);  // the XDG spec ignores relative paths
  EXPECT_EQ(CalibrationCacheDir(), fs::path("/home/u/.cache/iotx"));
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(CalibrationCacheDir(), std::nullopt);
  restore("IOTX_CACHE_DIR", cache);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

TEST(CalibrationCacheTest, TheSignatureNamesTheMachineAndTheVersion) {
  Machine m;
  m.l1d_bytes = 48 * 1024;
  m.l2_bytes = 1 << 20;
  m.target = "AVX3";
  m.vector_bytes = 64;
  const std::string a = MachineSignature(m);
  EXPECT_THAT(a, HasSubstr("L1d 49152"));
  EXPECT_THAT(a, HasSubstr("AVX3 64-byte vectors"));
  EXPECT_THAT(a, HasSubstr("iotx "));
  EXPECT_EQ(a.find('\n'), std::string::npos);
  m.target = "AVX2";
  m.vector_bytes = 32;
  EXPECT_NE(MachineSignature(m), a);
}

}  // namespace
}  // namespace iotx::kernels
