#include "files/path_safety.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(PathSafetyTest, AcceptsPathsInsideTheRoot) {
  TempDir root;
  fs::create_directories(root / "a/b");
  auto real_root = fs::canonical(root.path());
  EXPECT_EQ(ResolveInside(root.path(), root / "a/b").value(), real_root / "a/b");
  EXPECT_EQ(ResolveInside(root.path(), root / "a/not/yet/there").value(),
            real_root / "a/not/yet/there");
  EXPECT_EQ(ResolveInside(root.path(), root.path()).value(), real_root);
  EXPECT_EQ(ResolveInside(root.path(), root / "a/./b/../b").value(), real_root / "a/b");
}

TEST(PathSafetyTest, RefusesPathsOutsideTheRoot) {
  TempDir root;
  fs::create_directories(root / "inner");
  fs::create_directories(root / "inner2");
  for (const std::string& path : {root / "inner/../inner2/x", root / "..", std::string("/etc")}) {
    auto r = ResolveInside(root / "inner", path);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().code, ErrorCode::kPathUnsafe);
    EXPECT_EQ(r.error().file, path);
  }
}

TEST(PathSafetyTest, ASiblingWithTheRootAsNamePrefixIsOutside) {
  TempDir dir;
  fs::create_directories(dir / "work");
  fs::create_directories(dir / "workshop");
  auto r = ResolveInside(dir / "work", dir / "workshop/f");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPathUnsafe);
}

TEST(PathSafetyTest, FollowsSymlinks) {
  TempDir root, outside;
  fs::create_directories(root / "real");
  fs::create_directory_symlink(root / "real", root / "alias");
  fs::create_directory_symlink(outside.path(), root / "escape");
  fs::create_symlink(root / "escape/file", root / "chain");
  EXPECT_EQ(ResolveInside(root.path(), root / "alias/x").value(),
            fs::canonical(root.path()) / "real/x");
  EXPECT_EQ(ResolveInside(root.path(), root / "escape/x").error().code, ErrorCode::kPathUnsafe);
  EXPECT_EQ(ResolveInside(root.path(), root / "chain").error().code, ErrorCode::kPathUnsafe);
}

TEST(PathSafetyTest, RootMustBeAnExistingDirectory) {
  TempDir dir;
  test::WriteFile(dir / "file", "x");
  EXPECT_EQ(ResolveInside(dir / "missing", dir / "missing/x").error().code,
            ErrorCode::kNotADirectory);
  EXPECT_EQ(ResolveInside(dir / "file", dir / "file").error().code, ErrorCode::kNotADirectory);
}

}  // namespace
}  // namespace iotx::files
