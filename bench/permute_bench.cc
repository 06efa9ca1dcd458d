// The permute benchmark suite: every case of bench-cases.txt (read at run time) as bytes/s for
// iotx, next to glibc memcpy and a cache-bypassing copy of the same bytes, and next to Eigen's
// tensor shuffle and oneDNN's reorder where they support the case, on 1 and 2 threads.
// Benchmark names: <impl>/<case id>/threads:<n>; scripts/bench-table turns them into ratios.
// Also: plan/<spec> times MakePlan alone (target: < 50 us for any rank-6 spec).
//
// Flags: --cases=PATH (default: the source tree's bench/bench-cases.txt), --threads=1,2,
// --traffic (also each case's walks without the permute, one thread: RegisterTrafficCase), plus
// Google Benchmark's own (--benchmark_repetitions, --benchmark_enable_random_interleaving,
// --benchmark_format=json, --benchmark_filter, ...).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_cases.h"
#include "iotx/plan.h"
#include "kernels/machine.h"
#include "measure.h"
#include "peers.h"
#include "traffic_walks.h"

namespace iotx::bench {
namespace {

// One source and one destination buffer of the largest case, shared by every benchmark (each
// uses a prefix), so the suite's footprint is two tensors, not two per case.
struct Buffers {
  std::unique_ptr<measure::Buffer> src, dst;
};
Buffers& SharedBuffers(size_t bytes) {
  static Buffers buffers;
  if (!buffers.src || buffers.src->size() < bytes) {
    buffers.src.reset();
    buffers.dst.reset();
    buffers.src = std::make_unique<measure::Buffer>(bytes, true, 0x5a);
    buffers.dst = std::make_unique<measure::Buffer>(bytes, true, 0);
  }
  return buffers;
}

// Runs `run` per iteration inside an arena of `threads`, reporting bytes/s of `bytes`.
template <class Run>
void Measure(benchmark::State& state, int threads, size_t bytes, const Run& run) {
  tbb::task_arena arena(threads);
  arena.execute([&] {
    for (auto _ : state) {
      run();
      benchmark::ClobberMemory();
    }
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void RegisterCase(const BenchCase& c, int threads, size_t max_bytes) {
  const auto bytes = static_cast<size_t>(c.bytes);
  const size_t elem = ElementSize(c.dtype);
  const std::string suffix = fmt::format("{}/threads:{}", c.id, threads);
  const auto add = [&](const std::string& impl, auto fn) {
    benchmark::RegisterBenchmark((impl + "/" + suffix).c_str(), fn)->UseRealTime();
  };

  add("iotx", [=](benchmark::State& state) {
    PlanOptions options;
    options.max_threads = threads;
    auto plan = MakePlan(c.shape, c.perm, elem, options);
    if (!plan) return state.SkipWithError(plan.error().ToString().c_str());
    Buffers& b = SharedBuffers(max_bytes);
    Status status;
    Measure(state, threads, bytes, [&] { status = Execute(**plan, b.src->data(), b.dst->data()); });
    if (!status) state.SkipWithError(status.error().ToString().c_str());
  });
  add("memcpy", [=](benchmark::State& state) {
    Buffers& b = SharedBuffers(max_bytes);
    Measure(state, threads, bytes,
            [&] { measure::ParallelMemcpy(b.dst->data(), b.src->data(), bytes, threads); });
  });
  add("stream_copy", [=](benchmark::State& state) {
    PlanOptions options;
    options.max_threads = threads;
    options.stores = PlanOptions::Stores::kStreaming;
    const int64_t flat[] = {static_cast<int64_t>(bytes)};
    const int64_t identity[] = {0};
    auto plan = MakePlan(flat, identity, 1, options);
    if (!plan) return state.SkipWithError(plan.error().ToString().c_str());
    Buffers& b = SharedBuffers(max_bytes);
    Measure(state, threads, bytes, [&] { (void)Execute(**plan, b.src->data(), b.dst->data()); });
  });
#ifdef IOTX_BENCH_EIGEN
  if (PeerRun eigen = MakeEigenShuffle(c.shape, c.perm, elem, threads)) {
    add("eigen", [=](benchmark::State& state) {
      Buffers& b = SharedBuffers(max_bytes);
      Measure(state, 1, bytes, [&] { eigen(b.src->data(), b.dst->data()); });
    });
  }
#endif
#ifdef IOTX_BENCH_ONEDNN
  if (PeerRun onednn = MakeOneDnnReorder(c.shape, c.perm, elem, threads)) {
    add("onednn", [=](benchmark::State& state) {
      Buffers& b = SharedBuffers(max_bytes);
      Measure(state, 1, bytes, [&] { onednn(b.src->data(), b.dst->data()); });
    });
  }
#endif
}

// With --traffic, on one thread: the memory traffic of the case's walks without the permute
// (traffic_walks.h), as a tile walk with the kernel's strip height and as a staged walk with
// its block size (blocks of about L2 / 8), each with ordinary and cache-bypassing stores.
// Names: <walk>_traffic[_stream]/<case id>/threads:1; a case without a plane of whole tiles
// reports why and is skipped.
void RegisterTrafficCase(const BenchCase& c, size_t max_bytes) {
  const auto bytes = static_cast<size_t>(c.bytes);
  const auto elem = static_cast<int64_t>(ElementSize(c.dtype));
  const kernels::Machine machine = kernels::CurrentMachine(false);
  // The band walk's strip: its source lines fill half the L1 (the planner's BandStripRows).
  const int64_t strip_rows = machine.l1d_bytes / (2 * machine.vector_bytes);
  const int64_t block_rows = 128, block_bytes = std::max<int64_t>(64, machine.l2_bytes / 8 / 128);
  for (const bool streaming : {false, true}) {
    const std::string suffix = fmt::format("{}/{}/threads:1", streaming ? "_stream" : "", c.id);
    const auto add = [&](const std::string& walk, auto run) {
      benchmark::RegisterBenchmark((walk + "_traffic" + suffix).c_str(), [=](benchmark::State&
                                                                                 state) {
        auto plane = PlaneOf(c.shape, c.perm, elem);
        if (!plane) return state.SkipWithError(plane.error().message.c_str());
        Buffers& b = SharedBuffers(max_bytes);
        Measure(state, 1, bytes, [&] { run(*plane, b.src->data(), b.dst->data()); });
      })->UseRealTime();
    };
    add("tiles", [=](const TrafficPlane& plane, const std::byte* src, std::byte* dst) {
      TileWalkTraffic(plane, src, dst, strip_rows, streaming);
    });
    add("staged", [=](const TrafficPlane& plane, const std::byte* src, std::byte* dst) {
      static measure::Buffer stage(static_cast<size_t>(block_rows * block_bytes), false, 0);
      StagedWalkTraffic(plane, src, dst, stage.data(), block_rows, block_bytes, streaming);
    });
  }
}

// One 2-D transpose per element width of src/kernels/widths.inc (the list is expanded here,
// so a width added there is benchmarked here), next to memcpy of the same bytes: a
// cache-resident one (2 MiB) and a DRAM-sized one (64 MiB), with sides that are not a power
// of two apart; iotx_dst16 writes the same transpose 16 bytes into a line, where numpy's
// large arrays start and `iotx apply` puts a safetensors tensor at its file offset's phase.
// Names: width/<impl>/w<bytes>_<MiB>MiB/threads:<n>.
void RegisterWidthBenchmarks(const std::vector<int>& thread_counts) {
  const int64_t widths[] = {
#define IOTX_TILE_WIDTH(bytes) bytes,
#include "kernels/widths.inc"
  };
  for (int64_t w : widths) {
    for (int64_t mib : {2, 64}) {
      // Square-ish: rows x cols elements with rows = cols + 8 (never a power of two apart).
      const auto n = static_cast<int64_t>(std::sqrt(static_cast<double>((mib << 20) / w)));
      const int64_t cols = n / 16 * 16 - 8, rows = (mib << 20) / w / cols;
      const std::vector<int64_t> shape = {rows, cols}, perm = {1, 0};
      const auto bytes = static_cast<size_t>(rows * cols * w);
      for (int threads : thread_counts) {
        const std::string suffix = fmt::format("w{}_{}MiB/threads:{}", w, mib, threads);
        for (size_t dst_offset : {size_t{0}, size_t{16}}) {
          const std::string impl = dst_offset == 0 ? "iotx" : "iotx_dst16";
          benchmark::RegisterBenchmark(
              ("width/" + impl + "/" + suffix).c_str(),
              [=](benchmark::State& state) {
                PlanOptions options;
                options.max_threads = threads;
                auto plan = MakePlan(shape, perm, static_cast<size_t>(w), options);
                if (!plan) return state.SkipWithError(plan.error().ToString().c_str());
                Buffers& b = SharedBuffers(bytes + dst_offset);
                std::byte* dst = b.dst->data() + dst_offset;
                Measure(state, threads, bytes, [&] { (void)Execute(**plan, b.src->data(), dst); });
              })
              ->UseRealTime();
        }
        benchmark::RegisterBenchmark(("width/memcpy/" + suffix).c_str(), [=](benchmark::State& state) {
          Buffers& b = SharedBuffers(bytes);
          Measure(state, threads, bytes,
                  [&] { measure::ParallelMemcpy(b.dst->data(), b.src->data(), bytes, threads); });
        })->UseRealTime();
      }
    }
  }
}

// Planning alone, for rank-6 specs (the device compiler's ceiling) and the suite's cases.
void RegisterPlanBenchmarks(const std::vector<BenchCase>& cases) {
  struct Spec {
    std::string name;
    std::vector<int64_t> shape, perm;
  };
  std::vector<Spec> specs = {
      {"reverse6", {16, 16, 16, 16, 16, 16}, {5, 4, 3, 2, 1, 0}},
      {"pairs6", {16, 16, 16, 16, 16, 16}, {0, 2, 1, 4, 3, 5}},
      {"reshape6", {3, 16, 128, 2, 2, 64}, {0, 4, 5, 3, 1, 2}},
      {"odd6", {7, 1, 13, 129, 3, 5}, {3, 0, 5, 2, 4, 1}},
  };
  std::mt19937_64 rng(6);
  for (int i = 0; i < 4; ++i) {
    Spec s{fmt::format("random6_{}", i), {}, {0, 1, 2, 3, 4, 5}};
    for (int d = 0; d < 6; ++d) s.shape.push_back(1 + static_cast<int64_t>(rng() % 300));
    std::shuffle(s.perm.begin(), s.perm.end(), rng);
    specs.push_back(s);
  }
  for (const BenchCase& c : cases) specs.push_back({c.id, c.shape, c.perm});
  for (const Spec& s : specs) {
    benchmark::RegisterBenchmark(("plan/" + s.name).c_str(), [s](benchmark::State& state) {
      for (auto _ : state) {
        auto plan = MakePlan(s.shape, s.perm, 4);
        benchmark::DoNotOptimize(plan);
      }
      state.SetLabel(fmt::format("rank {}", s.shape.size()));
    });
  }
}

}  // namespace
}  // namespace iotx::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP threads would otherwise spin between runs and steal the cores the next
  // benchmark measures on (this machine has two).
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  std::string cases_path = IOTX_BENCH_CASES_DEFAULT;
  std::vector<int> thread_counts = {1, 2};
  bool traffic = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cases=", 8) == 0) {
      cases_path = argv[i] + 8;
    } else if (std::strcmp(argv[i], "--traffic") == 0) {
      traffic = true;
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      thread_counts.clear();
      for (const char* p = argv[i] + 10; *p;) {
        thread_counts.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      args.push_back(argv[i]);
    }
  }
  auto cases = iotx::bench::ReadBenchCases(cases_path);
  if (!cases) {
    std::cerr << "iotx_bench: " << cases.error().ToString() << '\n';
    return 1;
  }
  size_t max_bytes = 1;
  for (const auto& c : *cases) max_bytes = std::max(max_bytes, static_cast<size_t>(c.bytes));
  for (const auto& c : *cases) {
    for (int threads : thread_counts) iotx::bench::RegisterCase(c, threads, max_bytes);
    if (traffic) iotx::bench::RegisterTrafficCase(c, max_bytes);
  }
  iotx::bench::RegisterWidthBenchmarks(thread_counts);
  iotx::bench::RegisterPlanBenchmarks(*cases);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
