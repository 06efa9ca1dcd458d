// files::DirtyPageLimit: the kernel's dirty-page limit from the texts of /proc.
#include "files/dirty_limit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

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

TEST(DirtyPageLimitTest, AMemoryCgroupWithLessRoomScalesItDown) {
  const uint64_t available = uint64_t{23000000} * 1024;
  const uint64_t global = available / 100 * 20;
  EXPECT_EQ(DirtyPageLimit("0", "20", kMeminfo, available / 4), global / 4);
  EXPECT_EQ(DirtyPageLimit("0", "20", kMeminfo, available), global);
  EXPECT_EQ(DirtyPageLimit("0", "20", kMeminfo, available * 2), global);
  EXPECT_EQ(DirtyPageLimit("0", "20", kMeminfo, 0), uint64_t{0});
  EXPECT_EQ(DirtyPageLimit("1000000", "20", kMeminfo, available / 2), uint64_t{500000});
}

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

constexpr uint64_t kGiB = uint64_t{1} << 30;

// cgroup v2: each level's limit minus its usage, its page cache counted as room; the least.
TEST(MemoryCgroupRoomTest, V2TakesTheLeastRoomUpTheTree) {
  test::TempDir temp;
  const std::filesystem::path root(temp.path());
  const std::filesystem::path pod = root / "kubepods" / "pod1";
  const std::filesystem::path box = pod / "box";
  Write(root / "kubepods" / "memory.max", "max\n");
  Write(pod / "memory.max", std::to_string(8 * kGiB) + "\n");
  Write(pod / "memory.current", std::to_string(6 * kGiB) + "\n");
  Write(pod / "memory.stat", "anon 1\nfile " + std::to_string(1 * kGiB) + "\nfile_dirty 0\n");
  Write(box / "memory.max", std::to_string(16 * kGiB) + "\n");
  Write(box / "memory.current", std::to_string(1 * kGiB) + "\n");
  Write(box / "memory.stat", "file 0\n");
  // pod: 8 - (6 - 1) = 3 GiB; box: 16 - 1 = 15 GiB.
  EXPECT_EQ(MemoryCgroupRoom(root, "0::/kubepods/pod1/box\n"), 3 * kGiB);
  EXPECT_EQ(MemoryCgroupRoom(root, "0::/kubepods\n"), std::nullopt);
  // In a cgroup namespace the path is "/" and the root directory is the container's cgroup.
  Write(root / "memory.max", std::to_string(2 * kGiB));
  Write(root / "memory.current", std::to_string(kGiB / 2));
  EXPECT_EQ(MemoryCgroupRoom(root, "0::/\n"), 3 * kGiB / 2);
}

// cgroup v1: the memory hierarchy's own line, hierarchical_memory_limit for the ancestors.
TEST(MemoryCgroupRoomTest, V1ReadsTheMemoryHierarchy) {
  test::TempDir temp;
  const std::filesystem::path root(temp.path());
  const std::filesystem::path job = root / "memory" / "jobs" / "j7";
  Write(job / "memory.stat", "cache 5\nhierarchical_memory_limit " + std::to_string(4 * kGiB) +
                                 "\ntotal_cache " + std::to_string(kGiB) + "\n");
  Write(job / "memory.usage_in_bytes", std::to_string(2 * kGiB));
  EXPECT_EQ(MemoryCgroupRoom(root, "9:name=systemd:/\n4:memory:/jobs/j7\n0::/\n"), 3 * kGiB);
  EXPECT_EQ(MemoryCgroupRoom(root, "5:cpu,memory,pids:/jobs/j7\n"), 3 * kGiB);
  EXPECT_EQ(MemoryCgroupRoom(root, "5:cpu,memoryx:/jobs/j7\n"), std::nullopt);
  Write(job / "memory.stat", "hierarchical_memory_limit 9223372036854771712\n");  // none
  EXPECT_EQ(MemoryCgroupRoom(root, "4:memory:/jobs/j7\n"), std::nullopt);
  EXPECT_EQ(MemoryCgroupRoom(root, "garbage\n4:memory\n"), std::nullopt);
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
  // MemAvailable moves between the two reads: within 1 % of the memory. A memory cgroup with
  // less room than that scales the limit down (checked above); here only never up.
  const double global = bytes > 0 ? static_cast<double>(bytes)
                                  : static_cast<double>(available_kib) * 1024 / 100 * ratio;
  const double slack = static_cast<double>(available_kib) * 10.24;
  EXPECT_LE(static_cast<double>(*limit), global + slack);
  std::ifstream cgroup_in("/proc/self/cgroup");
  const std::string cgroup{std::istreambuf_iterator<char>(cgroup_in),
                           std::istreambuf_iterator<char>()};
  const std::optional<uint64_t> room = MemoryCgroupRoom("/sys/fs/cgroup", cgroup);
  if (!room || static_cast<double>(*room) >= static_cast<double>(available_kib) * 1024 * 1.01) {
    EXPECT_NEAR(static_cast<double>(*limit), global, slack);
  }
}

}  // namespace
}  // namespace iotx::files
