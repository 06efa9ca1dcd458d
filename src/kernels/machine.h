// What the planner knows about the machine: every machine-dependent choice (tile walk, L1
// staging, streaming stores) is derived from these numbers, never from constants tuned on
// one machine. `iotx plan` prints them with their source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace iotx::kernels {

struct Machine {
  int64_t l1d_bytes = 32 * 1024;  // per core
  int64_t l1d_ways = 8;
  int64_t l2_bytes = 1 << 20;     // per core
  int64_t llc_bytes = 0;          // as reported (a VM may report the host's whole LLC)
  const char* cache_source = "";  // where the cache numbers came from
  int64_t vector_bytes = 16;      // the chosen Highway target's widest vector
  const char* target = "";
  // kAuto stores bypass the cache for outputs of at least this many bytes (0: not asked),
  // and from staged_streaming_bytes for plans that would otherwise stage aliasing tiles
  // through the cache (kStagedTiles with ordinary stores; 0: not asked).
  int64_t streaming_bytes = 0;
  int64_t staged_streaming_bytes = 0;
  // One thread's copy of this many bytes, from the L2's size, is slower with ordinary stores
  // than with cache-bypassing ones of the same size (0: not asked, or not below the largest
  // size timed): its working set has left the cache the core keeps to itself, and what lies
  // past it serves one thread's stores no faster than memory does. ChooseStreaming applies it
  // to one thread's staged walks of 8- and 16-byte tiles.
  int64_t one_thread_streaming_bytes = 0;
  std::string streaming_why;
  // Tile walks with cache-bypassing stores of outputs of at least this many bytes read their
  // source in short strips, several bands at a time, rather than in tall strips band by band
  // (0: never). Which of the two the machine's memory and prefetchers serve faster is measured
  // with the streaming threshold (walk_calibration.h), and applies from that threshold or the
  // size of the planes it was timed on, whichever is larger: past the cache, where it was
  // measured.
  int64_t short_strips_bytes = 0;
  // Tile walks with ordinary stores fetch ahead what they will read and write (each
  // destination line for writing, PREFETCHW, a little before its stores; a band walk also the
  // next band's source lines) from outputs of this many bytes (0: never): half the
  // L2, past which source and destination no longer fit in it together. There a store misses
  // and holds up every later one in the store buffer until its line arrives, and a band's
  // hundreds of source rows are more streams than the hardware prefetcher follows. The
  // prefetches fetch nothing the walk would not fetch itself, only sooner.
  int64_t prefetch_ahead_bytes = 0;
  // Band walks with cache-bypassing stores into destination rows that are not whole lines
  // apart realign the rows' runs in place (BandWalkRealigns, nest.h) rather than stage them,
  // from outputs of this many bytes (0: never): the copy's streaming threshold, past the
  // cache. In cache the realigned walk's two L1 buffers cost more than the stage does (AMD
  // EPYC Zen 5, 1 thread, f64 1001 x 1200 `1,0`, 9.6 MB: staged 0.52-0.53 of memcpy, realigned
  // 0.40-0.43), in DRAM less (docs/performance.md, thirty-fourth look).
  int64_t realign_rows_bytes = 0;
};

// The machine now: the cache geometry (read once per process), the dispatch's current
// target (read per call: tests pin targets), and, when `with_streaming_threshold`, the
// streaming threshold of CalibrateStreaming (read or measured once per process, on first
// request).
Machine CurrentMachine(bool with_streaming_threshold);

// The output size from which cache-bypassing stores pay, measured once per machine (15-70 ms,
// on the first plan that needs it; kept in a file for later processes, calibration_cache.h)
// and once per process read from there: a regular-store copy is timed at
// 2, 4, ... times the L2 size and compared with a streaming copy of the largest; the
// threshold is the smallest size at which the regular copy is the slower. Reported cache
// sizes cannot decide it alone: a VM reports the host's whole last-level cache (here 508 MiB)
// while memcpy falls to DRAM speed near 16 MiB. `why` says what was measured.
//
// `staged_bytes` comes from the same copies: a staged walk (aliasing tiles with ordinary
// stores) moves every byte through the cache twice, into its L1/L2 block and out again, so
// it is compared with half the regular copy; from the first size where that half is the
// slower, such plans walk in place with cache-bypassing stores instead. Measured on AMD EPYC
// (Zen 5), 1 thread, ratio to memcpy, staged / streaming in place: f32 3x2048x2x128
// `0,3,2,1` 0.47 / 0.71, f32 64x128x256 `2,0,1` 0.49 / 0.72, bf16 2048x1024 0.40 / 0.51,
// f32 1024^2 0.42 / 0.44 (docs/performance.md, ninth look; the planner applies it to the
// tiles where it was measured to pay, ChooseStreaming).
//
// `one_thread_bytes`: the first size from the L2's where one thread's regular copy is slower
// than a cache-bypassing copy of the same size (0: none up to the largest), timed with the
// same buffers (Machine::one_thread_streaming_bytes).
struct StreamingThreshold {
  int64_t bytes = 0;
  int64_t staged_bytes = 0;
  int64_t one_thread_bytes = 0;
  std::string why;
  bool measured = true;  // false: a fallback (the buffers could not be allocated), not kept
  bool short_strips = false;  // from bytes: Machine::short_strips_bytes; same buffers
};
const StreamingThreshold& CalibrateStreaming();

// Tests run both DRAM walks whatever this machine measured, on small planes: true makes every
// later plan's Machine::short_strips_bytes 1 (short strips at any size), false 0 (never),
// nullopt restores the calibration's. Not synchronized: set it before the plans it is for.
void SetShortStripsForTest(std::optional<bool> short_strips);

// Likewise for Machine::prefetch_ahead_bytes: true makes it 1 (every tile walk with ordinary
// stores prefetches its destination lines), false 0, nullopt restores half the L2.
void SetPrefetchAheadForTest(std::optional<bool> prefetch_ahead);

// Likewise for Machine::realign_rows_bytes: true makes it 1 (band walks realign at any size),
// false 0, nullopt restores the streaming threshold.
void SetRealignRowsForTest(std::optional<bool> realign_rows);

}  // namespace iotx::kernels
