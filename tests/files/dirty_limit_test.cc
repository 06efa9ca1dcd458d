// files::DirtyPageLimit: the kernel's dirty-page limit from the texts of /proc.
#include "files/dirty_limit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace iotx::files {
namespace {

constexpr char kMeminfo[] =
    "MemTotal:       24576000 kB\n"
    "MemFree:        20000000 kB\n"
    "MemAvailableX:        1 kB\n"
    "MemAvailable:   23000000 kB\n"
    "Buffers:           10000 kB\n";

TEST(DirtyPageLimitTest, DirtyBytesWinsWhenSet) {
  EXPECT_EQ(DirtyPageLimit("268435456\n", "20\n", kMeminfo), uint64_t{268435456});
}

TEST(DirtyPageLimitTest, ElseTheRatioOfTheMemoryAvailable) {
  // 20 % of 23,000,000 KiB (the line named exactly MemAvailable, not MemAvailableX).
  EXPECT_EQ(DirtyPageLimit("0\n", "20\n", kMeminfo), uint64_t{23000000} * 1024 / 100 * 20);
  EXPECT_EQ(DirtyPageLimit("", "  5\n", kMeminfo), uint64_t{23000000} * 1024 / 100 * 5);
}

TEST(DirtyPageLimitTest, UnreadableTextsSayNothing) {
  EXPECT_EQ(DirtyPageLimit("0", "", kMeminfo), std::nullopt);
  EXPECT_EQ(DirtyPageLimit("0", "twenty", kMeminfo), std::nullopt);
  EXPECT_EQ(DirtyPageLimit("0", "101", kMeminfo), std::nullopt);
  EXPECT_EQ(DirtyPageLimit("0", "20", "MemTotal: 100 kB\n"), std::nullopt);
  EXPECT_EQ(DirtyPageLimit("0", "20", "MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(DirtyPageLimit("0", "20", "MemAvailable: 99999999999999999999 kB\n"), std::nullopt);
}

// This machine's limit, computed here from /proc as the kernel documents it.
TEST(DirtyPageLimitTest, ThisMachineAsProcSays) {
  std::ifstream bytes_in("/proc/sys/vm/dirty_bytes"), ratio_in("/proc/sys/vm/dirty_ratio"),
      meminfo_in("/proc/meminfo");
  if (!bytes_in || !ratio_in || !meminfo_in) GTEST_SKIP() << "no /proc/sys/vm here";
  uint64_t bytes = 0, ratio = 0, available_kib = 0;
  bytes_in >> bytes;
  ratio_in >> ratio;
  for (std::string key; meminfo_in >> key;) {
    if (key == "MemAvailable:") {
      meminfo_in >> available_kib;
      break;
    }
    std::getline(meminfo_in, key);
  }
  const std::optional<uint64_t> limit = DirtyPageLimit();
  ASSERT_TRUE(limit.has_value());
  if (bytes > 0) {
    EXPECT_EQ(*limit, bytes);
  } else {
    // MemAvailable moves between the two reads: within 1 % of the memory.
    const double expected = static_cast<double>(available_kib) * 1024 / 100 * ratio;
    EXPECT_NEAR(static_cast<double>(*limit), expected, static_cast<double>(available_kib) * 10.24);
  }
}

}  // namespace
}  // namespace iotx::files
