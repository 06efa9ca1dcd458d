// MakePlan's strided-source entry (include/iotx/plan.h): random views of a larger buffer
// (axes reordered, stepped, reversed, broadcast) permuted straight from their strides, compared
// with the naive reference run on the view gathered element by element into a dense copy.
// The seed is fixed so a failure reproduces; IOTX_PROPERTY_SEED=<n> explores other cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "iotx/dims.h"
#include "iotx/plan.h"
#include "support/reference_transpose.h"
#include "kernels/kernel_test_util.h"

namespace iotx::test {
namespace {

constexpr int kCases = 1500;

uint64_t StridedSeed() { return PropertySeed(20261201); }

struct View {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // bytes
  int64_t origin = 0;            // byte offset of element (0, ..., 0) in the buffer
};

// A view of a dense row-major buffer of `base` (elem-byte elements): each axis stepped by
// 1, 2, 3, -1 or -2 (or broadcast now and then), then the axes reordered.
View RandomView(std::mt19937_64& rng, const std::vector<int64_t>& base, size_t elem) {
  const size_t rank = base.size();
  std::vector<int64_t> dense(rank);
  int64_t stride = static_cast<int64_t>(elem);
  for (size_t i = rank; i-- > 0;) {
    dense[i] = stride;
    stride *= base[i];
  }
  View v;
  std::vector<int64_t> shape(rank), strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    static constexpr int64_t kSteps[] = {1, 1, 2, 3, -1, -2, 0};
    const int64_t step = kSteps[rng() % std::size(kSteps)];
    const int64_t magnitude = step < 0 ? -step : step;
    shape[i] = step == 0 ? 1 + static_cast<int64_t>(rng() % 4) : (base[i] + magnitude - 1) / magnitude;
    strides[i] = step * dense[i];
    if (step < 0) v.origin += (base[i] - 1) * dense[i];
  }
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t k : order) {
    v.shape.push_back(shape[k]);
    v.strides.push_back(strides[k]);
  }
  return v;
}

// The view's elements in row-major order, one index computation each.
std::vector<std::byte> Gather(const std::byte* buffer, const View& v, size_t elem) {
  const int64_t count = std::accumulate(v.shape.begin(), v.shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<std::byte> out(static_cast<size_t>(count) * elem);
  std::vector<int64_t> index(v.shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t offset = v.origin;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * v.strides[i];
    std::memcpy(out.data() + flat * static_cast<int64_t>(elem), buffer + offset, elem);
    for (size_t i = index.size(); i-- > 0;) {
      if (++index[i] < v.shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

TEST(StridedSourceTest, RandomViewsMatchTheReference) {
  const uint64_t seed = StridedSeed();
  SCOPED_TRACE("IOTX_PROPERTY_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int c = 0; c < kCases; ++c) {
    const size_t elem = kRandomElemSizes[rng() % std::size(kRandomElemSizes)];
    const size_t rank = 1 + rng() % 5;
    // Some cases are large enough (>= 512 KiB) for the parallel driver.
    const int64_t max_elements = (c % 50 == 0 ? (2 << 20) : (24 << 10)) / static_cast<int64_t>(elem);
    const std::vector<int64_t> base = RandomShape(rng, rank, max_elements, false);
    const View v = RandomView(rng, base, elem);
    const std::vector<int64_t> perm = RandomPerm(rng, rank);
    const int64_t base_count = std::accumulate(base.begin(), base.end(), int64_t{1}, std::multiplies<>());
    const std::vector<std::byte> buffer = RandomBytes(static_cast<size_t>(base_count) * elem, rng());
    const std::vector<std::byte> dense = Gather(buffer.data(), v, elem);
    const std::vector<std::byte> expected = ReferenceTranspose(dense.data(), v.shape, perm, elem);

    PlanOptions options;
    options.max_threads = static_cast<int>(rng() % 3);
    auto plan = MakePlan(v.shape, v.strides, perm, elem, options);
    const std::string what = "elem " + std::to_string(elem) + " view " + ToString(v.shape) +
                             " strides " + ToString(v.strides) + " perm " + ToString(perm);
    ASSERT_TRUE(plan.has_value()) << what << ": " << plan.error().ToString();
    std::vector<std::byte> out(expected.size() + 64, std::byte{0x5a});
    ASSERT_TRUE(Execute(**plan, buffer.data() + v.origin, out.data() + 32).has_value()) << what;
    ASSERT_EQ(0, std::memcmp(out.data() + 32, expected.data(), expected.size())) << what;
    for (size_t i = 0; i < 32; ++i) {
      ASSERT_EQ(out[i], std::byte{0x5a}) << what;
      ASSERT_EQ(out[out.size() - 1 - i], std::byte{0x5a}) << what;
    }
  }
}

TEST(StridedSourceTest, RowCopiesReadOnlyTheirView) {
  // Elements of no tile width (a row copy) from views whose rows run backwards, are broadcast
  // or are stepped, over a buffer that ends at an unreadable page: the row copy moves an
  // element as a whole vector only where the rows after it lie further on in the source.
  for (size_t elem : {3, 9, 20, 37}) {
    const int64_t rows = 70, cols = 5;
    const std::vector<std::byte> bytes = RandomBytes(static_cast<size_t>(rows * cols) * elem, elem);
    const FencedBytes buffer(bytes);
    ASSERT_NE(buffer.data(), nullptr);
    const auto row = static_cast<int64_t>(cols * static_cast<int64_t>(elem));
    const auto e = static_cast<int64_t>(elem);
    const std::vector<View> views = {
        {{rows, cols}, {-row, e}, (rows - 1) * row},          // rows reversed
        {{rows / 2, cols}, {-2 * row, e}, (rows - 1) * row},  // every other row, reversed
        {{rows, cols}, {0, e}, (rows - 1) * row},             // the last row broadcast
        {{rows / 2, cols}, {2 * row, e}, row}};               // every other row, from the second
    for (const View& v : views) {
      const std::vector<std::byte> expected =
          ReferenceTranspose(Gather(buffer.data(), v, elem).data(), v.shape, {{1, 0}}, elem);
      auto plan = MakePlan(v.shape, v.strides, std::vector<int64_t>{1, 0}, elem);
      ASSERT_TRUE(plan.has_value());
      const std::string what = "elem " + std::to_string(elem) + " strides " + ToString(v.strides);
      ASSERT_NE(Describe(**plan).find("strategy: row-copy"), std::string::npos) << what;
      std::vector<std::byte> out(expected.size());
      ASSERT_TRUE(Execute(**plan, buffer.data() + v.origin, out.data()).has_value()) << what;
      EXPECT_EQ(out, expected) << what;
    }
  }
}

TEST(StridedSourceTest, DenseStridesPlanLikeTheDenseEntry) {
  const std::vector<int64_t> shape{3, 16, 128, 2, 2, 64}, perm{0, 4, 5, 3, 1, 2};
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 4;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  auto dense = MakePlan(shape, perm, 4);
  auto strided = MakePlan(shape, strides, perm, 4);
  ASSERT_TRUE(dense.has_value() && strided.has_value());
  EXPECT_EQ(Describe(**dense), Describe(**strided));
}

TEST(StridedSourceTest, ChecksItsArguments) {
  const std::vector<int64_t> shape{4, 8}, perm{1, 0};
  EXPECT_EQ(MakePlan(shape, std::vector<int64_t>{32}, perm, 4).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(MakePlan(shape, std::vector<int64_t>{INT64_MAX / 2, 4}, perm, 4).error().code,
            ErrorCode::kDimOverflow);
  // The source of a transposed view reaches 4 * 8 * 4 bytes from its start: a destination
  // inside that range overlaps even where the first PlanBytes bytes would not tell.
  auto plan = MakePlan(shape, std::vector<int64_t>{4, 64}, perm, 4);  // every other row
  ASSERT_TRUE(plan.has_value());
  std::vector<std::byte> buffer(1024);
  EXPECT_EQ(Execute(**plan, buffer.data(), buffer.data() + 200).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Execute(**plan, buffer.data(), buffer.data() + 512).has_value());
  EXPECT_EQ(ExecuteRange(**plan, buffer.data(), buffer.data() + 512, 0, 16).error().code,
            ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace iotx::test
