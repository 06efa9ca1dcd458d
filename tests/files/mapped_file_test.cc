#include "files/mapped_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "support/page_cache.h"
#include "support/phase_room.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

std::string Pattern(size_t size) {
  std::string content(size, '\0');
  for (size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 2654435761u) >> 13);
  return content;
}

// Kilobytes of the mapping that starts at `start` resident in this process (/proc/self/smaps
// "Rss"), or -1 when no mapping starts there.
long ResidentKiB(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%lx-", reinterpret_cast<unsigned long>(start));
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind(prefix, 0) == 0) inside = true;
    if (inside && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

TEST(MappedFileTest, MapsTheWholeFile) {
  TempDir dir;
  std::string content(100003, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 + 7);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_EQ((*file)->size(), content.size());
  EXPECT_EQ(std::memcmp((*file)->bytes().data(), content.data(), content.size()), 0);
  EXPECT_EQ((*file)->path(), dir / "f");
}

TEST(MappedFileTest, EmptyFileHasNoBytes) {
  TempDir dir;
  test::WriteFile(dir / "empty", "");
  auto file = MappedFile::Open(dir / "empty");
  ASSERT_TRUE(file);
  EXPECT_EQ((*file)->size(), 0u);
  EXPECT_TRUE((*file)->bytes().empty());
}

TEST(MappedFileTest, MissingFileIsAnOpenErrorWithThePath) {
  TempDir dir;
  auto file = MappedFile::Open(dir / "missing.npy");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, ErrorCode::kIoOpen);
  EXPECT_EQ(file.error().file, dir / "missing.npy");
  EXPECT_THAT(file.error().message, HasSubstr("No such file or directory"));
}

TEST(MappedFileTest, DirectoriesAndFifosAreRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const std::string& path : {dir.path(), dir / "fifo"}) {
    auto file = MappedFile::Open(path);
    ASSERT_FALSE(file) << path;
    EXPECT_EQ(file.error().code, ErrorCode::kIoOpen);
    EXPECT_THAT(file.error().message, HasSubstr("not a regular file"));
  }
}

TEST(MappedFileTest, ReadIntoCopiesAnyPartOfTheFileWithoutMappingItsPages) {
  TempDir dir;
  const std::string content = Pattern(3 * 1024 * 1024 + 4099);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file) << file.error().ToString();
  const std::span<const std::byte> all = (*file)->bytes();
  for (const auto& [at, size] : std::vector<std::pair<size_t, size_t>>{
           {0, content.size()}, {1, 4095}, {4093, 1 << 20}, {content.size() - 5, 5}, {77, 0}}) {
    std::vector<std::byte> into(size + 1, std::byte{0xEE});
    (*file)->ReadInto(all.subspan(at, size), std::span(into).first(size));
    EXPECT_EQ(std::memcmp(into.data(), content.data() + at, size), 0) << at << "+" << size;
    EXPECT_EQ(into[size], std::byte{0xEE}) << "wrote past the end at " << at << "+" << size;
  }
  // Read from the file, not through the mapping: none of its pages were mapped in.
  EXPECT_EQ(ResidentKiB(all.data()), 0);
  EXPECT_TRUE((*file)->CheckIntact());
}

TEST(MappedFileTest, ReadIntoAFileReplacedAtItsPathGivesTheMappedBytes) {
  TempDir dir;
  const std::string before = Pattern(1 << 20);
  test::WriteFile(dir / "f", before);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file);
  test::WriteFile(dir / "new", std::string(before.size(), 'x'));
  std::filesystem::rename(dir / "new", dir / "f");
  std::vector<std::byte> into(before.size());
  (*file)->ReadInto((*file)->bytes(), into);
  EXPECT_EQ(std::memcmp(into.data(), before.data(), before.size()), 0);
  EXPECT_TRUE((*file)->CheckIntact());
}

TEST(MappedFileTest, ReadIntoATruncatedFileGivesZerosAndFailsTheCheck) {
  TempDir dir;
  const std::string content = Pattern(1 << 20);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file);
  ASSERT_EQ(truncate((dir / "f").c_str(), 4096), 0);
  std::vector<std::byte> into(content.size(), std::byte{0xEE});
  (*file)->ReadInto((*file)->bytes(), into);
  EXPECT_EQ(std::memcmp(into.data(), content.data(), 4096), 0);
  EXPECT_EQ(std::count(into.begin() + 4096, into.end(), std::byte{0}),
            static_cast<long>(content.size() - 4096));
  Status intact = (*file)->CheckIntact();
  ASSERT_FALSE(intact);
  EXPECT_EQ(intact.error().code, ErrorCode::kIoRead);
  EXPECT_EQ(intact.error().file, dir / "f");
}

// Uncached bytes come from the disk directly: into the room at their file offset's phase, and
// the page cache is left without them. Cached ones are copied to the room's start.
TEST(MappedFileTest, ReadIntoRoomReadsWhatIsNotCachedDirectly) {
  TempDir dir;
  const std::string content = Pattern(5 * 1024 * 1024 + 333);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file);
  const int probe = open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
  const bool direct = probe >= 0 && DirectIoAlignment(probe) != 0;
  if (probe >= 0) close(probe);
  const std::span<const std::byte> all = (*file)->bytes();
  const test::PhaseRoom memory(0, content.size() + MappedFile::kRoomSlack);
  ASSERT_NE(memory.memory, nullptr);
  const std::span<std::byte> room = memory.all();
  for (const auto& [at, size] : std::vector<std::pair<size_t, size_t>>{
           {0, content.size()}, {4097, 2 << 20}, {777, content.size() - 777}, {3, (1 << 20) - 1}}) {
    SCOPED_TRACE(std::to_string(at) + "+" + std::to_string(size));
    ASSERT_TRUE(test::DropFromPageCache(dir / "f"));
    const std::span<const std::byte> read = (*file)->ReadIntoRoom(all.subspan(at, size), room);
    ASSERT_EQ(read.size(), size);
    ASSERT_GE(read.data(), room.data());
    ASSERT_LE(read.data() + size, room.data() + room.size());
    EXPECT_EQ(std::memcmp(read.data(), content.data() + at, size), 0);
    if (direct && size >= MappedFile::kDirectReadMinBytes) {
      EXPECT_EQ(static_cast<size_t>(read.data() - room.data()), at % kDirectPhase);
      const double cached = test::CachedFraction(dir / "f");
      ASSERT_GE(cached, 0);
      EXPECT_LT(cached, 0.1);
    } else {
      EXPECT_EQ(read.data(), room.data());
    }
  }
  // Cached: copied to the start, and the cache keeps it.
  std::ifstream(dir / "f", std::ios::binary).ignore(static_cast<std::streamsize>(content.size()));
  const std::span<const std::byte> read = (*file)->ReadIntoRoom(all.subspan(4097, 2 << 20), room);
  EXPECT_EQ(read.data(), room.data());
  EXPECT_EQ(std::memcmp(read.data(), content.data() + 4097, 2 << 20), 0);
  EXPECT_GT(test::CachedFraction(dir / "f"), 0.9);
  EXPECT_EQ(ResidentKiB(all.data()), 0);  // and never through the mapping
  EXPECT_TRUE((*file)->CheckIntact());
}

// What the pipeline asks before it maps a source instead of reading it (write_pipeline.cc,
// MapsCachedPart): the cached fraction of a part of the file, as mincore reports it for a file
// this process owns, and the file is left as it was.
TEST(MappedFileTest, CachedFractionOfAPartFollowsThePageCache) {
  TempDir dir;
  const std::string content = Pattern(4 << 20);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file);
  const std::span<const std::byte> all = (*file)->bytes();
  std::ifstream(dir / "f", std::ios::binary).ignore(static_cast<std::streamsize>(content.size()));
  std::optional<double> cached = (*file)->CachedFractionOf(all.subspan(4096, 2 << 20));
  ASSERT_TRUE(cached.has_value());  // the test's own file: Linux reports its cache
  EXPECT_GT(*cached, 0.9);
  if (test::DropFromPageCache(dir / "f")) {
    cached = (*file)->CachedFractionOf(all.subspan(4096, 2 << 20));
    ASSERT_TRUE(cached.has_value());
    EXPECT_LT(*cached, 0.1);
  }
  EXPECT_EQ(ResidentKiB(all.data()), 0);  // asking maps nothing
}

// A source truncated before a direct read: what is past its new end reads as zeros, and the
// check fails.
TEST(MappedFileTest, ReadIntoRoomOfATruncatedFileGivesZerosAndFailsTheCheck) {
  TempDir dir;
  const std::string content = Pattern(3 << 20);
  test::WriteFile(dir / "f", content);
  auto file = MappedFile::Open(dir / "f");
  ASSERT_TRUE(file);
  ASSERT_TRUE(test::DropFromPageCache(dir / "f"));
  ASSERT_EQ(truncate((dir / "f").c_str(), 1 << 20), 0);
  const test::PhaseRoom room(0, content.size() + MappedFile::kRoomSlack);
  ASSERT_NE(room.memory, nullptr);
  const std::span<const std::byte> read = (*file)->ReadIntoRoom((*file)->bytes(), room.all());
  ASSERT_EQ(read.size(), content.size());
  EXPECT_EQ(std::memcmp(read.data(), content.data(), 1 << 20), 0);
  EXPECT_EQ(std::count(read.begin() + (1 << 20), read.end(), std::byte{0}),
            static_cast<long>(content.size() - (1 << 20)));
  EXPECT_FALSE((*file)->CheckIntact());
}

}  // namespace
}  // namespace iotx::files
