// Outputs over things that are not regular files (issue 18, item 2) and side-files that are
// not regular files (item 11): a device, FIFO or socket is never renamed over; a FIFO, /dev/null
// or /dev/stdout gets the bytes only through WriteOutputFile (what `iotx wrap --output` uses);
// reading a FIFO as a side-file is refused at once instead of waiting for a writer.
#include "files/output_target.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "files/atomic_file.h"
#include "files/atomic_symlink.h"
#include "files/read_text_file.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;
using test::WriteFile;

std::span<const std::byte> Bytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// Runs `body` in a child process and returns its exit status, or -1 when it has not finished
// within `seconds` (then it is killed): a call that blocks fails the test instead of hanging it.
int ExitStatusWithin(int seconds, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A listening-less Unix socket bound at `path`.
void MakeSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(address.sun_path));
  std::copy(path.begin(), path.end(), address.sun_path);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  close(fd);
}

TEST(OutputTargetTest, ClassifiesWhatIsThere) {
  TempDir dir;
  WriteFile(dir / "file", "x");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir / "file", dir / "link_to_file");
  fs::create_symlink(dir / "fifo", dir / "link_to_fifo");
  fs::create_symlink(dir / "gone", dir / "dangling");
  EXPECT_EQ(ClassifyTarget(dir / "absent"), TargetKind::kAbsent);
  EXPECT_EQ(ClassifyTarget(dir / "dangling"), TargetKind::kAbsent);
  EXPECT_EQ(ClassifyTarget(dir / "file"), TargetKind::kRegular);
  EXPECT_EQ(ClassifyTarget(dir / "link_to_file"), TargetKind::kRegular);
  EXPECT_EQ(ClassifyTarget(dir.path()), TargetKind::kDirectory);
  EXPECT_EQ(ClassifyTarget(dir / "fifo"), TargetKind::kStream);
  EXPECT_EQ(ClassifyTarget(dir / "link_to_fifo"), TargetKind::kStream);
  EXPECT_EQ(ClassifyTarget("/dev/null"), TargetKind::kStream);
  EXPECT_EQ(ClassifyTarget("/dev/stdout"), TargetKind::kStream);
  EXPECT_EQ(ClassifyTarget("/proc/self/fd/1"), TargetKind::kStream);
  // /dev/stdout is a stream whatever fd 1 is, even a regular file.
  fs::create_symlink("/dev/stdout", dir / "to_stdout");
  EXPECT_EQ(ClassifyTarget(dir / "to_stdout"), TargetKind::kStream);
  // A socket cannot be opened for writing: it is neither written into nor replaced.
  MakeSocket(dir / "sock");
  EXPECT_EQ(ClassifyTarget(dir / "sock"), TargetKind::kOther);
  EXPECT_EQ(DescribeTarget(dir / "sock"), "a socket");
  EXPECT_EQ(DescribeTarget(dir / "fifo"), "a FIFO (named pipe)");
  EXPECT_EQ(DescribeTarget("/dev/null"), "a character device");
}

TEST(OutputTargetTest, AtomicFilesNeverReplaceAFifoASocketOrADevice) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  MakeSocket(dir / "sock");
  fs::create_symlink("/dev/null", dir / "null_link");
  fs::create_symlink("/dev/stdout", dir / "stdout_link");
  for (const std::string& path : {dir / "fifo", dir / "sock", dir / "null_link",
                                  dir / "stdout_link", std::string("/dev/null"),
                                  std::string("/dev/stdout"), std::string("/dev/stderr")}) {
    SCOPED_TRACE(path);
    auto file = AtomicFile::Create(path);
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().code, ErrorCode::kNotRegularFile) << file.error().ToString();
    EXPECT_EQ(file.error().file, path);
    const Status written = WriteFileAtomically(path, std::string_view("data"));
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::kNotRegularFile);
  }
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));
  EXPECT_TRUE(fs::is_socket(dir / "sock"));
  EXPECT_TRUE(fs::is_symlink(dir / "null_link"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
  // Nothing was left behind: no temporary beside any of them.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 4);
}

TEST(OutputTargetTest, RegularFilesAndLinksToThemAreStillReplaced) {
  TempDir dir;
  WriteFile(dir / "old", "old");
  fs::create_symlink(dir / "old", dir / "link");
  ASSERT_TRUE(WriteFileAtomically(dir / "link", std::string_view("new")));
  EXPECT_FALSE(fs::is_symlink(dir / "link"));  // the link itself was replaced...
  EXPECT_EQ(ReadFile(dir / "link"), "new");
  EXPECT_EQ(ReadFile(dir / "old"), "old");  // ...never written through
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  ASSERT_TRUE(WriteFileAtomically(dir / "dangling", std::string_view("made")));
  EXPECT_EQ(ReadFile(dir / "dangling"), "made");
}

TEST(OutputTargetTest, WriteOutputFileWritesIntoAFifoAndDevNull) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = ReadFile(dir / "fifo"); });
  const Status written = WriteOutputFile(dir / "fifo", Bytes("module bytes"));
  reader.join();
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_EQ(received, "module bytes");
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));

  ASSERT_TRUE(WriteOutputFile("/dev/null", Bytes("discarded")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  // A regular file is written atomically as before.
  ASSERT_TRUE(WriteOutputFile(dir / "out.pb", Bytes("x")));
  EXPECT_EQ(ReadFile(dir / "out.pb"), "x");
  // A block device is neither replaced nor written (there is none to test with unless one
  // exists; /dev/loop0 often does).
  if (fs::is_block_file("/dev/loop0")) {
    const Status refused = WriteOutputFile("/dev/loop0", Bytes("x"));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kNotRegularFile);
  }
}

TEST(OutputTargetTest, WriteOutputFileThroughDevStdoutReachesTheProcessStdout) {
  TempDir dir;
  const std::string out = dir / "captured";
  const int status = ExitStatusWithin(10, [&] {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 1) < 0) return 3;
    return WriteOutputFile("/dev/stdout", Bytes("to stdout")) ? 0 : 4;
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(ReadFile(out), "to stdout");
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
}

TEST(OutputTargetTest, ReplaceSymlinkRefusesFifosAndTheFileItWouldPointTo) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "value_a.npy").c_str(), 0600), 0);
  WriteFile(dir / "target.npy", "data");
  auto over_fifo = ReplaceSymlink(dir / "target.npy", dir / "value_a.npy");
  ASSERT_FALSE(over_fifo);
  EXPECT_EQ(over_fifo.error().code, ErrorCode::kNotRegularFile);
  EXPECT_TRUE(fs::is_fifo(dir / "value_a.npy"));

  // The link location is the target itself (reached through an aliased directory).
  fs::create_directory(dir / "real");
  WriteFile(dir / "real/value_b.npy", "precious");
  fs::create_directory_symlink(dir / "real", dir / "alias");
  auto self = ReplaceSymlink(dir / "real/value_b.npy", dir / "alias/value_b.npy");
  ASSERT_FALSE(self);
  EXPECT_EQ(self.error().code, ErrorCode::kSelfLink) << self.error().ToString();
  EXPECT_FALSE(fs::is_symlink(dir / "real/value_b.npy"));
  EXPECT_EQ(ReadFile(dir / "real/value_b.npy"), "precious");
}

TEST(ReadTextFileTest, RefusesFifosAndDevicesWithoutWaiting) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "io_transposes.json").c_str(), 0600), 0);
  fs::create_symlink(dir / "io_transposes.json", dir / "link.json");
  for (const std::string& path : {dir / "io_transposes.json", dir / "link.json",
                                  std::string("/dev/zero"), std::string("/dev/null")}) {
    SCOPED_TRACE(path);
    // 0: refused with kIoOpen naming what it is; 1: read; 2: another error; -1: blocked.
    const int status = ExitStatusWithin(10, [&] {
      const auto text = ReadTextFile(path);
      if (text) return 1;
      const std::string& message = text.error().message;
      const bool named = message.find("FIFO") != std::string::npos ||
                         message.find("character device") != std::string::npos;
      return text.error().code == ErrorCode::kIoOpen && named ? 0 : 2;
    });
    EXPECT_EQ(status, 0);
  }
  EXPECT_TRUE(fs::is_fifo(dir / "io_transposes.json"));
}

TEST(ReadTextFileTest, RefusesFilesOverTheCapBeforeReadingThem) {
  TempDir dir;
  const std::string path = dir / "big.json";
  // Sparse: the size says too large, no byte needs reading to know.
  ASSERT_EQ(truncate(path.c_str(), 0), -1);  // absent yet
  WriteFile(path, "[]");
  ASSERT_EQ(truncate(path.c_str(), kMaxSideFileBytes + 1), 0);
  const auto text = ReadTextFile(path);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ErrorCode::kJsonTooLarge);
  EXPECT_NE(text.error().message.find("16 MiB"), std::string::npos) << text.error().message;
  ASSERT_EQ(truncate(path.c_str(), kMaxSideFileBytes), 0);
  EXPECT_TRUE(ReadTextFile(path));
}

}  // namespace
}  // namespace iotx::files
