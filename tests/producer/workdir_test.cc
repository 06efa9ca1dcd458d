// ScanWorkDir and ListLinkSources: what the producer job finds, and what it refuses.
#include <gtest/gtest.h>

#include <filesystem>

#include "producer/fan_out.h"
#include "producer/workdir.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::producer {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::WriteFile;

std::vector<std::string> Names(const std::vector<fs::path>& paths) {
  std::vector<std::string> names;
  for (const fs::path& p : paths) names.push_back(p.string());
  return names;
}

TEST(WorkDirTest, FindsPartitionDirsLikeTheOriginalGlobs) {
  TempDir dir;
  for (const char* d : {"sg01", "sg00", "nc1/sg00", "nc0/sg02", "nc0/other", "other/sg00",
                        "sgx", "nc_extra/sg9"}) {
    fs::create_directories(dir / d);
  }
  WriteFile(dir / "sg_file", "not a dir");
  fs::create_directory_symlink(dir / "sg00", dir / "sg_link");  // a link to a dir inside: kept
  auto scan = ScanWorkDir(dir.path());
  ASSERT_TRUE(scan) << scan.error().ToString();
  EXPECT_EQ(Names(scan->partition_dirs),
            (std::vector<std::string>{"nc0/sg02", "nc1/sg00", "nc_extra/sg9", "sg00", "sg01",
                                      "sg_link", "sgx"}));
  EXPECT_EQ(scan->root, fs::canonical(dir.path()));
  EXPECT_FALSE(scan->has_io_transposes);
  EXPECT_FALSE(scan->has_tensors);
  WriteFile(dir / "io_transposes.json", "[]");
  WriteFile(dir / "inp-000.p", "");
  scan = ScanWorkDir(dir.path());
  EXPECT_TRUE(scan->has_io_transposes);
  EXPECT_TRUE(scan->has_tensors);
}

TEST(WorkDirTest, APartitionDirLeadingOutsideIsRefused) {
  TempDir dir;
  TempDir outside;
  fs::create_directory_symlink(outside.path(), dir / "sg00");
  auto scan = ScanWorkDir(dir.path());
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().code, ErrorCode::kPathUnsafe);
}

TEST(WorkDirTest, AMissingWorkDirIsNotADirectory) {
  auto scan = ScanWorkDir("/nonexistent/work");
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().code, ErrorCode::kNotADirectory);
}

TEST(LinkSourcesTest, MatchesNpyAndMetaButNotHiddenOrOtherFiles) {
  TempDir dir;
  fs::create_directory(dir / "ti");
  for (const char* f : {"value_b.npy", "value_a.npy", "value_a.npy.meta", ".value_c.npy",
                        ".value_a.npy.tmp-1-0-00", "inp-000.p", "x.npz", "notes.meta"}) {
    WriteFile(dir / "ti/" + f, "x");
  }
  auto sources = ListLinkSources(dir.path(), dir / "ti");
  ASSERT_TRUE(sources) << sources.error().ToString();
  std::vector<std::string> names;
  for (const LinkSource& s : *sources) {
    names.push_back(s.name);
    EXPECT_EQ(s.real_path, fs::canonical(dir / "ti/" + s.name));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"value_a.npy", "value_a.npy.meta", "value_b.npy"}));
}

TEST(LinkSourcesTest, AMissingDirHasNone) {
  TempDir dir;
  auto sources = ListLinkSources(dir.path(), dir / "ti");
  ASSERT_TRUE(sources);
  EXPECT_TRUE(sources->empty());
}

TEST(LinkSourcesTest, RefusesWhatLeadsOutside) {
  TempDir dir;
  TempDir outside;
  WriteFile(outside / "secret.npy", "x");
  fs::create_directory(dir / "ti");
  fs::create_symlink(outside / "secret.npy", dir / "ti/value_p0.npy");
  auto planted = ListLinkSources(dir.path(), dir / "ti");
  ASSERT_FALSE(planted);
  EXPECT_EQ(planted.error().code, ErrorCode::kPathUnsafe);

  fs::remove(dir / "ti/value_p0.npy");
  fs::remove(dir / "ti");
  fs::create_directory_symlink(outside.path(), dir / "ti");
  auto linked_dir = ListLinkSources(dir.path(), dir / "ti");
  ASSERT_FALSE(linked_dir);
  EXPECT_EQ(linked_dir.error().code, ErrorCode::kPathUnsafe);

  fs::remove(dir / "ti");
  WriteFile(dir / "ti", "a file");
  auto file = ListLinkSources(dir.path(), dir / "ti");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, ErrorCode::kNotADirectory);
}

}  // namespace
}  // namespace iotx::producer
