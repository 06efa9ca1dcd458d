#include "kernels/walk_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "kernels/dispatch.h"
#include "kernels/planner.h"
#include "kernels/problem.h"

namespace iotx::kernels {
namespace {

// The layouts are f32, the suite's commonest element; both walks are the planner's own for it.
constexpr int64_t kElem = 4;

struct WalkRun {
  Nest nest;
  RunItemsFn run = nullptr;
};

// The plan the planner makes for `folded` on `machine` with cache-bypassing stores, on one
// thread (one item).
WalkRun PlanWalk(const Problem& folded, const Machine& machine) {
  const Tile tile = ChooseTile(folded, Strategy::kTiles, machine, /*streaming=*/true);
  const DriverSplit split = SplitDriver(folded, tile, PartitionUnit{}, /*target_items=*/1, 1);
  WalkRun w;
  w.nest = BuildNest(folded, Strategy::kTiles, tile, split, /*streaming=*/true);
  w.run = ChooseRunItems(Strategy::kTiles, w.nest.elem_bytes, w.nest.vector_bytes);
  return w;
}

double Seconds(const WalkRun& w, const uint8_t* src, uint8_t* dst) {
  const auto t0 = std::chrono::steady_clock::now();
  w.run(w.nest, src, dst, 0, w.nest.items);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

WalkChoice CalibrateDramWalk(const Machine& machine, uint8_t* src, uint8_t* dst, size_t bytes) {
  WalkChoice choice;
  // Source rows 16 KiB apart (a power of two: the lines of a band share few cache sets) and
  // 16320 B apart; as many rows as the buffers hold, at least two short strips of each.
  const std::array<int64_t, 2> widths = {4096, 4080};
  const int64_t rows = static_cast<int64_t>(bytes) / (widths[0] * kElem) / 64 * 64;
  if (rows < 64) {
    choice.why = "walk not calibrated (buffers too small); tall strips";
    return choice;
  }
  Machine bands = machine, shorts = machine;
  bands.short_strips_bytes = 0;
  shorts.short_strips_bytes = 1;
  double total_bands = 0, total_shorts = 0;
  std::string rates;
  for (const int64_t cols : widths) {
    const std::array<int64_t, 2> shape = {rows, cols};
    const std::array<int64_t, 2> perm = {1, 0};
    Expected<Problem> problem = MakeProblem(shape, perm, kElem);
    if (!problem.has_value()) continue;  // unreachable: the shape is valid
    const Problem folded = Fold(std::move(*problem));
    const WalkRun a = PlanWalk(folded, bands), b = PlanWalk(folded, shorts);
    if (a.run == nullptr || b.run == nullptr) continue;
    // Alternating, best of three each: the two see the same state of a shared machine. Each
    // run reads what the run before wrote with cache-bypassing stores, so its source is in
    // DRAM as a large plane's is (the same source again would partly be in the last-level
    // cache: on the Xeon the tall walk then ran 12 GB/s where from DRAM it runs 8); the
    // first run only puts the buffers in that state.
    uint8_t* const buffers[2] = {src, dst};
    double best_a = 1e30, best_b = 1e30;
    Seconds(a, buffers[0], buffers[1]);
    for (int run = 1; run <= 6; ++run) {
      const bool short_walk = run % 2 == 1;
      double& best = short_walk ? best_b : best_a;
      best = std::min(best, Seconds(short_walk ? b : a, buffers[run % 2], buffers[1 - run % 2]));
    }
    total_bands += best_a;
    total_shorts += best_b;
    const double gb = static_cast<double>(rows * cols * kElem) / 1e9;
    rates += fmt::format("{}f32 {}x{} {:.1f} / {:.1f} GB/s", rates.empty() ? "" : ", ", rows, cols,
                         gb / best_a, gb / best_b);
  }
  if (total_bands == 0 || total_shorts == 0) {
    choice.why = "walk not calibrated (no tile kernel); tall strips";
    return choice;
  }
  choice.short_strips = total_shorts < 0.9 * total_bands;
  choice.why = fmt::format(
      "tile walks past the cache: tall strips band by band / short strips in groups of bands: "
      "{}; {}",
      rates, choice.short_strips ? "short strips (at least a tenth faster)" : "tall strips");
  return choice;
}

}  // namespace iotx::kernels
