// The planner's stores stage (planner.h: ChooseStreaming): whether a plan's stores bypass
// the cache, and why.
#include <string_view>

#include "kernels/planner.h"
#include "kernels/planner_internal.h"

namespace iotx::kernels {

namespace {
// HalvesByteTiles (nest.h) on this machine's target and vector.
bool MachineHalvesByteTiles(int64_t elem_bytes, const Machine& machine) {
  return HalvesByteTiles(MachineAvx512(machine), elem_bytes, machine.vector_bytes);
}
}  // namespace

// A staged walk moves each byte through the cache twice (machine.h, StreamingThreshold), so
// where cache-bypassing stores beat half a regular copy, its plans walk in place with them,
// as the DRAM-sized ones do. Only for the tiles where that was measured to pay: 2- and 4-byte
// elements on 64-byte vectors (ratio to memcpy in cache, 1 thread, staged / in place
// streaming: bf16 1024^2 0.42 / 0.55, bf16 4096x512 0.42 / 0.54, f32 2048x512 0.49 / 0.52,
// and the suite's a1, t5, s2), and 1-byte tiles built in halves (HalvesByteTiles: 32
// destination rows open at a time, not 64), which stream in place as fast or faster (1 / 2
// threads, staged -> in place: i8 1536^2 0.35 / 0.33 -> 0.45 / 0.43, 4096x1024 0.31 / 0.32 ->
// 0.39, 16x256x1024 `0,2,1` 0.32 / 0.36 -> 0.39 / 0.44, 4x512x2048 `0,2,1` 0.27 / 0.24 -> 0.33
// / 0.37, 2048^2 and 2048x4096 level; docs/performance.md, twenty-seventh look; as whole
// 64-row tiles, i8 2048^2 had run 0.30 / 0.24). The others' in-place walks over aliasing rows
// are as slow or slower: f64 1024x512 0.51-0.56 / 0.44-0.55 (f64 512^2 0.53 / 0.57-0.66); with
// AVX2's 32-byte vectors f32 1024^2 0.34 / 0.23 (its 4-byte tiles go through an L1 buffer) and
// f64 1024x512 0.48 / 0.28.
bool StagedTilesMayStream(int64_t elem_bytes, const Machine& machine) {
  return machine.vector_bytes >= 64 &&
         (elem_bytes == 2 || elem_bytes == 4 || MachineHalvesByteTiles(elem_bytes, machine));
}

bool OneThreadStreamsEarly(Strategy strategy) {
  switch (strategy) {
    case Strategy::kTiles:
    case Strategy::kStagedTiles:
    case Strategy::kFusedTiles:
    case Strategy::kRowCopy:
      return true;
    case Strategy::kCopy:
    case Strategy::kInterleaveRows:
    case Strategy::kDeinterleaveCols:
      return false;
  }
  return false;
}

// The least destination run (rows x element) of a plane whose one-thread staged walk of 8- or
// 16-byte tiles streams in place from Machine::one_thread_streaming_bytes (ChooseStreaming).
constexpr int64_t kWideStagedRunBytes = 2048;

int64_t OneThreadStreamingBytes(const Machine& machine) { return machine.streaming_bytes / 2; }

StoresChoice ChooseStreaming(PlanOptions::Stores stores, const Problem& folded, int64_t bytes,
                             const Machine& machine, int threads) {
  switch (stores) {
    case PlanOptions::Stores::kRegular:
      return {false, StoresReason::kForced};
    case PlanOptions::Stores::kStreaming:
      return {true, StoresReason::kForced};
    case PlanOptions::Stores::kAuto:
      break;
  }
  if (machine.streaming_bytes > 0 && bytes >= machine.streaming_bytes) {
    return {true, StoresReason::kLargeOutput};
  }
  // The strategy the plan would take with ordinary stores, asked for by the rules below: the
  // first to need it picks it, once (ExecuteRange plans every box of every call).
  std::optional<Strategy> regular;
  const auto regular_strategy = [&] {
    if (!regular) regular = ChooseStrategy(folded, machine, false, threads).strategy;
    return *regular;
  };
  // The staged threshold's two rules, only for tile planes (a contiguous copy has no dims,
  // so no columns to ask about) and where the in-place walk can stream: destination rows a
  // whole number of lines apart (TilesPlane). Elsewhere it would store as ordinarily as the
  // staged walk, without the stage: bf16 3000 x 768 (rows 6000 B apart), Intel Xeon, 1
  // thread, 0.40 of memcpy so against 0.61 staged.
  if (machine.staged_streaming_bytes > 0 && bytes >= machine.staged_streaming_bytes &&
      IsTilePlane(folded) && BandWalkStreams(ColsDim(folded).dst_stride)) {
    if (StagedTilesMayStream(folded.elem_bytes, machine) &&
        regular_strategy() == Strategy::kStagedTiles) {
      return {true, StoresReason::kWouldStage};
    }
    // 1-byte tiles built in halves (HalvesByteTiles) that walk in place: their bands keep 32
    // destination rows open at a time, and in cache the streamed walk beat the ordinary one on
    // every such layout measured (AMD EPYC Zen 5, ratio to memcpy, 1 / 2 threads, regular ->
    // streaming: i8 1984x2112 0.50 / 0.54 -> 0.63 / 0.70, 2880x1440 0.54 / 0.56 -> 0.65 /
    // 0.68, 1600x3000 0.47 / 0.49 -> 0.55 / 0.56, 1088x4000 0.54 / 0.55 -> 0.61 / 0.65;
    // docs/performance.md, twenty-seventh look). Wider in-place tiles were mixed (thirteenth
    // look), so they keep the copy's threshold.
    if (MachineHalvesByteTiles(folded.elem_bytes, machine) &&
        regular_strategy() == Strategy::kTiles) {
      return {true, StoresReason::kByteTilesInPlace};
    }
  }
  // One thread's permute with ordinary stores falls behind from about half the copy's
  // threshold, where the copy's own regular and cache-bypassing runs are level (AMD EPYC Zen
  // 5, 1 thread, 9-14 MiB outputs, ratio to memcpy in one process, regular / streaming: f32
  // 1008x3008 0.59 / 0.87, bf16 1056x7008 0.31 / 0.86, i8 3008x4000 0.28 / 0.58, f64
  // 1008x1760 0.58 / 1.14, c128 800x1000 0.59 / 1.07, f64 200x60x130 `2,1,0` (fused) 0.49 /
  // 0.72, f32 96x128x256 `1,0,2` (row copy) 0.65 / 1.02). Two threads' ordinary stores hold
  // on longer (f64 1008x1504 1.92 / 1.42, f32 1008x3008 1.69 / 1.42, 2-thread ratios to one
  // thread's memcpy), so plans that may run on more threads keep the copy's threshold.
  if (threads == 1 && OneThreadStreamingBytes(machine) > 0 &&
      bytes >= OneThreadStreamingBytes(machine) && OneThreadStreamsEarly(regular_strategy())) {
    return {true, StoresReason::kOneThread};
  }
  // One thread's staged walks of 8- and 16-byte tiles stream from where one thread's own
  // copies leave its cache (Machine::one_thread_streaming_bytes), where that comes before the rule
  // above: there the walk's ordinary stores, twice through the cache, go to memory at its speed
  // anyway, while the in-place walk's cache-bypassing ones write whole lines. An Intel Xeon VM (2
  // MiB L2, one thread's copies slower regular than cache-bypassing from 2 MiB), 1 thread, ratio to
  // memcpy, staged / in place streaming: f64 512^2 0.67-0.69 / 1.39-1.42, f64 512x640 0.67-0.70
  // / 0.95-0.96, c128 256x512 0.77-0.79 / 1.05, f64 1024x512 0.70-0.72 / 0.74-0.75. Not the
  // 1- to 4-byte tiles, whose taller tiles the same machine ran slower in place there (f32
  // 896^2 0.81-0.84 / 0.75-0.76, bf16 1536x768 0.79-0.80 / 0.61-0.69, i8 1536x2048 even), and
  // not planes of few rows, whose short destination runs the stage writes faster (f64 32 x
  // 16384 0.98 / 0.72-0.73, c128 16 x 16384 0.98 / 0.74, c128 64 x 8192 0.97 / 0.92; f64 128
  // x 4096, runs of 1 KiB, 0.84-0.86 / 0.90, and 2 KiB ones on: f64 256 x 2048 0.81-0.82 /
  // 0.84, 256 x 4096 0.78-0.82 / 0.84-0.87).
  // Only on 64-byte vectors: with AVX2's the same plans ran slower in place (a review's
  // check, 1 thread, in place streaming / staged: f64 512^2 0.50 / 0.64, 1024x512 0.41 / 0.71),
  // as StagedTilesMayStream found for the rule above.
  if (threads == 1 && machine.one_thread_streaming_bytes > 0 &&
      bytes >= machine.one_thread_streaming_bytes && folded.elem_bytes >= 8 &&
      machine.vector_bytes >= 64 && regular_strategy() == Strategy::kStagedTiles &&
      RowsDim(folded).n * folded.elem_bytes >= kWideStagedRunBytes &&
      BandWalkStreams(ColsDim(folded).dst_stride)) {
    return {true, StoresReason::kOneThreadWideStaged};
  }
  return {false, StoresReason::kSmallOutput};
}

}  // namespace iotx::kernels
