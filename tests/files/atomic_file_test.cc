#include "files/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "files/mapped_file.h"
#include "support/process.h"
#include "support/reference_transpose.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;
using test::WriteFile;
using ::testing::HasSubstr;

std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFileTest, WritesBytesAndLeavesNoTemporary) {
  TempDir dir;
  std::vector<std::byte> data = test::RandomBytes(100000, 1);
  ASSERT_TRUE(WriteFileAtomically(dir / "out.bin", data));
  std::string back = ReadFile(dir / "out.bin");
  ASSERT_EQ(back.size(), data.size());
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
  EXPECT_EQ(DirEntries(dir.path()), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileTest, ReplacesAnExistingFile) {
  TempDir dir;
  WriteFile(dir / "out.txt", "old content that is longer");
  ASSERT_TRUE(WriteFileAtomically(dir / "out.txt", std::string_view("new")));
  EXPECT_EQ(ReadFile(dir / "out.txt"), "new");
  EXPECT_EQ(DirEntries(dir.path()), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileTest, StreamsSeveralWrites) {
  TempDir dir;
  auto file = AtomicFile::Create(dir / "s.txt");
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_TRUE(file->Write(std::string_view("abc")));
  ASSERT_TRUE(file->Write(std::string_view("")));
  ASSERT_TRUE(file->Write(std::string_view("def")));
  EXPECT_FALSE(fs::exists(dir / "s.txt"));  // nothing under the final name before Commit
  ASSERT_TRUE(file->Commit());
  EXPECT_EQ(ReadFile(dir / "s.txt"), "abcdef");
}

TEST(AtomicFileTest, MapFillsTheFileInPlace) {
  TempDir dir;
  auto file = AtomicFile::Create(dir / "m.bin");
  ASSERT_TRUE(file);
  auto span = file->Map(3 * 4096 + 17);
  ASSERT_TRUE(span) << span.error().ToString();
  ASSERT_EQ(span->size(), 3u * 4096 + 17);
  std::vector<std::byte> data = test::RandomBytes(span->size(), 7);
  std::memcpy(span->data(), data.data(), data.size());
  ASSERT_TRUE(file->Commit());
  std::string back = ReadFile(dir / "m.bin");
  ASSERT_EQ(back.size(), data.size());
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
  EXPECT_EQ(DirEntries(dir.path()), std::vector<std::string>{"m.bin"});
}

TEST(AtomicFileTest, MapOfZeroBytesMakesAnEmptyFile) {
  TempDir dir;
  auto file = AtomicFile::Create(dir / "empty");
  ASSERT_TRUE(file);
  auto span = file->Map(0);
  ASSERT_TRUE(span);
  EXPECT_TRUE(span->empty());
  ASSERT_TRUE(file->Commit());
  EXPECT_EQ(fs::file_size(dir / "empty"), 0u);
}

TEST(AtomicFileTest, MixingWriteAndMapIsRefused) {
  TempDir dir;
  auto a = AtomicFile::Create(dir / "a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->Write(std::string_view("x")));
  EXPECT_FALSE(a->Map(10));
  auto b = AtomicFile::Create(dir / "b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->Map(10));
  EXPECT_FALSE(b->Write(std::string_view("x")));
}

TEST(AtomicFileTest, AbandonedFileRemovesItsTemporaryAndKeepsTheOldFile) {
  TempDir dir;
  WriteFile(dir / "keep.txt", "old");
  {
    auto file = AtomicFile::Create(dir / "keep.txt");
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->Write(std::string_view("half of the new")));
    EXPECT_TRUE(fs::exists(file->temp_path()));
    EXPECT_EQ(file->temp_path().parent_path(), fs::path(dir.path()));
  }
  {
    auto file = AtomicFile::Create(dir / "keep.txt");
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->Map(1 << 20));
  }
  EXPECT_EQ(ReadFile(dir / "keep.txt"), "old");
  EXPECT_EQ(DirEntries(dir.path()), std::vector<std::string>{"keep.txt"});
}

TEST(AtomicFileTest, MovedFromObjectOwnsNothing) {
  TempDir dir;
  auto file = AtomicFile::Create(dir / "moved");
  ASSERT_TRUE(file);
  AtomicFile moved = std::move(*file);
  ASSERT_TRUE(moved.Write(std::string_view("data")));
  ASSERT_TRUE(moved.Commit());
  EXPECT_EQ(ReadFile(dir / "moved"), "data");
}

TEST(AtomicFileTest, MissingDirectoryIsAWriteErrorNamingThePath) {
  TempDir dir;
  auto status = WriteFileAtomically(dir / "no/such/dir/f.txt", std::string_view("x"));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kIoWrite);
  EXPECT_EQ(status.error().file, dir / "no/such/dir/f.txt");
  EXPECT_THAT(status.error().message, HasSubstr("No such file or directory"));
}

TEST(AtomicFileTest, RefusesANameThatIsNotAFile) {
  TempDir dir;
  auto status = WriteFileAtomically(dir.path() + "/..", std::string_view("x"));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kIoWrite);
}

// A kill at any moment before Commit must leave the old content under the final name. (Death
// tests use the default "fast" style: the child is a fork that sees the parent's TempDir.)
TEST(AtomicFileDeathTest, KilledWriterLeavesTheOldFile) {
  TempDir dir;
  WriteFile(dir / "victim.npy", "complete old file");
  EXPECT_EXIT(
      {
        auto file = AtomicFile::Create(dir / "victim.npy");
        if (!file) _exit(3);
        auto span = file->Map(1 << 20);
        if (!span) _exit(4);
        std::memset(span->data(), 'x', span->size() / 2);
        raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  EXPECT_EQ(ReadFile(dir / "victim.npy"), "complete old file");
}

// A full disk is simulated with RLIMIT_FSIZE (the write then fails with EFBIG, the way it
// would fail with ENOSPC): the error names the file and the reason, and no temporary remains.
void ExpectWriteFailureCleansUp(const std::string& dir, bool use_map) {
  struct rlimit limit = {4096, 4096};
  signal(SIGXFSZ, SIG_IGN);
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
  std::string path = dir + "/big.bin";
  Status status;
  if (use_map) {
    auto file = AtomicFile::Create(path);
    if (!file) _exit(11);
    auto span = file->Map(1 << 20);
    status = span ? Status() : Status(Fail(span.error()));
  } else {
    std::vector<std::byte> data(1 << 20);
    status = WriteFileAtomically(path, data);
  }
  if (status) _exit(12);
  if (status.error().code != ErrorCode::kIoWrite) _exit(13);
  if (status.error().file != path) _exit(14);
  if (status.error().message.find("File too large") == std::string::npos) _exit(15);
  if (!fs::is_empty(dir)) _exit(16);
  fprintf(stderr, "%s\n", status.error().ToString().c_str());
  _exit(0);
}

TEST(AtomicFileDeathTest, WriteFailureRemovesTheTemporary) {
  TempDir dir;
  EXPECT_EXIT(ExpectWriteFailureCleansUp(dir.path(), false), ::testing::ExitedWithCode(0),
              "IOTX_E302 .*big.bin: cannot write temporary file .*File too large");
}

TEST(AtomicFileDeathTest, MapFailureRemovesTheTemporary) {
  TempDir dir;
  EXPECT_EXIT(ExpectWriteFailureCleansUp(dir.path(), true), ::testing::ExitedWithCode(0),
              "IOTX_E302 .*big.bin: cannot reserve 1048576 bytes for .*File too large");
}

TEST(AtomicFileRootTest, WritesInsideTheRoot) {
  TempDir dir;
  fs::create_directory(dir / "sub");
  ASSERT_TRUE(WriteFileAtomically(dir / "sub/f", std::string_view("ok"), {.root = dir.path()}));
  EXPECT_EQ(ReadFile(dir / "sub/f"), "ok");
}

TEST(AtomicFileRootTest, RefusesASymlinkPointingOutside) {
  TempDir root, outside;
  WriteFile(outside / "target", "precious");
  fs::create_symlink(outside / "target", root / "link.npy");
  auto status =
      WriteFileAtomically(root / "link.npy", std::string_view("evil"), {.root = root.path()});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kPathUnsafe);
  EXPECT_THAT(status.error().message, HasSubstr("outside"));
  EXPECT_EQ(ReadFile(outside / "target"), "precious");
  EXPECT_TRUE(fs::is_symlink(root / "link.npy"));
  EXPECT_EQ(DirEntries(root.path()), std::vector<std::string>{"link.npy"});
}

TEST(AtomicFileRootTest, ReplacesASymlinkPointingInsideWithoutTouchingItsTarget) {
  TempDir root;
  WriteFile(root / "target", "original");
  fs::create_symlink(root / "target", root / "link");
  ASSERT_TRUE(WriteFileAtomically(root / "link", std::string_view("new"), {.root = root.path()}));
  EXPECT_FALSE(fs::is_symlink(root / "link"));
  EXPECT_EQ(ReadFile(root / "link"), "new");
  EXPECT_EQ(ReadFile(root / "target"), "original");
}

TEST(AtomicFileRootTest, RefusesADirectorySymlinkPointingOutside) {
  TempDir root, outside;
  fs::create_directory_symlink(outside.path(), root / "escape");
  auto status =
      WriteFileAtomically(root / "escape/f", std::string_view("x"), {.root = root.path()});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kPathUnsafe);
  EXPECT_TRUE(fs::is_empty(outside.path()));
}

TEST(AtomicFileRootTest, RefusesDotDotOutOfTheRoot) {
  TempDir root;
  fs::create_directory(root / "sub");
  auto status =
      WriteFileAtomically(root / "sub/../../x", std::string_view("x"), {.root = root / "sub"});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kPathUnsafe);
}

TEST(AtomicFileTest, DurableExceptDirectoryRenamesAndLeavesTheDirectoryToTheCaller) {
  TempDir dir;
  for (const char* name : {"a.bin", "b.bin"}) {
    auto file = AtomicFile::Create(dir / name);
    ASSERT_TRUE(file) << file.error().ToString();
    ASSERT_TRUE(file->Write(std::string_view(name)));
    ASSERT_TRUE(file->Commit(Durability::kDurableExceptDirectory));
    EXPECT_EQ(ReadFile(dir / name), name);
  }
  EXPECT_EQ(DirEntries(dir.path()), (std::vector<std::string>{"a.bin", "b.bin"}));
  EXPECT_TRUE(SyncDirectory(dir.path()));
}

TEST(AtomicFileTest, SyncDirectoryNamesWhatFailed) {
  TempDir dir;
  Status missing = SyncDirectory(dir / "missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kIoWrite);
  EXPECT_THAT(missing.error().ToString(), HasSubstr("syncing directory"));
  EXPECT_THAT(missing.error().ToString(), HasSubstr(dir / "missing"));
  Status named = SyncDirectory(dir / "missing", dir / "missing/out.bin");
  ASSERT_FALSE(named);
  EXPECT_THAT(named.error().ToString(), HasSubstr("out.bin"));
}

// CopyAt against the bytes themselves: the kernel's file-to-file copy when the mapped file is
// still at its path, the mapping when it is not; both leave the same file.
class AtomicFileCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_text_ = std::string(3 << 20, '\0');
    for (size_t i = 0; i < source_text_.size(); ++i) {
      source_text_[i] = static_cast<char>(i * 2654435761u >> 13);
    }
    WriteFile(dir_ / "source.bin", source_text_);
    auto mapped = MappedFile::Open(dir_ / "source.bin");
    ASSERT_TRUE(mapped) << mapped.error().ToString();
    source_ = *mapped;
  }

  // A 2 MiB + 3 file: a 5-byte header, then source bytes [1001, 1001 + 2 MiB - 2).
  std::string CopyIntoNewFile() {
    auto file = AtomicFile::Create(dir_ / "out.bin");
    EXPECT_TRUE(file) << file.error().ToString();
    const size_t size = (2 << 20) + 3;
    EXPECT_TRUE(file->Reserve(size));
    EXPECT_TRUE(file->WriteAt(0, std::string_view("head:")));
    Status copied = file->CopyAt(5, *source_, source_->bytes().subspan(1001, size - 5));
    EXPECT_TRUE(copied) << copied.error().ToString();
    EXPECT_TRUE(file->Commit());
    return ReadFile(dir_ / "out.bin");
  }
  std::string Expected() const { return "head:" + source_text_.substr(1001, (2 << 20) - 2); }

  TempDir dir_;
  std::string source_text_;
  std::shared_ptr<const MappedFile> source_;
};

TEST_F(AtomicFileCopyTest, CopiesFromFileToFile) {
  const int fd = source_->OpenSameFile();
  EXPECT_GE(fd, 0) << "the mapped file is still at its path";
  if (fd >= 0) close(fd);
  EXPECT_TRUE(CopyIntoNewFile() == Expected());
}

TEST_F(AtomicFileCopyTest, CopiesFromTheMappingOnceThePathHoldsAnotherFile) {
  fs::rename(dir_ / "source.bin", dir_ / "moved.bin");
  WriteFile(dir_ / "source.bin", std::string(source_text_.size(), 'x'));
  EXPECT_EQ(source_->OpenSameFile(), -1) << "another file is at the path now";
  EXPECT_TRUE(CopyIntoNewFile() == Expected()) << "the bytes of the file that was mapped";
}

TEST_F(AtomicFileCopyTest, RefusesBytesOutsideTheMapping) {
  auto file = AtomicFile::Create(dir_ / "out.bin");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->Reserve(16));
  const std::string elsewhere(16, 'y');
  Status refused = file->CopyAt(0, *source_, std::as_bytes(std::span(elsewhere)));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInternal);
}

}  // namespace
}  // namespace iotx::files
