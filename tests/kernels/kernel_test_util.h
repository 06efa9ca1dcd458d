// Shared helpers for the kernel tests: run a plan on guarded, offset buffers and compare with
// the naive reference (tests/support/reference_transpose.h), which shares no code with it.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "iotx/plan.h"
#include "kernels/machine.h"

namespace iotx::test {

// A copy of `data` whose last byte ends a page, between two unreadable pages: a kernel that
// reads past either end of it crashes the test. data() is null when mapping failed.
class FencedBytes {
 public:
  explicit FencedBytes(const std::vector<std::byte>& data);
  ~FencedBytes();
  FencedBytes(const FencedBytes&) = delete;
  FencedBytes& operator=(const FencedBytes&) = delete;
  const std::byte* data() const { return data_; }

 private:
  std::byte* base_ = nullptr;
  std::byte* data_ = nullptr;
  size_t length_ = 0;
};

struct Case {
  std::vector<int64_t> shape;
  std::vector<int64_t> perm;
  size_t elem = 4;
  PlanOptions options;
  size_t src_offset = 0;  // bytes the source starts past an aligned allocation
  size_t dst_offset = 0;
  int threads = 1;        // size of the oneTBB arena Execute runs in
  // > 0: the output made by ExecuteRange calls of this many bytes each (the last shorter),
  // each into its place in the destination, instead of one Execute.
  size_t range_bytes = 0;
  uint64_t seed = 1;
  // The source in FencedBytes: reads past either end of it crash (src_offset is then unused).
  bool src_fenced = false;
};

std::string Describe(const Case& c);

// Plans and executes `c`; expects the output to equal the reference and every byte around
// the output range (guard bytes) to be untouched.
void CheckCase(const Case& c);

// A random shape of `rank` dims (with 0 and 1 extents now and then) of at most max_elements.
std::vector<int64_t> RandomShape(std::mt19937_64& rng, size_t rank, int64_t max_elements,
                                 bool allow_zero);
std::vector<int64_t> RandomPerm(std::mt19937_64& rng, size_t rank);

// The element sizes random cases draw from: every width the kernel specializes, and 3 and 16
// bytes, which it runs as wider or narrower elements.
inline constexpr size_t kRandomElemSizes[] = {1, 2, 3, 4, 8, 16};

// Gives the planner back this machine's own walk choices (kernels::SetShortStripsForTest,
// SetPrefetchAheadForTest) when the test that overrode them ends, however it ends.
struct RestoreMachineOverrides {
  ~RestoreMachineOverrides() {
    kernels::SetShortStripsForTest(std::nullopt);
    kernels::SetPrefetchAheadForTest(std::nullopt);
    kernels::SetRealignRowsForTest(std::nullopt);
  }
};

// IOTX_PROPERTY_SEED when set (to explore other cases), else a test's fixed seed.
uint64_t PropertySeed(uint64_t fixed_seed);

}  // namespace iotx::test
