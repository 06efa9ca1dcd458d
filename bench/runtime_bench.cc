// The runtime's feeds next to memcpy of the same bytes in the same run (issue 15):
//   memcpy/<case>          the copy of the same bytes
//   apply/<case>           InputTransformer::Apply, iotx's threads (per-call overhead on the
//                          small cases, bandwidth on the large ones)
//   execute/<case>         the kernel alone on the plan Apply uses: Apply's time above it is
//                          the runtime's per-call overhead (target: under 1 us)
//   apply_1thread/<case>   iotx_transformer_apply_ex with max_threads = 1 (calling thread only)
//   kernel_1thread/<case>  Execute on a plan made with max_threads = 1: the kernel's 1-thread
//                          speed, which apply_1thread should match
//   range_<N>/<case>       the whole output fed as consecutive N-byte ranges, one
//                          iotx_transformer_apply_ex (IOTX_APPLY_RANGE) each, iotx's threads,
//                          into a ring of two N-byte buffers as a double-buffered DMA feed
//                          does: bytes/s against apply/<case> is what a range costs against
//                          its share of the whole (target: >= 0.8x at 1 MiB of 256 MiB)
//   range_<N>_1thread/<case>      the same on the calling thread only: against apply_1thread
//   range_<N>_into_output/<case>  the ranges written to their places in one whole output
//                          (every line of it read from DRAM before it is written: slower)
// Bytes/s are output bytes (bytes_per_second); compare rows as ratios within one run. Buffers
// are advised huge pages, as a runtime's pinned DMA buffers are (measure::Buffer, as iotx bench).
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "iotx/iotx.h"
#include "iotx/plan.h"
#include "iotx/runtime.h"
#include "measure.h"

namespace {

struct Case {
  const char* name;
  iotx::Dims shape;
  size_t element_size;
  iotx::TransposeSpec spec;
  size_t range_bytes;  // 0: no range rows
};

constexpr size_t kMiB = size_t{1} << 20;

const Case kCases[] = {
    {"64x64_bf16_T", {64, 64}, 2, {{64, 64}, {1, 0}}, 0},
    {"768x768_f32_T", {768, 768}, 4, {{768, 768}, {1, 0}}, 0},
    {"6144x256_bf16_src_example", {6144, 256}, 2, {{3, 2048, 2, 128}, {0, 3, 2, 1}}, 64 * 1024},
    // 256 MiB outputs: the range rows are issue 15's target (1 MiB ranges at >= 0.8x apply).
    {"8192x8192_f32_T", {8192, 8192}, 4, {{8192, 8192}, {1, 0}}, kMiB},
    {"65536x2048_bf16_src_example_x85",
     {65536, 2048},
     2,
     {{16, 4096, 2, 1024}, {0, 3, 2, 1}},
     kMiB},
};

size_t BytesOf(const Case& c) {
  size_t bytes = c.element_size;
  for (int64_t d : c.shape) bytes *= static_cast<size_t>(d);
  return bytes;
}

// A transformer of one input for `c`, through the C API (what a C runtime calls).
struct CModel {
  iotx_transformer* t = nullptr;
  explicit CModel(const Case& c) {
    std::string json = R"([{"input_name": "x", "reshape": [)";
    for (size_t i = 0; i < c.spec.reshape.size(); ++i) {
      if (i != 0) json += ", ";
      json += std::to_string(c.spec.reshape[i]);
    }
    json += R"(], "transpose": [)";
    for (size_t i = 0; i < c.spec.transpose.size(); ++i) {
      if (i != 0) json += ", ";
      json += std::to_string(c.spec.transpose[i]);
    }
    json += "]}]";
    iotx_parameter p = {"x", c.shape.data(), c.shape.size(), c.element_size};
    if (iotx_error* e = iotx_transformer_from_json(json.data(), json.size(), &p, 1, &t)) {
      iotx_error_free(e);
      t = nullptr;
    }
  }
  ~CModel() { iotx_transformer_free(t); }
};

// Source and destination, touched once so that page faults stay out of the timings.
struct Buffers {
  iotx::measure::Buffer src_bytes, dst_bytes;
  char* src;
  char* dst;
  explicit Buffers(size_t bytes)
      : src_bytes(bytes, true, 1),
        dst_bytes(bytes, true, 0),
        src(reinterpret_cast<char*>(src_bytes.data())),
        dst(reinterpret_cast<char*>(dst_bytes.data())) {}
};

// false (and the benchmark skipped with the error's message) when a C call failed.
bool Succeeded(benchmark::State& state, iotx_error* e) {
  if (e == nullptr) return true;
  state.SkipWithError(iotx_error_message(e));
  iotx_error_free(e);
  return false;
}

void BM_Memcpy(benchmark::State& state, const Case& c) {
  const size_t bytes = BytesOf(c);
  Buffers b(bytes);
  for (auto _ : state) {
    std::memcpy(b.dst, b.src, bytes);
    benchmark::DoNotOptimize(b.dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_Apply(benchmark::State& state, const Case& c) {
  iotx::SpecMap specs;
  specs.TryEmplace("x", c.spec);
  std::vector<iotx::ParameterDesc> params = {{"x", c.shape, c.element_size}};
  auto t = iotx::InputTransformer::FromSpecs(specs, params);
  if (!t) {
    state.SkipWithError(t.error().ToString().c_str());
    return;
  }
  const size_t bytes = BytesOf(c);
  Buffers b(bytes);
  for (auto _ : state) {
    auto s = t->Apply(0, {b.src, bytes}, {b.dst, bytes});
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The kernel alone on the plan Apply uses (max_threads 0), or on a 1-thread plan.
void BM_Execute(benchmark::State& state, const Case& c, int max_threads) {
  iotx::PlanOptions options;
  options.max_threads = max_threads;
  auto plan = iotx::MakePlan(c.spec.reshape, c.spec.transpose, c.element_size, options);
  if (!plan) {
    state.SkipWithError(plan.error().ToString().c_str());
    return;
  }
  const size_t bytes = iotx::PlanBytes(**plan);
  Buffers b(bytes);
  for (auto _ : state) {
    auto s = iotx::Execute(**plan, b.src, b.dst);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_ApplyCallingThread(benchmark::State& state, const Case& c) {
  CModel m(c);
  if (m.t == nullptr) {
    state.SkipWithError("building the transformer failed");
    return;
  }
  const size_t bytes = BytesOf(c);
  Buffers b(bytes);
  iotx_apply_options options = IOTX_APPLY_OPTIONS_INIT;
  options.max_threads = 1;
  for (auto _ : state) {
    if (!Succeeded(state, iotx_transformer_apply_ex(m.t, 0, b.src, bytes, b.dst,
                                                    bytes, &options))) {
      return;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// Where the ranges go: a ring of two range-sized buffers, as a DMA feed double-buffers (the
// pieces stay in cache until the transfer takes them), or their places in one whole output
// (each range's lines then come from DRAM first: regular stores read before they write).
enum class RangeTarget { kDmaRing, kWholeOutput };

void BM_Ranges(benchmark::State& state, const Case& c, int max_threads, RangeTarget target) {
  CModel m(c);
  if (m.t == nullptr) {
    state.SkipWithError("building the transformer failed");
    return;
  }
  const size_t bytes = BytesOf(c);
  Buffers b(bytes);
  iotx::measure::Buffer ring_bytes(2 * c.range_bytes, true, 0);
  char* ring = reinterpret_cast<char*>(ring_bytes.data());
  iotx_apply_options options = IOTX_APPLY_OPTIONS_INIT;
  options.flags = IOTX_APPLY_RANGE;
  options.max_threads = max_threads;
  size_t piece = 0;
  for (auto _ : state) {
    for (size_t offset = 0; offset < bytes; offset += c.range_bytes) {
      options.range_offset = offset;
      options.range_length = std::min(c.range_bytes, bytes - offset);
      char* dst = target == RangeTarget::kWholeOutput ? b.dst + offset
                                                      : ring + (piece++ % 2) * c.range_bytes;
      if (!Succeeded(state, iotx_transformer_apply_ex(m.t, 0, b.src, bytes, dst,
                                                      options.range_length, &options))) {
        return;
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  size_t granule = 0;
  if (iotx_error* e = iotx_transformer_range_granule(m.t, 0, &granule)) iotx_error_free(e);
  state.counters["granule_KiB"] = static_cast<double>(granule) / 1024;
}

const bool kRegistered = [] {
  for (const Case& c : kCases) {
    const std::string n = c.name;
    benchmark::RegisterBenchmark(("Runtime/memcpy/" + n).c_str(), BM_Memcpy, c)->UseRealTime();
    benchmark::RegisterBenchmark(("Runtime/apply/" + n).c_str(), BM_Apply, c)->UseRealTime();
    benchmark::RegisterBenchmark(("Runtime/execute/" + n).c_str(), BM_Execute, c, 0)->UseRealTime();
    if (c.range_bytes != 0) {
      const std::string size = c.range_bytes >= kMiB ? std::to_string(c.range_bytes / kMiB) + "MiB"
                                                     : std::to_string(c.range_bytes / 1024) + "KiB";
      benchmark::RegisterBenchmark(("Runtime/range_" + size + "/" + n).c_str(), BM_Ranges, c, 0,
                                   RangeTarget::kDmaRing)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("Runtime/range_" + size + "_1thread/" + n).c_str(), BM_Ranges,
                                   c, 1, RangeTarget::kDmaRing)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("Runtime/range_" + size + "_into_output/" + n).c_str(),
                                   BM_Ranges, c, 0, RangeTarget::kWholeOutput)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(("Runtime/apply_1thread/" + n).c_str(), BM_ApplyCallingThread, c)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("Runtime/kernel_1thread/" + n).c_str(), BM_Execute, c, 1)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
