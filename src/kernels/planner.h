// The planner's stages after folding (problem.h): each a small pure function, tested alone.
//   ChooseStreaming -> ChooseStrategy -> ChooseTile -> SplitDriver -> DestinationLoopDim
//   -> BuildNest
// Each stage has its file (planner_stores.cc, planner_strategy.cc, planner_tile.cc,
// planner_split.cc, planner_nest.cc: the loop order and the nest); planner_internal.h holds
// what more than one of them reads.
// Every machine-dependent number comes from a Machine (machine.h): cache geometry as the CPU
// reports it, the vector width of the Highway target, a calibrated streaming threshold.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "iotx/plan.h"
#include "kernels/machine.h"
#include "kernels/nest.h"
#include "kernels/problem.h"

namespace iotx::kernels {

// Whether widths.inc lists `bytes` (the tile strategies' element widths).
bool IsTileWidth(int64_t bytes);

// One entry of the ordered strategy list; the first whose check passes is chosen, and the
// plan records it (Describe prints `name` and `when`).
struct StrategyCandidate {
  Strategy strategy;
  const char* name;
  const char* when;  // the applicability check in words
  // `streaming`: the plan's stores bypass the cache (ChooseStreaming); `threads`: how many the
  // plan is sized for (0: not known).
  bool (*applies)(const Problem& folded, const Machine& machine, bool streaming, int threads);
};

// copy, row-copy, interleave-rows, deinterleave-cols, fused-tiles, staged-tiles, tiles: in the
// order tried.
std::span<const StrategyCandidate> StrategyCandidates();
// The first candidate that applies to a folded, non-empty problem (one always does).
const StrategyCandidate& ChooseStrategy(const Problem& folded, const Machine& machine,
                                        bool streaming = false, int threads = 0);

// Whether `lines` cache lines `stride` bytes apart, `bands` times over in flight at once (a
// tile's and the next band's, which the hardware fetches while it runs), fall in so few L1
// sets (stride a multiple of a power of two) that they cannot all stay resident.
bool StrideAliases(int64_t stride, int64_t lines, const Machine& machine, int64_t bands = 2);

// The 2-D plane and how the strategy walks it: rows are the destination-innermost dim,
// columns the source-innermost dim.
struct Tile {
  int rows_dim = -1;         // index into the folded dims
  int cols_dim = -1;
  int64_t row_block = 1;     // kRowCopy: rows per strip (a 1 KiB destination run per column)
  int64_t vector_bytes = 16; // tile strategies: the vector of one band of columns
  int64_t tile_rows = 1;     // micro-tile: rows giving each destination row one 64-byte line
  int64_t tile_cols = 1;     //             columns of one vector
  int64_t strip_rows = 1;    // kTiles: rows per band walk; kStagedTiles: rows per L1 block
  int64_t block_cols = 1;    // kStagedTiles: columns per L1 block
  int64_t stage_pitch = 0;   // kStagedTiles: bytes between destination rows in the block
  // kFusedTiles, staged: > 0 when each block's source rows are first copied as runs into a
  // second buffer, this many bytes apart, for the reason source_copy names (FusedSourceCopy).
  int64_t source_pitch = 0;
  SourceCopy source_copy = SourceCopy::kNone;
  // kTiles and kStagedTiles: a tile's source rows fall in too few of the L1's sets
  // (StrideAliases): its tiles then load whole rows (GathersTileRows) and a band walk fetches
  // the next band's lines into L2 rather than L1.
  bool src_rows_alias = false;
  // kTiles with cache-bypassing stores: bands walked this many at a time (GroupedBands), each
  // row of tiles crossing all of them before the next; 1: band by band.
  int64_t band_group = 1;
  // kTiles and kStagedTiles with ordinary stores, outputs of at least
  // Machine::prefetch_ahead_bytes: destination lines are fetched for writing ahead of their
  // stores (kStoreTilesAhead tiles down a band, the next destination run of a staged block),
  // and a band walk fetches the next band's source lines.
  bool prefetch_ahead = false;
  // kTiles with cache-bypassing stores, outputs of at least Machine::realign_rows_bytes:
  // destination rows that are not whole lines apart have their runs realigned in place
  // (RealignsRows, BandWalkRealigns in nest.h) rather than stored ordinarily.
  bool realign_rows = false;
  // Staged with cache-bypassing stores because destination rows are not whole lines apart
  // (StagesStreamingRuns): a row block's first and last lines are shared with the blocks
  // above and below, which the walk completes across its own blocks but not across items, so
  // the driver cuts the rows last.
  bool rows_share_lines = false;
  // kFusedTiles: the dim continuing the rows in the destination and the dim continuing the
  // columns in the source (-1: that side is not fused); the driver never cuts the plane's dims.
  int rows2_dim = -1;
  int cols2_dim = -1;
  // kFusedTiles: a third dim joining the rows, continuing rows2_dim in the destination, where
  // the two leave destination runs shorter than kMinFusedRowRunBytes (FindFusion); -1: none.
  int rows3_dim = -1;
  bool fused = false;
  int64_t row_granule = 1;   // smallest row block a thread split may cut
  int64_t col_granule = 1;   // smallest column block a thread split may cut
  // The folded dim the kernel loops walk innermost, ahead of source memory order: the one
  // continuing the plane's destination runs (DestinationLoopDim, set after SplitDriver);
  // -1: source order alone.
  int dst_loop_dim = -1;

  // Whether folded dim i is one of the plane's: its rows, its columns or a dim fused into them.
  bool InPlane(int i) const {
    return i == rows_dim || i == cols_dim || i == rows2_dim || i == cols2_dim || i == rows3_dim;
  }
  // The fused rows' outermost dim: the one a driver cuts them by (-1: the rows are not fused).
  int OuterRowsDim() const { return rows3_dim >= 0 ? rows3_dim : rows2_dim; }
};

// A staged fused plane's source rows copied as runs before its tiles read them: the bytes
// between those rows in the second buffer and why, or a pitch of 0 (SourceCopy::kNone) where
// the tiles read the source in place. For 1-byte elements in DRAM (`streaming`) or where a
// tile's source rows overfill an L2 set (`rows_overfill_l2`, TileRowsOverfillAnL2Set), for
// 2-byte ones in DRAM where they overfill one (thirty-first look), and where a block's row is
// at least four lines: a 1-byte tile loads 64 rows at once, one line of each, and interleaves
// them twice before the next tile's loads, so few lines are in flight, while a run copy reads
// each row's lines back to back with the rows ahead prefetched (docs/performance.md, twelfth
// look); in cache, the copy's rows, an odd number of lines apart, spread over the sets
// (thirtieth look).
struct SourceRowsCopy {
  int64_t pitch = 0;
  SourceCopy reason = SourceCopy::kNone;
};
SourceRowsCopy FusedSourceCopy(int64_t elem_bytes, int64_t block_cols, int64_t block_rows,
                               bool streaming, bool rows_overfill_l2 = false);

// The ways of an L2 set that TileRowsOverfillAnL2Set counts against: 16, as Zen 5's L2 and
// Intel's server cores' from Skylake-SP have (Zen 2-4 and client cores 8-12, Ice Lake-SP 20).
// A fixed count rather than the machine's own, which a VM may misreport (sysconf gave 8 for
// Zen 5's 16-way L2): with fewer ways, some tiles that overfill a set go unnoticed and read in
// place as before; with more, a tile of 17-20 lines to a set is copied for nothing.
inline constexpr int64_t kMostL2Ways = 16;

// Whether the source rows of a fused plane's first tile (rows_dim, then rows2_dim and
// rows3_dim, as the kernel's offsets run) put more than kMostL2Ways lines in one set of the
// L2 (of l2_bytes / (64 x kMostL2Ways) sets): i8 4x16^5 reversed, rows 1 MiB and 64 KiB
// apart, puts all 64 in one.
bool TileRowsOverfillAnL2Set(const Problem& folded, const Tile& tile, const Machine& machine);

// `streaming`: the plan's stores bypass the cache (ChooseStreaming), i.e. the output is in
// DRAM: band walks then prefetch the next band's tiles.
Tile ChooseTile(const Problem& folded, Strategy strategy, const Machine& machine,
                bool streaming = false);

// Where the output's device partition tiles fall in the folded problem's dim 0: claims of
// parallel work end on them. `partitions` is the device's partition count (sbuf.h).
struct PartitionUnit {
  int64_t leading = 1;      // the output's dim 0
  // Folded-dim-0 indices per partition tile; 0 when dim 0 of the folded problem is not the
  // output's dim 0 or the output is a single partition tile (leading <= partitions).
  int64_t d0_per_tile = 0;
};
PartitionUnit FindPartitionUnit(const Problem& folded, int64_t leading, int64_t partitions);

// Parallel driver dims and items. When the output spans several partition tiles, the driver
// is a destination-order prefix of the folded dims, so each item writes one contiguous
// destination range and claims can end on partition tiles. When it is one partition tile,
// the driver takes the dims the memory system prefers: outer dims in source order, then
// blocks of rows (items keep whole source rows). The last driver dim may cut a dim into blocks.
struct DriverSplit {
  std::vector<LoopDim> driver;  // outer -> inner
  std::vector<int> whole;       // folded dims fully in the driver
  int blocked_dim = -1;         // folded dim the last driver dim cuts into blocks, or -1
  int64_t block = 0;
  int64_t items = 1;
  bool dst_prefix = false;      // items are contiguous destination ranges in order
  // The dims were taken in destination order: in source order the threads' shares would have
  // been cut on a dim whose destination stride is not a whole number of lines (SplitDriver).
  bool dst_order = false;
  // Items per claim so that every claim ends on a partition-tile boundary (0: not possible).
  int64_t align_items = 0;
};
// The largest share of `outer` x n rows one of `threads` threads gets when they claim the
// blocks of `block` rows of each of `outer` items in order, each taking the next when done.
int64_t LargestShare(int64_t n, int64_t block, int64_t outer, int threads);
// A block (a multiple of granule, at least min_block, at most `block`) that cuts n rows (in
// each of `outer` items) into few blocks the threads share most evenly; `block` itself when
// no smaller one is better.
int64_t BalancedBlock(int64_t n, int64_t block, int64_t granule, int64_t min_block, int64_t outer,
                      int threads);
// target_items: how many independent items `threads` threads should share.
DriverSplit SplitDriver(const Problem& folded, const Tile& tile, const PartitionUnit& unit,
                        int64_t target_items, int threads);
// For a contiguous copy (no dims): items are byte chunks; `leading` and `partitions` as above.
DriverSplit SplitCopy(int64_t bytes, int64_t leading, int64_t partitions, int64_t target_items);

// The plane's rows: the rows dim's extent times those of the dims fused into the rows.
int64_t FusedRows(const Problem& folded, const Tile& tile);

// Bytes of one plane that follow each other on one side (`destination` or source), from its
// innermost dim there: the rows (and the dims fused into them) then the columns in the destination,
// the columns then the rows in the source, as long as each dim continues the last.
int64_t PlaneRunBytes(const Problem& folded, const Tile& tile, bool destination);

// The kernel loops walk the source in memory order, so that consecutive planes continue the
// same source runs; this names the loop dim to walk innermost instead, the one continuing the
// destination runs (its destination stride is PlaneRunBytes), or -1. Only where those runs are
// the shorter side, and where walking them so gains: runs that are not whole lines where
// source order walks more than half the L1 of planes before continuing them (their shared
// lines would leave L1 part-written and come back), whole-line runs where the stores are
// ordinary (a plane's short runs, each fetched for writing, become one stream). Not where the
// source runs are not whole lines and the planes walked before continuing those would then
// pass half the L2 (their shared lines read again from further away). Row copies keep source
// order. Run after SplitDriver (the dims it takes whole are no kernel loops; `streaming` as
// ChooseStreaming decided); BuildNest reads the result from Tile::dst_loop_dim.
int DestinationLoopDim(const Problem& folded, Strategy strategy, const Tile& tile,
                       const DriverSplit& split, const Machine& machine, bool streaming);

// Items worth sharing among up to `threads` threads for `bytes` bytes.
int64_t TargetItems(int64_t bytes, int threads);

// Why a plan's stores are what they are; Describe reports the planner's reason instead of
// working it out again.
enum class StoresReason {
  kForced,               // PlanOptions::stores asked for regular or streaming stores
  kLargeOutput,          // the output reaches machine.streaming_bytes
  kWouldStage,           // tiles that would be staged, from machine.staged_streaming_bytes
  kByteTilesInPlace,     // 1-byte tiles in halves walked in place, from staged_streaming_bytes
  kOneThread,            // a one-thread permute that scatters its writes, from half streaming_bytes
  kOneThreadWideStaged,  // one thread's staged 8- or 16-byte tiles, from one_thread_streaming_bytes
  kSmallOutput,  // below the threshold that applies to the plan (or none calibrated): regular
};
struct StoresChoice {
  bool streaming = false;
  StoresReason reason = StoresReason::kSmallOutput;
};

// Tiles that the staged-streaming rule applies to: 2- and 4-byte tiles on 64-byte vectors, and
// 1-byte tiles built in halves there (HalvesByteTiles), where streaming in place was measured
// to beat the staged walk (docs/performance.md, ninth and twenty-seventh looks).
bool StagedTilesMayStream(int64_t elem_bytes, const Machine& machine);

// Cache-bypassing stores for outputs of at least machine.streaming_bytes (kAuto), from
// machine.staged_streaming_bytes for a `folded` problem whose tiles would otherwise be staged
// (kStagedTiles with ordinary stores) and StagedTilesMayStream, or whose 1-byte tiles built in
// halves would walk in place (kTiles) with destination rows whole lines apart, from half
// streaming_bytes for a plan of one thread (`threads`, the plan's thread hint) whose strategy
// OneThreadStreamsEarly, or as the options force.
StoresChoice ChooseStreaming(PlanOptions::Stores stores, const Problem& folded, int64_t bytes,
                             const Machine& machine, int threads);

// Strategies whose writes scatter over many destination rows (tiles, staged, fused, row
// copies): on one thread their ordinary stores fall behind cache-bypassing ones a size step
// before a copy's do (docs/performance.md, thirteenth look). A copy and the interleaving
// strategies write a few sequential streams and keep the copy's threshold.
bool OneThreadStreamsEarly(Strategy strategy);

// The output size from which a one-thread plan whose strategy OneThreadStreamsEarly takes
// cache-bypassing stores: half machine.streaming_bytes (0: none calibrated).
int64_t OneThreadStreamingBytes(const Machine& machine);

// Whether a kTiles walk with cache-bypassing stores of `folded` reads short strips, several
// bands at a time (Machine::short_strips_bytes: the calibration found them faster past the
// cache), instead of GroupedBands' rule.
bool ShortStrips(const Problem& folded, const Machine& machine);

// Bands a kTiles walk with cache-bypassing stores takes at a time (Tile::band_group) for
// `elem_bytes` elements in tiles of `tile_rows` rows, strips of `strip_rows` rows and vectors
// of `vector_bytes`; 1 where the band-by-band walk stays.
int64_t GroupedBands(int64_t elem_bytes, int64_t tile_rows, int64_t strip_rows,
                     int64_t vector_bytes);

// The loop nest the per-target kernels run.
Nest BuildNest(const Problem& folded, Strategy strategy, const Tile& tile,
               const DriverSplit& split, bool streaming);

// Outputs smaller than this run on the calling thread alone: one core moves 512 KiB in ~35 us
// (362^2 f32 at 15 GB/s measured), the order of the time a sleeping oneTBB worker needs to
// wake up and join, so a second thread cannot pay below it.
inline constexpr int64_t kParallelMinBytes = 512 * 1024;

}  // namespace iotx::kernels
