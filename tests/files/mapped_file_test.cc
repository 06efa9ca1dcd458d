#include "files/mapped_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace iotx::files
