// The committed fuzz seeds mean what their names say: valid files parse, bad ones are refused
// with the expected code (so the corpora exercise both paths). Inputs that scripts/fuzz added
// are named by their SHA-1 and promise only new coverage; the replay tests run those.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/pickle.h"
#include "io/safetensors.h"

namespace iotx::io {
namespace {

const std::filesystem::path kCorpus = std::filesystem::path(IOTX_SOURCE_DIR) / "tests/fuzz_corpus";

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool IsSha1Name(const std::string& name) {
  return name.size() == 40 &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(c) != 0; });
}

// The hand-named seeds of one corpus.
std::vector<std::filesystem::path> NamedSeeds(const std::string& corpus) {
  std::vector<std::filesystem::path> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus / corpus)) {
    if (!IsSha1Name(entry.path().filename())) seeds.push_back(entry.path());
  }
  return seeds;
}

TEST(CorpusTest, NpySeeds) {
  int count = 0;
  for (const std::filesystem::path& path : NamedSeeds("npy")) {
    const std::string name = path.filename();
    auto r = ReadNpy(path);
    EXPECT_EQ(static_cast<bool>(r), !StartsWith(name, "bad_")) << name;
    ++count;
  }
  EXPECT_GE(count, 15);
}

TEST(CorpusTest, PickleSeeds) {
  int count = 0;
  for (const std::filesystem::path& path : NamedSeeds("pickle")) {
    const std::string name = path.filename();
    auto r = ReadPickle(path);
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
  for (const std::filesystem::path& path : NamedSeeds("safetensors")) {
    const std::string name = path.filename();
    auto r = ReadSafetensors(path);
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
