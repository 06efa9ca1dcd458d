// PermuteCopy (the kernel behind both producer commands) against the naive reference.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "producer/permute_copy.h"
#include "support/reference_transpose.h"

namespace iotx::producer {
namespace {

using test::RandomBytes;
using test::ReferenceTranspose;

struct Case {
  Dims reshape;
  Dims transpose;
};

TEST(PermuteCopyTest, MatchesTheReferenceForEveryElementSize) {
  const std::vector<Case> cases = {
      {{3, 2048, 2, 128}, {0, 3, 2, 1}},        // the source document's simplified p0
      {{3, 16, 128, 2, 2, 64}, {0, 4, 5, 3, 1, 2}},  // ... and unsimplified
      {{768, 768}, {1, 0}},
      {{5, 7, 3}, {2, 0, 1}},
      {{2, 3, 1, 2, 2, 1, 3}, {6, 5, 4, 3, 2, 1, 0}},  // rank 7
      {{17}, {0}},
  };
  for (size_t element_size : {1, 2, 4, 8, 16, 3}) {
    for (const Case& c : cases) {
      const size_t bytes = static_cast<size_t>(*CheckedProduct(c.reshape)) * element_size;
      const std::vector<std::byte> src = RandomBytes(bytes, bytes + element_size);
      std::vector<std::byte> dst(bytes);
      const TransposeSpec spec{c.reshape, c.transpose};
      ASSERT_TRUE(PermuteCopy(&spec, src, element_size, dst)) << ToString(c.reshape);
      EXPECT_EQ(dst, ReferenceTranspose(src.data(), c.reshape, c.transpose, element_size))
          << ToString(c.reshape) << " / " << ToString(c.transpose) << ", " << element_size
          << "-byte elements";
    }
  }
}

TEST(PermuteCopyTest, NullSpecCopies) {
  const std::vector<std::byte> src = RandomBytes(3 << 20, 5);
  std::vector<std::byte> dst(src.size());
  ASSERT_TRUE(PermuteCopy(nullptr, src, 4, dst));
  EXPECT_EQ(dst, src);
}

TEST(PermuteCopyTest, EmptyTensorsMoveNothing) {
  const TransposeSpec spec{{0, 4}, {1, 0}};
  EXPECT_TRUE(PermuteCopy(&spec, {}, 2, {}));
  EXPECT_TRUE(PermuteCopy(nullptr, {}, 2, {}));
}

TEST(PermuteCopyTest, RefusesBuffersOfTheWrongSize) {
  const TransposeSpec spec{{4, 6}, {1, 0}};
  std::vector<std::byte> src(24 * 4), dst(24 * 4), short_dst(23 * 4);
  EXPECT_EQ(PermuteCopy(&spec, src, 4, short_dst).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(PermuteCopy(&spec, src, 2, dst).error().code, ErrorCode::kBufferSize);  // 48 != 24
  EXPECT_EQ(PermuteCopy(&spec, std::span(src).first(10), 4, std::span(dst).first(10))
                .error()
                .code,
            ErrorCode::kBufferSize);
}

TEST(PermuteCopyTest, DeviceShapeIsTheTransposedReshape) {
  EXPECT_EQ(DeviceShape({{3, 2048, 2, 128}, {0, 3, 2, 1}}), (Dims{3, 128, 2, 2048}));
  EXPECT_EQ(DeviceShape({{768, 768}, {1, 0}}), (Dims{768, 768}));
  EXPECT_EQ(DeviceShape({{}, {}}), Dims{});
}

}  // namespace
}  // namespace iotx::producer
