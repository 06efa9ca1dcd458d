#include "iotx/dims.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace iotx {
namespace {

std::vector<int64_t> ToVector(const Dims& d) { return {d.begin(), d.end()}; }

TEST(DimsTest, StaysInlineUpToSixValues) {
  Dims d = {3, 2048, 2, 128, 7, 9};
  EXPECT_TRUE(d.is_inline());
  EXPECT_EQ(d.size(), 6u);
  d.push_back(5);
  EXPECT_FALSE(d.is_inline());
  EXPECT_EQ(ToVector(d), (std::vector<int64_t>{3, 2048, 2, 128, 7, 9, 5}));
}

TEST(DimsTest, CopyAndMoveKeepValuesInBothStorageModes) {
  for (size_t n : {0u, 1u, 6u, 7u, 40u}) {
    Dims a;
    for (size_t i = 0; i < n; ++i) a.push_back(static_cast<int64_t>(i * 3 + 1));
    const std::vector<int64_t> expected = ToVector(a);

    Dims copy = a;
    EXPECT_EQ(ToVector(copy), expected);
    EXPECT_EQ(copy, a);

    Dims moved = std::move(copy);
    EXPECT_EQ(ToVector(moved), expected);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    copy.push_back(1);          // and still usable
    EXPECT_EQ(copy.size(), 1u);

    Dims assigned = {1, 2, 3, 4, 5, 6, 7, 8};  // heap-backed target
    assigned = a;
    EXPECT_EQ(ToVector(assigned), expected);
    Dims move_assigned = {1};
    move_assigned = std::move(assigned);
    EXPECT_EQ(ToVector(move_assigned), expected);
    move_assigned = move_assigned;  // self-assignment is harmless
    EXPECT_EQ(ToVector(move_assigned), expected);
  }
}

TEST(DimsTest, MatchesStdVectorUnderRandomEdits) {
  std::mt19937 rng(42);
  Dims d;
  std::vector<int64_t> ref;
  for (int step = 0; step < 5000; ++step) {
    switch (rng() % 6) {
      case 0:
      case 1: {
        int64_t v = static_cast<int64_t>(rng());
        d.push_back(v);
        ref.push_back(v);
        break;
      }
      case 2:
        if (!ref.empty()) {
          d.pop_back();
          ref.pop_back();
        }
        break;
      case 3:
        if (!ref.empty()) {
          size_t i = rng() % ref.size();
          d.erase(i);
          ref.erase(ref.begin() + static_cast<ptrdiff_t>(i));
        }
        break;
      case 4: {
        size_t i = rng() % (ref.size() + 1);
        int64_t v = static_cast<int64_t>(rng() % 100);
        d.insert(i, v);
        ref.insert(ref.begin() + static_cast<ptrdiff_t>(i), v);
        break;
      }
      case 5: {
        size_t n = rng() % 12;
        d.resize(n, -1);
        ref.resize(n, -1);
        break;
      }
    }
    ASSERT_EQ(ToVector(d), ref) << "after step " << step;
  }
}

TEST(DimsTest, PrintsLikePythonLists) {
  EXPECT_EQ(ToString(Dims{3, 2048, 2, 128}), "[3, 2048, 2, 128]");
  EXPECT_EQ(ToString(Dims{}), "[]");
  EXPECT_EQ(ToString(Dims{-1}), "[-1]");
}

TEST(DimsTest, CheckedProduct) {
  EXPECT_EQ(CheckedProduct(Dims{}), 1);
  EXPECT_EQ(CheckedProduct(Dims{6144, 256}), 6144 * 256);
  EXPECT_EQ(CheckedProduct(Dims{3, 0, 5}), 0);
  EXPECT_EQ(CheckedProduct(Dims{-1, 4}), std::nullopt);
  const int64_t big = int64_t{1} << 32;
  EXPECT_EQ(CheckedProduct(Dims{big, big}), std::nullopt);
  EXPECT_EQ(CheckedProduct(Dims{big, big / 4}), std::numeric_limits<int64_t>::max() / 2 + 1);
  // A zero does not hide an overflow of the other dims: strides would still overflow.
  EXPECT_EQ(CheckedProduct(Dims{0, big, big}), std::nullopt);
}

}  // namespace
}  // namespace iotx
