// `iotx bench`: time the kernel on one case next to glibc memcpy of the same bytes (and a copy
// with cache-bypassing stores), alternating in one process; print GB/s and the ratio.
#include "cmd_bench.h"

#include <fmt/format.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_check.h"
#include "cli_output.h"
#include "command.h"
#include "iotx/plan.h"
#include "measure.h"
#include "permute_args.h"

namespace iotx::cli {
namespace {


// Seconds per run of `fn`, timed over `iters` back-to-back runs.
template <class Fn>
double TimePerRun(int iters, const Fn& fn) {
  // One run first, untimed: the jobs alternate, and the stream copy's cache-bypassing stores
  // evict the destination, so the first run after it would pay to bring the destination back
  // (~5 % of iotx's time on 768^2 f32), a cost the memcpy batch after iotx never pays.
  fn();
  const double t0 = measure::NowSeconds();
  for (int i = 0; i < iters; ++i) fn();
  return (measure::NowSeconds() - t0) / iters;
}

}  // namespace

int RunBench(const BenchArgs& args) {
  int exit_code = kExitOk;
  const std::optional<PermuteSpec> spec = ResolvePermuteOrExit(args.permute, exit_code);
  if (!spec) return exit_code;
  const size_t elem = ElementSize(spec->dtype);
  PlanOptions options;
  options.max_threads = args.threads;
  options.stores = args.stores == "regular"     ? PlanOptions::Stores::kRegular
                   : args.stores == "streaming" ? PlanOptions::Stores::kStreaming
                                                : PlanOptions::Stores::kAuto;
  auto plan = MakePlan(spec->shape, spec->perm, elem, options);
  if (!plan) {
    PrintError(plan.error());
    return kExitFailure;
  }
  const size_t bytes = PlanBytes(**plan);
  if (bytes == 0) {
    PrintError(Error(ErrorCode::kInvalidArgument, "the tensor has no elements: nothing to time"));
    return kExitFailure;
  }
  const int64_t flat[] = {static_cast<int64_t>(bytes)};
  const int64_t identity[] = {0};
  PlanOptions stream_options;
  stream_options.max_threads = args.threads;
  stream_options.stores = PlanOptions::Stores::kStreaming;
  auto stream_plan = MakePlan(flat, identity, 1, stream_options);
  if (!stream_plan) {
    PrintError(stream_plan.error());
    return kExitFailure;
  }

  const bool huge = !args.no_huge_pages;
  measure::Buffer src(bytes, huge, 0x5a), dst(bytes, huge, 0);
  std::vector<double> iotx_gbps, memcpy_gbps, stream_gbps, ratios;
  Status status;
  tbb::task_arena arena(args.threads);
  if (args.check) {
    // The kernel's threads as timed below.
    arena.execute([&] { status = CheckAgainstNaive(**plan, *spec, elem, src.data(), dst.data()); });
    if (!status) {
      PrintError(status.error());
      return kExitFailure;
    }
  }
  arena.execute([&] {
    const auto run_iotx = [&] { status = Execute(**plan, src.data(), dst.data()); };
    const auto run_memcpy = [&] { measure::ParallelMemcpy(dst.data(), src.data(), bytes, args.threads); };
    const auto run_stream = [&] { status = Execute(**stream_plan, src.data(), dst.data()); };
    // Warm-up (page faults, TBB workers, caches), then enough runs per sample to last
    // min_seconds, so small, cache-resident cases are timed over many runs.
    const double t_once = std::max({TimePerRun(2, run_iotx), TimePerRun(2, run_memcpy), TimePerRun(1, run_stream)});
    const int iters = std::max(1, static_cast<int>(std::ceil(args.min_seconds / std::max(t_once, 1e-9))));
    for (int rep = 0; rep < args.reps && status; ++rep) {
      const double a = static_cast<double>(bytes) / TimePerRun(iters, run_iotx) / 1e9;
      const double b = static_cast<double>(bytes) / TimePerRun(iters, run_memcpy) / 1e9;
      const double c = static_cast<double>(bytes) / TimePerRun(iters, run_stream) / 1e9;
      iotx_gbps.push_back(a);
      memcpy_gbps.push_back(b);
      stream_gbps.push_back(c);
      ratios.push_back(a / b);
    }
  });
  if (!status) {
    PrintError(status.error());
    return kExitFailure;
  }
  const double a = measure::Median(iotx_gbps), b = measure::Median(memcpy_gbps),
               c = measure::Median(stream_gbps), r = measure::Median(ratios);
  if (args.json) {
    nlohmann::ordered_json j;
    j["dtype"] = std::string(DTypeName(spec->dtype));
    j["shape"] = std::vector<int64_t>(spec->shape.begin(), spec->shape.end());
    j["perm"] = std::vector<int64_t>(spec->perm.begin(), spec->perm.end());
    j["bytes"] = bytes;
    j["threads"] = args.threads;
    j["reps"] = args.reps;
    j["huge_pages"] = huge;
    if (args.check) j["check"] = "ok";
    j["iotx_gbps"] = a;
    j["memcpy_gbps"] = b;
    j["stream_copy_gbps"] = c;
    j["ratio"] = r;
    j["stream_copy_ratio"] = measure::Median([&] {
      std::vector<double> v;
      for (size_t i = 0; i < stream_gbps.size(); ++i) v.push_back(stream_gbps[i] / memcpy_gbps[i]);
      return v;
    }());
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << fmt::format(
        "{} {} transpose {}: {} bytes, {} thread(s), median of {} runs\n"
        "  iotx         {:7.2f} GB/s\n"
        "  memcpy       {:7.2f} GB/s\n"
        "  stream copy  {:7.2f} GB/s  (cache-bypassing stores)\n"
        "  ratio        {:7.2f}  (iotx / memcpy, median of per-run ratios)\n"
        "{}",
        DTypeName(spec->dtype), ToString(spec->shape), ToString(spec->perm), bytes, args.threads,
        args.reps, a, b, c, r,
        args.check ? "  check        ok (the output equals an element-by-element permute)\n" : "");
  }
  return kExitOk;
}

}  // namespace iotx::cli
