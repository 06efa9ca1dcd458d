// Many threads applying inputs on one transformer at once (also run under ThreadSanitizer).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "iotx/runtime.h"
#include "random_model.h"
#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

struct Model {
  std::vector<RandomInput> inputs;
  std::vector<std::vector<std::byte>> src;
  std::vector<std::vector<std::byte>> want;
};

Model MakeModel(int max_threads, InputTransformer* out) {
  Model m;
  std::mt19937 rng(2024);
  m.inputs = RandomModel(rng, 12);
  // One larger input so multi-threaded plans really split work across threads.
  RandomInput big;
  big.parameter = {"big", {256, 1024}, 4};
  big.spec = TransposeSpec{{256, 8, 128}, {2, 0, 1}};
  m.inputs.push_back(big);

  SpecMap specs;
  std::vector<ParameterDesc> params;
  for (const RandomInput& in : m.inputs) {
    params.push_back(in.parameter);
    if (in.spec) specs.TryEmplace(in.parameter.name, *in.spec);
  }
  BuildOptions options;
  options.plan.max_threads = max_threads;
  auto t = InputTransformer::FromSpecs(specs, params, options);
  EXPECT_TRUE(t) << t.error().ToString();
  *out = std::move(*t);
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    m.src.push_back(RandomBytes(*out->input_bytes(k), 500 + k));
    const RandomInput& in = m.inputs[k];
    m.want.push_back(in.spec ? ReferenceTranspose(m.src[k].data(), in.spec->reshape,
                                                  in.spec->transpose, in.parameter.element_size)
                             : m.src[k]);
  }
  return m;
}

class ConcurrencyTest : public ::testing::TestWithParam<int> {};

TEST_P(ConcurrencyTest, ThreadsApplyDifferentInputsOnOneTransformer) {
  InputTransformer t;
  Model m = MakeModel(GetParam(), &t);
  constexpr int kThreads = 4;
  constexpr int kRounds = 6;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      std::vector<std::byte> dst;
      for (int round = 0; round < kRounds; ++round) {
        for (size_t k = static_cast<size_t>(w); k < m.inputs.size(); k += 1 + (round % 2)) {
          dst.assign(*t.output_bytes(k), std::byte{0});
          auto s = t.Apply(k, {m.src[k].data(), m.src[k].size()}, {dst.data(), dst.size()});
          if (!s || dst != m.want[k]) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(ConcurrencyTest, ConcurrentBatches) {
  InputTransformer t;
  Model m = MakeModel(GetParam(), &t);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&] {
      std::vector<std::vector<std::byte>> dst(m.inputs.size());
      std::vector<ConstBuffer> in;
      std::vector<MutableBuffer> out;
      for (size_t k = 0; k < m.inputs.size(); ++k) {
        dst[k].resize(*t.output_bytes(k));
        in.push_back({m.src[k].data(), m.src[k].size()});
        out.push_back({dst[k].data(), dst[k].size()});
      }
      for (int round = 0; round < 4; ++round) {
        if (!t.ApplyAll(in, out)) failures.fetch_add(1);
        for (size_t k = 0; k < m.inputs.size(); ++k) {
          if (dst[k] != m.want[k]) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(ConcurrencyTest, RangesOfAllInputsFromManyThreads) {
  InputTransformer t;
  Model m = MakeModel(GetParam(), &t);
  // Every input cut into ranges of a few sizes; threads take ranges from a shared counter.
  struct Range {
    size_t input, offset, length;
  };
  std::vector<Range> ranges;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const size_t bytes = *t.output_bytes(k);
    const size_t chunk = 1 + (k * 7919) % 5000;
    for (size_t off = 0; off < bytes; off += chunk) {
      ranges.push_back({k, off, std::min(chunk, bytes - off)});
    }
  }
  std::vector<std::vector<std::byte>> dst(m.inputs.size());
  for (size_t k = 0; k < m.inputs.size(); ++k) dst[k].resize(*t.output_bytes(k));
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next.fetch_add(1); i < ranges.size(); i = next.fetch_add(1)) {
        const Range& r = ranges[i];
        auto s = t.ApplyRange(r.input, {m.src[r.input].data(), m.src[r.input].size()}, r.offset,
                              {dst[r.input].data() + r.offset, r.length});
        if (!s) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (size_t k = 0; k < m.inputs.size(); ++k) EXPECT_EQ(dst[k], m.want[k]) << "input " << k;
}

// A caller's parallel-for on its own threads, called from several threads at once.
void ThreadsParallelFor(void*, size_t count, void (*task)(void*, size_t), void* task_context) {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < count; ++i) threads.emplace_back([=] { task(task_context, i); });
  task(task_context, 0);
  for (auto& th : threads) th.join();
}

TEST_P(ConcurrencyTest, BatchesThroughTheCallersParallelFor) {
  InputTransformer t;
  Model m = MakeModel(GetParam(), &t);
  ExecuteOptions options;
  options.parallel_for = ThreadsParallelFor;
  options.max_threads = 3;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&] {
      std::vector<std::vector<std::byte>> dst(m.inputs.size());
      std::vector<ConstBuffer> in;
      std::vector<MutableBuffer> out;
      for (size_t k = 0; k < m.inputs.size(); ++k) {
        dst[k].resize(*t.output_bytes(k));
        in.push_back({m.src[k].data(), m.src[k].size()});
        out.push_back({dst[k].data(), dst[k].size()});
      }
      for (int round = 0; round < 3; ++round) {
        if (!t.ApplyAll(in, out, options)) failures.fetch_add(1);
        for (size_t k = 0; k < m.inputs.size(); ++k) {
          if (dst[k] != m.want[k]) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// 1 = single-threaded plans (only the callers' threads), 0 = plans use oneTBB's workers too.
INSTANTIATE_TEST_SUITE_P(Threads, ConcurrencyTest, ::testing::Values(1, 0));

}  // namespace
}  // namespace iotx::test
