// bench/traffic_walks: which lines the traffic walks move. Each source line carries its own
// number; after a walk every destination line must hold exactly one whole source line, every
// source line must arrive exactly once, and the line a destination line receives must be one
// the real permute reads for it (the tile walk) or come from the same block (the staged walk).
// The true permute's lines are computed here from the shape and permutation, element by
// element, not with the walks' strides.
#include "traffic_walks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace iotx::bench {
namespace {

struct Case {
  std::vector<int64_t> shape, perm;
  int64_t element_bytes;
};

std::string Name(const Case& c) {
  std::string s;
  for (int64_t n : c.shape) s += std::to_string(n) + ",";
  s += " perm ";
  for (int64_t p : c.perm) s += std::to_string(p) + ",";
  return s + " " + std::to_string(c.element_bytes) + " B";
}

struct FreeAligned {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte[], FreeAligned>;
AlignedBytes Aligned(size_t bytes) {
  return AlignedBytes(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
}

// A row-major index of a shape, by its own arithmetic rather than the walks' strides.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

struct Layout {
  Case c;
  std::vector<int64_t> dst_shape;
  int64_t elements = 0, lines = 0, per_line = 0;
  explicit Layout(Case cs) : c(std::move(cs)) {
    for (int64_t p : c.perm) dst_shape.push_back(c.shape[static_cast<size_t>(p)]);
    elements = std::accumulate(c.shape.begin(), c.shape.end(), int64_t{1}, std::multiplies<>());
    per_line = 64 / c.element_bytes;
    lines = elements / per_line;
  }
  // The source index of the element the permute writes at destination element `flat`.
  std::vector<int64_t> SourceOf(int64_t dst_flat) const {
    const std::vector<int64_t> d = Unflatten(dst_flat, dst_shape);
    std::vector<int64_t> s(c.shape.size());
    for (size_t j = 0; j < d.size(); ++j) s[static_cast<size_t>(c.perm[j])] = d[j];
    return s;
  }
};

// Runs `walk` on a source whose line L holds the number L in every 4-byte word (64-byte
// elements and lines alike), then checks the invariants; `same_place(received source index,
// a true source index of the destination line)` is the walk's locality rule.
template <class Walk, class SamePlace>
void CheckWalk(const Layout& l, const Walk& walk, const SamePlace& same_place) {
  const auto bytes = static_cast<size_t>(l.elements * l.c.element_bytes);
  AlignedBytes src = Aligned(bytes), dst = Aligned(bytes);
  for (int64_t line = 0; line < l.lines; ++line) {
    const auto id = static_cast<uint32_t>(line);
    for (int w = 0; w < 16; ++w) std::memcpy(src.get() + line * 64 + w * 4, &id, 4);
  }
  std::memset(dst.get(), 0xff, bytes);
  walk(src.get(), dst.get());

  std::vector<int> arrivals(static_cast<size_t>(l.lines), 0);
  for (int64_t line = 0; line < l.lines; ++line) {
    uint32_t id = 0;
    std::memcpy(&id, dst.get() + line * 64, 4);
    ASSERT_LT(id, static_cast<uint64_t>(l.lines)) << "destination line " << line << " not written";
    for (int w = 1; w < 16; ++w) {
      uint32_t word = 0;
      std::memcpy(&word, dst.get() + line * 64 + w * 4, 4);
      ASSERT_EQ(word, id) << "destination line " << line << " holds parts of two source lines";
    }
    ++arrivals[id];
    const std::vector<int64_t> received = Unflatten(int64_t{id} * l.per_line, l.c.shape);
    bool near = false;
    for (int64_t e = 0; e < l.per_line && !near; ++e) {
      near = same_place(received, l.SourceOf(line * l.per_line + e));
    }
    ASSERT_TRUE(near) << "destination line " << line << " received source line " << id
                      << ", which the permute does not read near it";
  }
  for (int64_t line = 0; line < l.lines; ++line) {
    ASSERT_EQ(arrivals[static_cast<size_t>(line)], 1) << "source line " << line;
  }
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {{64, 48}, {1, 0}, 4},
      {{128, 192}, {1, 0}, 1},
      {{3, 64, 2, 32}, {0, 3, 2, 1}, 2},
      {{16, 8, 24}, {2, 1, 0}, 8},
      {{32, 16, 48}, {2, 0, 1}, 4},
      {{8, 1, 12, 4}, {3, 1, 2, 0}, 16},
      {{2, 3, 16, 16}, {1, 3, 0, 2}, 4},
  };
  return cases;
}

TEST(TrafficWalksTest, TileWalkMovesEachLineOnceToADestinationLineThatReadsIt) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Name(c));
    const Layout layout(c);
    const auto plane = PlaneOf(c.shape, c.perm, c.element_bytes);
    ASSERT_TRUE(plane) << plane.error().ToString();
    for (const bool streaming : {false, true}) {
      // Strips of two tiles, so a plane of several strips walks more than one.
      CheckWalk(
          layout,
          [&](const std::byte* s, std::byte* d) {
            TileWalkTraffic(*plane, s, d, 2 * plane->tile, streaming);
          },
          [&](const std::vector<int64_t>& received, const std::vector<int64_t>& wanted) {
            // The received line is the one holding `wanted`: same index but the innermost
            // dim's line.
            std::vector<int64_t> a = received, b = wanted;
            a.back() /= layout.per_line;
            b.back() /= layout.per_line;
            return a == b;
          });
    }
  }
}

TEST(TrafficWalksTest, StagedWalkMovesEachLineOnceWithinItsBlock) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Name(c));
    const Layout layout(c);
    const auto plane = PlaneOf(c.shape, c.perm, c.element_bytes);
    ASSERT_TRUE(plane) << plane.error().ToString();
    const size_t row_dim = static_cast<size_t>(c.perm.back()), column_dim = c.shape.size() - 1;
    const int64_t block_rows = plane->tile, block_bytes = 128;
    AlignedBytes stage = Aligned(static_cast<size_t>(block_rows * block_bytes));
    for (const bool streaming : {false, true}) {
      CheckWalk(
          layout,
          [&](const std::byte* s, std::byte* d) {
            StagedWalkTraffic(*plane, s, d, stage.get(), block_rows, block_bytes, streaming);
          },
          [&](const std::vector<int64_t>& received, const std::vector<int64_t>& wanted) {
            // Same position in every other dim, same block of rows and of columns.
            for (size_t i = 0; i < received.size(); ++i) {
              int64_t block = 1;
              if (i == row_dim) block = block_rows;
              if (i == column_dim) block = block_bytes / c.element_bytes;
              if (received[i] / block != wanted[i] / block) return false;
            }
            return true;
          });
    }
  }
}

TEST(TrafficWalksTest, PlaneOfAReversalIsItsOuterDimsAroundTheTwoInnermost) {
  // f32 256^3 reversed: rows along dim 0 (innermost in the destination), columns along dim 2.
  const int64_t shape[] = {256, 256, 256}, perm[] = {2, 1, 0};
  const auto plane = PlaneOf(shape, perm, 4);
  ASSERT_TRUE(plane) << plane.error().ToString();
  EXPECT_EQ(plane->tile, 16);
  EXPECT_EQ(plane->rows, 256);
  EXPECT_EQ(plane->columns, 256);
  EXPECT_EQ(plane->src_row_stride, 256 * 256 * 4);
  EXPECT_EQ(plane->dst_column_stride, 256 * 256 * 4);
  EXPECT_EQ(plane->outer_extents, std::vector<int64_t>{256});
  EXPECT_EQ(plane->outer_src_strides, std::vector<int64_t>{1024});
  EXPECT_EQ(plane->outer_dst_strides, std::vector<int64_t>{1024});
}

TEST(TrafficWalksTest, PlaneOfRefusesLayoutsWithoutAPlaneOfWholeTiles) {
  const auto refused = [](std::vector<int64_t> shape, std::vector<int64_t> perm, int64_t elem) {
    const auto plane = PlaneOf(shape, perm, elem);
    return plane ? std::string() : plane.error().message;
  };
  EXPECT_NE(refused({64, 64}, {0, 1}, 4).find("row copy"), std::string::npos);
  EXPECT_NE(refused({3, 224}, {1, 0}, 4).find("3 x 224 is not whole tiles of 16 x 16"),
            std::string::npos);
  EXPECT_NE(refused({64, 64}, {1, 1}, 4).find("not a permutation"), std::string::npos);
  EXPECT_NE(refused({64, 64}, {1, 0}, 3).find("power-of-two element"), std::string::npos);
  EXPECT_NE(refused({64}, {0}, 4).find("at least 2 dims"), std::string::npos);
}

}  // namespace
}  // namespace iotx::bench
