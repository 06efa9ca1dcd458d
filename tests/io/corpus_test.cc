// The committed fuzz seeds mean what their names say: valid files parse, bad ones are refused
// with the expected code (so the corpora exercise both paths).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/npy.h"
#include "io/pickle.h"
#include "io/safetensors.h"

namespace iotx::io {
namespace {

const std::filesystem::path kCorpus = std::filesystem::path(IOTX_SOURCE_DIR) / "tests/fuzz_corpus";

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(CorpusTest, NpySeeds) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus / "npy")) {
    const std::string name = entry.path().filename();
    auto r = ReadNpy(entry.path());
    EXPECT_EQ(static_cast<bool>(r), !StartsWith(name, "bad_")) << name;
    ++count;
  }
  EXPECT_GE(count, 15);
}

TEST(CorpusTest, PickleSeeds) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus / "pickle")) {
    const std::string name = entry.path().filename();
    auto r = ReadPickle(entry.path());
    if (StartsWith(name, "hostile_") || StartsWith(name, "scalar_")) {
      ASSERT_FALSE(r) << name;
      EXPECT_EQ(r.error().code, ErrorCode::kPickleForbidden) << r.error().ToString();
    } else if (StartsWith(name, "values_")) {
      ASSERT_FALSE(r) << name;
      EXPECT_EQ(r.error().code, ErrorCode::kPickleUnsupportedValue) << r.error().ToString();
    } else if (StartsWith(name, "frames_p4_cut")) {
      ASSERT_FALSE(r) << name;
      EXPECT_EQ(r.error().code, ErrorCode::kPickleFormat) << r.error().ToString();
    } else {
      EXPECT_TRUE(r) << name << ": " << r.error().ToString();
    }
    ++count;
  }
  EXPECT_GE(count, 14);
}

TEST(CorpusTest, SafetensorsSeeds) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus / "safetensors")) {
    const std::string name = entry.path().filename();
    auto r = ReadSafetensors(entry.path());
    EXPECT_EQ(static_cast<bool>(r), !StartsWith(name, "bad_")) << name;
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kSafetensorsFormat) << r.error().ToString();
    }
    ++count;
  }
  EXPECT_GE(count, 6);
}

}  // namespace
}  // namespace iotx::io
