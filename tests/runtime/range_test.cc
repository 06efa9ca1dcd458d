// Chunked feeding (ApplyRange) and per-call threads (ExecuteOptions): every range compared
// byte for byte with the whole output and with the naive reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "iotx/runtime.h"
#include "random_model.h"
#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

// Splits [0, total) into consecutive ranges: random sizes, small ones (0, 1 byte, a few
// bytes: inside elements) and large ones alike.
std::vector<std::pair<size_t, size_t>> RandomPartition(size_t total, std::mt19937& rng) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t offset = 0;
  while (offset < total) {
    size_t length = 0;
    switch (rng() % 5) {
      case 0: length = rng() % 3; break;
      case 1: length = 1 + rng() % 17; break;
      case 2: length = 1 + rng() % (total / 3 + 1); break;
      default: length = 1 + rng() % (total + 1); break;
    }
    length = std::min(length, total - offset);
    ranges.push_back({offset, length});
    offset += length;
  }
  return ranges;
}

// Applies `ranges` of input k one by one into separately allocated buffers with guard bytes,
// and checks each against the bytes `want` holds there.
void CheckRanges(const InputTransformer& t, size_t k, const std::vector<std::byte>& src,
                 const std::vector<std::byte>& want,
                 const std::vector<std::pair<size_t, size_t>>& ranges,
                 const ExecuteOptions& options = {}) {
  for (const auto& [offset, length] : ranges) {
    std::vector<std::byte> dst(length + 2, std::byte{0xCD});
    Status s = t.ApplyRange(k, {src.data(), src.size()}, offset, {dst.data() + 1, length}, options);
    ASSERT_TRUE(s) << s.error().ToString();
    ASSERT_TRUE(std::equal(dst.begin() + 1, dst.end() - 1, want.begin() + offset))
        << "range [" << offset << ", " << offset + length << ") of " << want.size();
    ASSERT_EQ(dst.front(), std::byte{0xCD});
    ASSERT_EQ(dst.back(), std::byte{0xCD});
  }
}

TEST(ApplyRangeTest, RandomModelsAndRangesMatchTheWholeOutput) {
  std::mt19937 rng(21);
  int ranges_checked = 0;
  for (int trial = 0; trial < 150; ++trial) {
    auto model = RandomModel(rng, 1 + static_cast<int>(rng() % 4));
    auto t = InputTransformer::FromSpecs(Specs(model), Parameters(model));
    ASSERT_TRUE(t) << t.error().ToString();
    for (size_t k = 0; k < model.size(); ++k) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " input " + std::to_string(k));
      const size_t bytes = *t->output_bytes(k);
      std::vector<std::byte> src = RandomBytes(bytes, 1000 * trial + k);
      std::vector<std::byte> whole(bytes);
      ASSERT_TRUE(t->Apply(k, {src.data(), bytes}, {whole.data(), bytes}));
      ASSERT_EQ(whole, ReferenceOutput(model[k], src));
      const auto ranges = RandomPartition(bytes, rng);
      CheckRanges(*t, k, src, whole, ranges);
      ranges_checked += static_cast<int>(ranges.size());
      // Every single byte, for small outputs.
      if (bytes <= 64) {
        std::vector<std::pair<size_t, size_t>> singles;
        for (size_t b = 0; b < bytes; ++b) singles.push_back({b, 1});
        CheckRanges(*t, k, src, whole, singles);
      }
    }
  }
  EXPECT_GT(ranges_checked, 1000);
}

struct LargeCase {
  const char* name;
  Dims shape;
  size_t element_size;
  TransposeSpec spec;
};

// ctest lists a parameter by its name rather than as 232 raw bytes.
void PrintTo(const LargeCase& c, std::ostream* os) { *os << c.name; }

// Large enough that the pieces of a range are planned with several threads and streaming
// stores, and shaped so that boxes with and without the source-innermost dim occur.
const LargeCase kLargeCases[] = {
    {"1024x1024_f32_T", {1024, 1024}, 4, {{1024, 1024}, {1, 0}}},
    {"src_example_bf16", {6144, 256}, 2, {{3, 2048, 2, 128}, {0, 3, 2, 1}}},
    {"12^5_reversed_u8", {248832}, 1, {{12, 12, 12, 12, 12}, {4, 3, 2, 1, 0}}},
    {"rows_of_12B", {4096, 96}, 12, {{64, 64, 96}, {1, 0, 2}}},
    {"copy_f64", {300000}, 8, {{300000}, {0}}},
};

class ApplyRangeLargeTest : public ::testing::TestWithParam<LargeCase> {};

TEST_P(ApplyRangeLargeTest, RangesMatchTheReference) {
  const LargeCase& c = GetParam();
  SpecMap specs;
  specs.TryEmplace("x", c.spec);
  std::vector<ParameterDesc> params = {{"x", c.shape, c.element_size}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t) << t.error().ToString();
  const size_t bytes = *t->output_bytes(0);
  std::vector<std::byte> src = RandomBytes(bytes, 77);
  const std::vector<std::byte> want =
      ReferenceTranspose(src.data(), c.spec.reshape, c.spec.transpose, c.element_size);
  std::mt19937 rng(5);
  // Random partitions, then DMA-style chunks of a power of two, then one range of everything.
  for (int round = 0; round < 3; ++round) CheckRanges(*t, 0, src, want, RandomPartition(bytes, rng));
  std::vector<std::pair<size_t, size_t>> chunks;
  for (size_t off = 0; off < bytes; off += 256 * 1024) {
    chunks.push_back({off, std::min<size_t>(256 * 1024, bytes - off)});
  }
  CheckRanges(*t, 0, src, want, chunks);
  CheckRanges(*t, 0, src, want, {{0, bytes}});
  ExecuteOptions one_thread;
  one_thread.max_threads = 1;
  CheckRanges(*t, 0, src, want, {{3, bytes - 7}}, one_thread);
  EXPECT_GE(*t->range_granule(0), size_t{1});
}

INSTANTIATE_TEST_SUITE_P(Cases, ApplyRangeLargeTest, ::testing::ValuesIn(kLargeCases),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '^', '_');
                           return name;
                         });

TEST(ApplyRangeTest, RangesOnManyThreadsAtOnce) {
  SpecMap specs;
  specs.TryEmplace("x", TransposeSpec{{64, 48, 96}, {2, 0, 1}});
  std::vector<ParameterDesc> params = {{"x", {64, 4608}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t);
  const size_t bytes = *t->output_bytes(0);
  std::vector<std::byte> src = RandomBytes(bytes, 9);
  const std::vector<std::byte> want = ReferenceTranspose(src.data(), Dims{64, 48, 96},
                                                         Dims{2, 0, 1}, 4);
  std::vector<std::byte> dst(bytes);
  constexpr size_t kChunk = 40000;  // not a multiple of anything in the shape
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&] {
      for (;;) {
        const size_t off = next.fetch_add(kChunk);
        if (off >= bytes) return;
        const size_t len = std::min(kChunk, bytes - off);
        if (!t->ApplyRange(0, {src.data(), bytes}, off, {dst.data() + off, len})) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(dst, want);
}

TEST(ApplyRangeTest, RefusesBadRanges) {
  SpecMap specs;
  specs.TryEmplace("x", TransposeSpec{{4, 6}, {1, 0}});
  std::vector<ParameterDesc> params = {{"x", {4, 6}, 4}, {"y", {24}, 4}, {"z", {0}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t);
  std::vector<std::byte> src = RandomBytes(96, 1), dst(96);
  auto range = [&](size_t k, size_t src_size, size_t offset, void* d, size_t length) {
    return t->ApplyRange(k, {src.data(), src_size}, offset, {d, length});
  };
  EXPECT_EQ(range(0, 95, 0, dst.data(), 10).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(range(0, 96, 90, dst.data(), 7).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(range(0, 96, 97, dst.data(), 0).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(range(0, 96, SIZE_MAX, dst.data(), 2).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(range(0, 96, 2, dst.data(), SIZE_MAX).error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(range(3, 96, 0, dst.data(), 1).error().code, ErrorCode::kIndexOutOfRange);
  EXPECT_EQ(range(0, 96, 0, nullptr, 4).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(t->ApplyRange(0, {nullptr, 96}, 0, {dst.data(), 4}).error().code,
            ErrorCode::kInvalidArgument);
  // The destination inside the source.
  EXPECT_EQ(range(0, 96, 0, src.data() + 50, 8).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(range(0, 96, 8, src.data() + 8, 8).error().code, ErrorCode::kInvalidArgument);
  // Empty ranges are fine, even with null buffers, and write nothing.
  EXPECT_TRUE(range(0, 96, 96, nullptr, 0));
  EXPECT_TRUE(t->ApplyRange(2, {nullptr, 0}, 0, {nullptr, 0}));
  // A copy's range of its own bytes is in place: free, nothing changes.
  const std::vector<std::byte> before = src;
  EXPECT_TRUE(range(1, 96, 8, src.data() + 8, 40));
  EXPECT_EQ(src, before);
  EXPECT_EQ(range(1, 96, 8, src.data() + 9, 40).error().code, ErrorCode::kInvalidArgument);
}

// A parallel-for as a runtime with its own pool would write it: here, plain threads.
struct Pool {
  std::atomic<int> calls{0};
  std::atomic<size_t> tasks{0};
  int threads = 3;
  bool run_nothing = false;  // a broken pool
};

void PoolParallelFor(void* context, size_t count, void (*task)(void*, size_t), void* task_context) {
  auto* pool = static_cast<Pool*>(context);
  pool->calls.fetch_add(1);
  pool->tasks.fetch_add(count);
  if (pool->run_nothing) return;
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < pool->threads; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) task(task_context, i);
    });
  }
  for (auto& th : threads) th.join();
}

TEST(ExecuteOptionsTest, TheCallersParallelForRunsTheWork) {
  SpecMap specs;
  specs.TryEmplace("big", TransposeSpec{{768, 768}, {1, 0}});
  // Its output's dim 0 is the source-innermost dim, 4 long: a range inside one index of it
  // is a gather of 1 MiB.
  specs.TryEmplace("gather", TransposeSpec{{262144, 4}, {1, 0}});
  std::vector<ParameterDesc> params = {{"big", {768, 768}, 4}, {"gather", {262144, 4}, 4}};
  for (int i = 0; i < 6; ++i) params.push_back({Numbered("s", i), {300, 300}, 2});
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t);
  std::vector<std::vector<std::byte>> src, want, dst;
  for (size_t k = 0; k < params.size(); ++k) {
    src.push_back(RandomBytes(*t->input_bytes(k), k));
    RandomInput in{params[k], specs.Contains(params[k].name)
                                  ? std::optional(*specs.Find(params[k].name))
                                  : std::nullopt};
    want.push_back(ReferenceOutput(in, src[k]));
    dst.emplace_back(src[k].size());
  }
  Pool pool;
  ExecuteOptions options;
  options.parallel_for = PoolParallelFor;
  options.parallel_for_context = &pool;

  ASSERT_TRUE(t->Apply(0, {src[0].data(), src[0].size()}, {dst[0].data(), dst[0].size()}, options));
  EXPECT_EQ(dst[0], want[0]);
  EXPECT_GE(pool.calls.load(), 1);  // 2.3 MB: split over the pool

  // A range whose pieces are gathers, split over the pool.
  const size_t half = src[1].size() / 2;
  std::vector<std::byte> part(half);
  pool.calls = 0;
  ASSERT_TRUE(t->ApplyRange(1, {src[1].data(), src[1].size()}, 1, {part.data(), half}, options));
  EXPECT_TRUE(std::equal(part.begin(), part.end(), want[1].begin() + 1));
  EXPECT_GE(pool.calls.load(), 1);

  // A batch: the large input over the pool, the small ones side by side as its tasks.
  std::vector<ConstBuffer> in;
  std::vector<MutableBuffer> out;
  for (size_t k = 0; k < params.size(); ++k) {
    std::fill(dst[k].begin(), dst[k].end(), std::byte{0});
    in.push_back({src[k].data(), src[k].size()});
    out.push_back({dst[k].data(), dst[k].size()});
  }
  pool.calls = 0;
  ASSERT_TRUE(t->ApplyAll(in, out, options));
  for (size_t k = 0; k < params.size(); ++k) EXPECT_EQ(dst[k], want[k]) << "input " << k;
  EXPECT_GE(pool.calls.load(), 2);

  // max_threads = 1: the calling thread only, the callback is never called.
  options.max_threads = 1;
  pool.calls = 0;
  ASSERT_TRUE(t->ApplyAll(in, out, options));
  ASSERT_TRUE(t->Apply(0, in[0], out[0], options));
  ASSERT_TRUE(t->ApplyRange(1, in[1], 0, {dst[1].data(), dst[1].size()}, options));
  EXPECT_EQ(pool.calls.load(), 0);
  for (size_t k = 0; k < params.size(); ++k) EXPECT_EQ(dst[k], want[k]) << "input " << k;
}

TEST(ExecuteOptionsTest, AParallelForThatRunsNothingIsAnErrorNotSuccess) {
  SpecMap specs;
  specs.TryEmplace("big", TransposeSpec{{768, 768}, {1, 0}});
  std::vector<ParameterDesc> params = {{"big", {768, 768}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t);
  std::vector<std::byte> src(*t->input_bytes(0)), dst(src.size());
  Pool broken;
  broken.run_nothing = true;
  ExecuteOptions options;
  options.parallel_for = PoolParallelFor;
  options.parallel_for_context = &broken;
  Status s = t->Apply(0, {src.data(), src.size()}, {dst.data(), dst.size()}, options);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("parallel_for"), std::string::npos);
  s = t->ApplyRange(0, {src.data(), src.size()}, 0, {dst.data(), dst.size()}, options);
  EXPECT_FALSE(s);
}

}  // namespace
}  // namespace iotx::test
