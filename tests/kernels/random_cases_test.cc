// Property test: thousands of random permute-copies against the naive reference
// (tests/support/reference_transpose), each with a random rank (1-6), shape, permutation,
// element size (1, 2, 3, 4, 8, 16), source and destination misalignment (0-63 bytes), store
// mode, thread cap and oneTBB arena size; guard bytes around the output must stay untouched.
// Small cases cover the tile and remainder paths; a second set is large enough (>= 512 KiB,
// the planner's parallel threshold) that the work is split across 2-4 threads.
//
// The seed is fixed so a failure reproduces; IOTX_PROPERTY_SEED=<n> explores other cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <random>
#include <string>

#include "kernels/kernel_test_util.h"

namespace iotx::test {
namespace {

constexpr int kSmallCases = 4000;
constexpr int kParallelCases = 48;

uint64_t RandomCasesSeed() { return PropertySeed(20261129); }

// A shape of `rank` dims holding at most `max_elements` elements: extents are 1 now and then
// (dropped by the planner), small, or near the tile sizes (16, 32, 64 plus or minus one).
std::vector<int64_t> Shape(std::mt19937_64& rng, size_t rank, int64_t max_elements) {
  static constexpr int64_t kNearTiles[] = {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
  for (;;) {
    std::vector<int64_t> shape(rank);
    int64_t product = 1;
    for (int64_t& n : shape) {
      switch (rng() % 4) {
        case 0:
          n = 1;
          break;
        case 1:
          n = kNearTiles[rng() % std::size(kNearTiles)];
          break;
        default:
          n = 2 + static_cast<int64_t>(rng() % 24);
      }
      product *= n;
    }
    if (product <= max_elements) return shape;
  }
}

Case RandomCase(std::mt19937_64& rng, int64_t max_bytes) {
  Case c;
  c.elem = kRandomElemSizes[rng() % std::size(kRandomElemSizes)];
  const size_t rank = 1 + rng() % 6;
  c.shape = Shape(rng, rank, std::max<int64_t>(1, max_bytes / static_cast<int64_t>(c.elem)));
  c.perm = RandomPerm(rng, rank);
  c.src_offset = rng() % 64;
  c.dst_offset = rng() % 64;
  c.threads = 1 + static_cast<int>(rng() % 4);
  c.options.max_threads = static_cast<int>(rng() % 3);  // 0 = the arena's
  static constexpr PlanOptions::Stores kStores[] = {
      PlanOptions::Stores::kAuto, PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming};
  c.options.stores = kStores[rng() % 3];
  c.seed = rng();
  return c;
}

TEST(KernelRandomCases, SmallTensorsOfEveryShapeAndAlignment) {
  const uint64_t seed = RandomCasesSeed();
  SCOPED_TRACE("IOTX_PROPERTY_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < kSmallCases; ++i) {
    CheckCase(RandomCase(rng, 96 * 1024));
    if (HasFatalFailure()) return;
  }
}

TEST(KernelRandomCases, NoWalkReadsPastItsSource) {
  // The same kind of cases with the source between unreadable pages (Case::src_fenced): a
  // load that reads past either end of the source crashes the test.
  // Elements of widths no tile has (row copies) as well.
  const uint64_t seed = RandomCasesSeed() ^ 0xfe2ced;
  SCOPED_TRACE("IOTX_PROPERTY_SEED=" + std::to_string(RandomCasesSeed()));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < kSmallCases / 2; ++i) {
    Case c = RandomCase(rng, 96 * 1024);
    static constexpr size_t kOddWidths[] = {5, 9, 13, 37};
    if (rng() % 4 == 0) c.elem = kOddWidths[rng() % std::size(kOddWidths)];
    c.src_fenced = true;
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

TEST(KernelRandomCases, LargeTensorsSplitAcrossThreads) {
  const uint64_t seed = RandomCasesSeed() ^ 0x9a7a11e1;
  SCOPED_TRACE("IOTX_PROPERTY_SEED=" + std::to_string(RandomCasesSeed()));
  std::mt19937_64 rng(seed);
  int cases = 0;
  while (cases < kParallelCases) {
    Case c = RandomCase(rng, 3 << 20);
    size_t bytes = c.elem;
    for (int64_t n : c.shape) bytes *= static_cast<size_t>(n);
    if (bytes < (512u << 10)) continue;  // below the planner's parallel threshold
    c.threads = 2 + static_cast<int>(rng() % 3);
    CheckCase(c);
    if (HasFatalFailure()) return;
    ++cases;
  }
}

TEST(KernelRandomCases, FusedPlanesSplitAcrossThreads) {
  // Full reversals and their neighbours run as fused planes; where the output's dim 0 spans
  // several SBUF partition tiles the threads cut it (the plane's columns or its fused outer
  // dim), elsewhere the fused rows' outer dim. Every width on every layout, 2 or 3 threads
  // in turn (each width meets both counts).
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> layouts = {
      {{160, 16, 200}, {2, 1, 0}},       {{64, 64, 160}, {2, 1, 0}},
      {{12, 20, 16, 300}, {3, 2, 1, 0}}, {{16, 16, 16, 16, 16}, {4, 3, 2, 1, 0}},
      {{300, 7, 9, 16}, {3, 2, 1, 0}},   {{24, 28, 28, 140}, {3, 2, 1, 0}},
      {{40, 130, 6, 5}, {1, 3, 2, 0}},   {{9, 600, 4, 50}, {3, 1, 2, 0}}};
  int threads = 2;
  for (const auto& [shape, perm] : layouts) {
    for (size_t elem : {1, 2, 4, 8}) {
      Case c;
      c.shape = shape;
      c.perm = perm;
      c.elem = elem;
      c.threads = threads;
      c.dst_offset = 64 * static_cast<size_t>(threads - 2) + elem;
      CheckCase(c);
      if (HasFatalFailure()) return;
      threads = threads == 2 ? 3 : 2;
    }
    threads = threads == 2 ? 3 : 2;  // the next layout starts on the other count
  }
}

}  // namespace
}  // namespace iotx::test
