// ReplaceSymlink: created, replaced or unchanged; never written through; temporaries cleaned.
#include "files/atomic_symlink.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;
using test::WriteFile;

size_t EntryCount(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicSymlinkTest, CreatesThenLeavesAnIdenticalLinkAlone) {
  TempDir dir;
  WriteFile(dir / "target.npy", "data");
  auto made = ReplaceSymlink(dir / "target.npy", dir / "link.npy");
  ASSERT_TRUE(made) << made.error().ToString();
  EXPECT_EQ(*made, LinkOutcome::kCreated);
  EXPECT_EQ(fs::read_symlink(dir / "link.npy"), fs::path(dir / "target.npy"));
  auto again = ReplaceSymlink(dir / "target.npy", dir / "link.npy");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, LinkOutcome::kUnchanged);
  EXPECT_EQ(EntryCount(dir.path()), 2u);  // no temporary left behind
}

TEST(AtomicSymlinkTest, ReplacesAnotherLinkWithoutWritingThroughIt) {
  TempDir dir;
  TempDir outside;
  WriteFile(outside / "victim", "precious");
  fs::create_symlink(outside / "victim", dir / "link.npy");
  WriteFile(dir / "target.npy", "data");
  auto made = ReplaceSymlink(dir / "target.npy", dir / "link.npy");
  ASSERT_TRUE(made);
  EXPECT_EQ(*made, LinkOutcome::kReplaced);
  EXPECT_EQ(fs::read_symlink(dir / "link.npy"), fs::path(dir / "target.npy"));
  EXPECT_EQ(ReadFile(outside / "victim"), "precious");
}

TEST(AtomicSymlinkTest, ReplacesARegularFile) {
  TempDir dir;
  WriteFile(dir / "link.npy", "stale copy");
  auto made = ReplaceSymlink(dir / "target.npy", dir / "link.npy");  // dangling is fine
  ASSERT_TRUE(made);
  EXPECT_EQ(*made, LinkOutcome::kReplaced);
  EXPECT_TRUE(fs::is_symlink(dir / "link.npy"));
}

TEST(AtomicSymlinkTest, ADirectoryInTheWayIsAnError) {
  TempDir dir;
  fs::create_directory(dir / "link.npy");
  auto made = ReplaceSymlink(dir / "target.npy", dir / "link.npy");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ErrorCode::kIoWrite);
  EXPECT_EQ(made.error().file, dir / "link.npy");
  EXPECT_TRUE(fs::is_directory(dir / "link.npy"));
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(AtomicSymlinkTest, AMissingDirectoryIsAnError) {
  TempDir dir;
  auto made = ReplaceSymlink(dir / "target.npy", dir / "no-such-dir/link.npy");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ErrorCode::kIoWrite);
}

}  // namespace
}  // namespace iotx::files
