// DirectAppender against the plainest reference: the same bytes appended to a std::string.
#include "files/direct_appender.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "support/phase_room.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

using test::PhaseRoom;
using test::ReadFile;
using test::TempDir;

constexpr size_t kPhase = DirectAppender::kPhase;

static_assert(kPhase == test::PhaseRoom::kPhase);

std::string RandomText(std::mt19937_64& rng, size_t size) {
  std::string text(size, '\0');
  for (char& c : text) c = static_cast<char>(rng());
  return text;
}

class DirectAppenderTest : public ::testing::Test {
 protected:
  // Opens an appender on a fresh file; skips where the file system has no direct I/O.
  void SetUp() override {
    auto created = AtomicFile::Create(dir_ / "out.bin");
    ASSERT_TRUE(created) << created.error().ToString();
    file_ = std::make_unique<AtomicFile>(std::move(*created));
    auto appender = DirectAppender::Open(*file_);
    ASSERT_TRUE(appender) << appender.error().ToString();
    if (!*appender) GTEST_SKIP() << "no direct I/O on the file system of " << dir_.path();
    appender_ = std::move(*appender);
  }

  Status AppendCopy(const std::string& bytes) {
    expected_ += bytes;
    return appender_->Append(std::as_bytes(std::span(bytes)));
  }

  Status AppendPlaced(const std::string& bytes) {
    PhaseRoom room(appender_->position() % kPhase, bytes.size());
    std::memcpy(room.data(), bytes.data(), bytes.size());
    expected_ += bytes;
    return appender_->AppendInPlace(room.all(), room.head, room.size);
  }

  // Finishes, commits and compares the file with everything appended.
  void ExpectFileIsWhatWasAppended() {
    ASSERT_TRUE(appender_->Finish());
    EXPECT_EQ(fcntl(file_->descriptor(), F_GETFL) & O_DIRECT, 0) << "Finish turns O_DIRECT off";
    ASSERT_TRUE(file_->Commit());
    const std::string back = ReadFile(dir_ / "out.bin");
    ASSERT_EQ(back.size(), expected_.size());
    EXPECT_TRUE(back == expected_) << "the file differs from the bytes appended";
  }

  TempDir dir_;
  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<DirectAppender> appender_;
  std::string expected_;
};

TEST_F(DirectAppenderTest, TurnsDirectWritesOnAndReportsAnAlignment) {
  EXPECT_NE(fcntl(file_->descriptor(), F_GETFL) & O_DIRECT, 0);
  const size_t align = appender_->alignment();
  EXPECT_GT(align, 0u);
  EXPECT_EQ(align & (align - 1), 0u) << "a power of two";
  EXPECT_EQ(kPhase % align, 0u);
}

TEST_F(DirectAppenderTest, CopiedAndPlacedPiecesOfEverySizeInOrder) {
  std::mt19937_64 rng(41);
  // Sizes around the alignments (a header, tensors that end mid-block, empty tensors), pieces
  // that cross blocks, and placed pieces large enough to be written from their room.
  constexpr size_t kLarge = DirectAppender::kInPlaceMinBytes;
  const size_t sizes[] = {0,    1,    7,     511,    512,    513,        4095,      4096,
                          4097, 9728, 65537, kLarge, kLarge, kLarge + 7, 3 * kLarge};
  for (int step = 0; step < 60; ++step) {
    const size_t size = sizes[rng() % std::size(sizes)] + (rng() % 3 == 0 ? rng() % 3000 : 0);
    const std::string bytes = RandomText(rng, size);
    ASSERT_TRUE(rng() % 2 == 0 ? AppendCopy(bytes) : AppendPlaced(bytes)) << "step " << step;
    ASSERT_EQ(appender_->position(), expected_.size());
  }
  ExpectFileIsWhatWasAppended();
}

TEST_F(DirectAppenderTest, PiecesLargerThanTheStagingBuffer) {
  std::mt19937_64 rng(42);
  ASSERT_TRUE(AppendCopy(RandomText(rng, 9728)));                // a safetensors header
  ASSERT_TRUE(AppendCopy(RandomText(rng, (20 << 20) + 3)));      // copied through staging
  ASSERT_TRUE(AppendPlaced(RandomText(rng, (5 << 20) + 1001)));  // straight from the room
  ASSERT_TRUE(AppendCopy(RandomText(rng, 3)));
  ExpectFileIsWhatWasAppended();
}

TEST_F(DirectAppenderTest, AFileShorterThanOneBlock) {
  std::mt19937_64 rng(43);
  ASSERT_TRUE(AppendPlaced(RandomText(rng, 100)));
  ASSERT_TRUE(AppendCopy(RandomText(rng, 5)));
  ExpectFileIsWhatWasAppended();
}

TEST_F(DirectAppenderTest, AnEmptyFile) { ExpectFileIsWhatWasAppended(); }

TEST_F(DirectAppenderTest, DataAtAnotherPhaseIsRefused) {
  std::mt19937_64 rng(44);
  ASSERT_TRUE(AppendCopy(RandomText(rng, 10)));
  PhaseRoom room(11, 100);  // the position's phase is 10
  Status refused = appender_->AppendInPlace(room.all(), room.head, room.size);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInternal);
  EXPECT_EQ(appender_->position(), 10u) << "nothing appended";
  PhaseRoom beyond(10, 100);  // more data than the room holds
  refused = appender_->AppendInPlace(beyond.all(), beyond.head, 200);
  ASSERT_FALSE(refused);
  ExpectFileIsWhatWasAppended();
}

}  // namespace
}  // namespace iotx::files
