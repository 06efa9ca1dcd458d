// The planner's stages after folding (problem.h): each a small pure function, tested alone.
//   ChooseKernel -> ChooseStreaming -> ChooseTile -> SplitDriver -> BuildNest
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "iotx/plan.h"
#include "kernels/nest.h"
#include "kernels/problem.h"

namespace iotx::kernels {

// One entry of the ordered kernel list; the first whose check passes is chosen.
struct KernelCandidate {
  KernelKind kind;
  const char* name;  // printed by Describe and `iotx plan`
  const char* when;  // the applicability check in words
  bool (*applies)(const Problem& folded);
};

// copy, row-copy, transpose: in the order they are tried.
std::span<const KernelCandidate> KernelCandidates();
// The first candidate that applies to a folded, non-empty problem (one always does).
const KernelCandidate& ChooseKernel(const Problem& folded);

// The 2-D tile: rows are the destination-innermost dim, columns the source-innermost dim.
struct Tile {
  int rows_dim = -1;        // index into the folded dims
  int cols_dim = -1;
  int64_t row_block = 1;    // tile rows per strip: 64 bytes of each destination row
  int64_t stream_lines = 1; // streaming transposes: lines per destination row and strip
  int64_t col_granule = 1;  // smallest column block a thread split may cut
};
Tile ChooseTile(const Problem& folded, KernelKind kind, bool streaming);
// Destination lines per row a streaming transpose of elem_bytes elements writes back to back.
int64_t StreamLines(int64_t elem_bytes);

// Where the output's SBUF partition tiles fall in the folded problem's dim 0.
struct PartitionUnit {
  int64_t leading = 1;      // the output's dim 0
  // Folded-dim-0 indices per 128-row partition tile; 0 when dim 0 of the folded problem is not
  // the output's dim 0 or the output is a single partition tile (leading <= 128).
  int64_t d0_per_tile = 0;
};
PartitionUnit FindPartitionUnit(const Problem& folded, int64_t leading);

// Parallel driver dims and items. When the output spans several SBUF partition tiles, the
// driver is a destination-order prefix of the folded dims, so each item writes one contiguous
// destination range and claims can end on partition tiles. When it is one partition tile, the
// driver takes the dims the memory system prefers: outer dims in source order, then blocks of
// tile rows (items keep whole source rows). The last driver dim may cut a dim into blocks.
struct DriverSplit {
  std::vector<LoopDim> driver;  // outer -> inner
  std::vector<int> whole;       // folded dims fully in the driver
  int blocked_dim = -1;         // folded dim the last driver dim cuts into blocks, or -1
  int64_t block = 0;
  int64_t items = 1;
  bool dst_prefix = false;      // items are contiguous destination ranges in order
  // Items per claim so that every claim ends on a partition-tile boundary (0: not possible).
  int64_t align_items = 0;
};
// target_items: how many independent items `threads` threads should share.
DriverSplit SplitDriver(const Problem& folded, const Tile& tile, const PartitionUnit& unit,
                        int64_t target_items, int threads);
// For a contiguous copy (no dims): items are byte chunks.
DriverSplit SplitCopy(int64_t bytes, int64_t leading, int64_t target_items);

// Items worth sharing among up to `threads` threads for `bytes` bytes.
int64_t TargetItems(int64_t bytes, int threads);

// Cache-bypassing stores for outputs far larger than the cache that would otherwise hold
// them (kAuto), or as the options force.
bool ChooseStreaming(PlanOptions::Stores stores, int64_t bytes);
// The output size from which kAuto streams.
int64_t StreamingThresholdBytes();

// The loop nest the per-target kernels run.
Nest BuildNest(const Problem& folded, KernelKind kind, const Tile& tile, const DriverSplit& split,
               bool streaming);

// Outputs smaller than this run on the calling thread alone: one core moves 512 KiB in ~35 us
// (362^2 f32 at 15 GB/s measured), the order of the time a sleeping oneTBB worker needs to
// wake up and join, so a second thread cannot pay below it.
inline constexpr int64_t kParallelMinBytes = 512 * 1024;

}  // namespace iotx::kernels
