#include "kernels/planner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <numeric>
#include <optional>
#include <queue>
#include <string_view>

namespace iotx::kernels {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// The pitch of a stage whose rows hold `bytes` each: whole lines, an odd number of them, so
// that consecutive rows spread over every L1 set instead of sharing a few.
int64_t OddLinePitch(int64_t bytes) {
  int64_t lines = CeilDiv(bytes, kLineBytes);
  if (lines % 2 == 0) ++lines;
  return lines * kLineBytes;
}

constexpr int64_t kTileWidths[] = {
#define IOTX_TILE_WIDTH(bytes) bytes,
#include "kernels/widths.inc"
};

const Dim& RowsDim(const Problem& p) { return p.dims.back(); }
const Dim& ColsDim(const Problem& p) { return p.dims[static_cast<size_t>(SourceInnerDim(p))]; }

// The vector a band of columns uses: the widest the target has that the columns fill (narrow
// planes would otherwise run only through the staged edge path).
int64_t BandVectorBytes(int64_t col_bytes, const Machine& m) {
  for (int64_t v = m.vector_bytes; v > 16; v /= 2) {
    if (col_bytes >= v) return v;
  }
  return 16;
}

int64_t TileRows(int64_t e) { return std::max<int64_t>(1, 64 / e); }

// The rows of a band walk's strip: one band reads strip rows source lines of one vector each,
// and half the L1 holds them and the lines the hardware prefetches for the next band (768^2
// f32 in cache: bands of 64 rows 0.72x memcpy, 384 rows 0.70-0.77; DRAM 8000^2: 64 rows
// 0.74, 384 rows 0.84-0.85).
int64_t BandStripRows(int64_t tile_rows, int64_t vector_bytes, const Machine& m) {
  return std::max(tile_rows, m.l1d_bytes / (2 * vector_bytes) / tile_rows * tile_rows);
}

bool IsTilePlane(const Problem& p) {
  return !p.dims.empty() && IsTileWidth(p.elem_bytes) && SourceInnerDim(p) >= 0 &&
         SourceInnerDim(p) != static_cast<int>(p.dims.size()) - 1;
}

bool FusesTiles(const Problem& p, const Machine& m, bool streaming, int threads);

bool DeinterleavesCols(const Problem& p, const Machine&, bool, int) {
  if (!IsTilePlane(p) || p.elem_bytes > 8) return false;
  const Dim& cols = ColsDim(p);
  return cols.n >= 2 && cols.n <= 4 && RowsDim(p).src_stride == cols.n * p.elem_bytes;
}

bool InterleavesRows(const Problem& p, const Machine& m, bool streaming, int threads) {
  if (!IsTilePlane(p) || p.elem_bytes > 8) return false;
  const Dim& rows = RowsDim(p);
  if (ColsDim(p).dst_stride != rows.n * p.elem_bytes) return false;
  const InterleaveForm form = InterleaveFormOf(rows.n, p.elem_bytes);
  if (form == InterleaveForm::kHighway) return true;
  // 8, 16 or 32 rows of 8-32 bytes, which fill a 64-byte tile only in part, by the tile's
  // interleave rounds (InterleaveRowsByRounds; 1 thread, ratio to memcpy, Intel Xeon, tiles ->
  // rounds: i8 32x8x224x224 `0,2,3,1` 0.31 -> 0.94, i8 8x16x224x224 0.61 -> 0.97, i8
  // 4x32x224x224 0.84 -> 0.97, bf16 4x8x224x224 0.70 -> 0.98; bf16 16 and f32 8 rows level).
  // Not where the plane's 2-4 columns de-interleave instead, along its rows.
  const bool by_rounds = form == InterleaveForm::kRounds;
  // Other counts above 4 with fewer than 32 bytes: the same rounds on rows padded to 16 or 32
  // bytes, each column's piece stored where the next one's overwrites its padding
  // (InterleaveRowsPadded; 1 thread, ratio to memcpy, Intel Xeon, tiles -> padded: i8
  // 32x6x224x224 `0,2,3,1` 0.24 -> 0.81, i8 32x12x224x224 0.38 -> 0.82-0.87, bf16
  // 16x6x224x224 0.50-0.54 -> 0.97-0.99, f32 16x6x224x224 0.69 -> 0.86). Not where the plane
  // fuses with its neighbours instead: fused, f32 2x162x7x126x3 `3,1,0,4,2` (7 rows, columns
  // joined by the 126-dim) ran 0.50, interleaved 0.26, i8 10x27x33x66x20 `2,3,0,4,1` (27 rows)
  // 0.55 against 0.45.
  const bool padded = form == InterleaveForm::kPadded && !FusesTiles(p, m, streaming, threads);
  return (by_rounds || padded) && !DeinterleavesCols(p, m, streaming, threads);
}

// The tile of a fused plane: the target's full vector (a fused plane's columns fill it).
struct Fusion {
  int rows2 = -1, cols2 = -1, rows3 = -1;
  int64_t rows = 0, cols = 0;  // the fused extents
};

// Fused rows whose destination runs stay shorter than this take a third dim continuing them
// in the destination (Tile::rows3_dim), so that the plane's runs (a staged block's, or a band
// walk's strip) can be longer than the two dims allow. i8 4x16^5 reversed: rows 4 x 16, 64 B
// runs 16 KiB and 256 KiB apart, so a block's lines fall in one set of L1 and of L2; a
// standalone loop of that walk's memory traffic alone (a block's source lines copied into a
// stage, the stage copied out as runs; AMD EPYC Zen 5, 4 MiB, ratio to memcpy in one process)
// ran at 0.10-0.11 with 64 B runs, 0.21 with 128 B and 0.31-0.35 with 256 B. With the third
// dim (1024 rows, blocks of 256 x 256) the kernel went from 0.08-0.10 to 0.14-0.18 of
// memcpy, bf16 2x16^5 from 0.11-0.14 to 0.26-0.28, f32 2x4x16^4 from 0.10-0.15 to 0.27-0.44
// (docs/performance.md, twenty-eighth look). Runs of 256 B to 1 KiB gain too, though a staged
// block's runs stay as long: the plane's next block continues each destination run, where the
// kernel's loops had stepped to a plane far away (twenty-ninth look; 1 | 2 threads: i8 16^7
// reversed, bench t2, 0.25-0.27 -> 0.34-0.43 | 0.31-0.32 -> 0.37; f64 6x11x13x4x26x5
// `4,2,5,0,3,1`, whose 352 B runs had walked their continuing dim innermost, 0.61-0.63 ->
// 0.70-0.73 | 0.38-0.44 -> 0.54-0.61).
constexpr int64_t kMinFusedRowRunBytes = 1024;

// Tiles hold whole registers only on AVX-512 for every width, elsewhere from 8 bytes up
// (kTileInRegisters in tile-inl.h): fused planes need that.
bool TilesInRegisters(int64_t e, const Machine& m) { return m.vector_bytes >= 64 || e >= 8; }

// Rows shorter than a band walk's strip are joined by the dim that continues them in the
// destination, columns narrower than four bands by the dim that continues them in the
// source. Any extents: the kernel computes each strip's row offsets and each band's column
// offsets (a tile may straddle an inner dim's end) and sends the fused plane's last partial
// tiles through its edge path. Where one dim could continue either side, or several qualify,
// the pair giving the most elements per tile (edge tiles counted three times: they are staged
// through L1 with short copies) wins, and among equals the larger plane (longer runs).
Fusion FindFusion(const Problem& p, const Machine& m) {
  if (!IsTilePlane(p) || !TilesInRegisters(p.elem_bytes, m)) return Fusion{};
  const int64_t e = p.elem_bytes;
  const int rows_dim = static_cast<int>(p.dims.size()) - 1;
  const int cols_dim = SourceInnerDim(p);
  const Dim& rows = p.dims[static_cast<size_t>(rows_dim)];
  const Dim& cols = p.dims[static_cast<size_t>(cols_dim)];
  const int64_t tile_rows = TileRows(e);
  const int64_t tile_cols = std::max<int64_t>(1, m.vector_bytes / e);
  const int64_t strip_rows = std::max(tile_rows, m.l1d_bytes / (2 * m.vector_bytes));
  std::vector<int> rows2 = {-1}, cols2 = {-1};
  for (int i = 0; i < static_cast<int>(p.dims.size()); ++i) {
    if (i == rows_dim || i == cols_dim) continue;
    const Dim& d = p.dims[static_cast<size_t>(i)];
    if (rows.n < strip_rows && d.dst_stride == rows.n * e) rows2.push_back(i);
    if (cols.n < 4 * tile_cols && d.src_stride == cols.n * e) cols2.push_back(i);
  }
  const auto score = [&](int64_t fr, int64_t fc) {
    const int64_t full = (fr / tile_rows) * (fc / tile_cols);
    const int64_t edge = CeilDiv(fr, tile_rows) * CeilDiv(fc, tile_cols) - full;
    return static_cast<double>(fr) * static_cast<double>(fc) / static_cast<double>(full + 3 * edge);
  };
  // The dim continuing rows (rows2 joined) in the destination, if those leave short runs.
  const auto third_row_dim = [&](int r2, int c2) {
    if (r2 < 0) return -1;
    const int64_t run = rows.n * p.dims[static_cast<size_t>(r2)].n * e;
    if (run >= kMinFusedRowRunBytes) return -1;
    for (int i = 0; i < static_cast<int>(p.dims.size()); ++i) {
      if (i == rows_dim || i == cols_dim || i == r2 || i == c2) continue;
      if (p.dims[static_cast<size_t>(i)].dst_stride == run) return i;
    }
    return -1;
  };
  Fusion best;
  double best_score = -1;
  for (int r2 : rows2) {
    for (int c2 : cols2) {
      if ((r2 < 0 && c2 < 0) || (r2 >= 0 && r2 == c2)) continue;
      const int r3 = third_row_dim(r2, c2);
      const int64_t fr = rows.n * (r2 >= 0 ? p.dims[static_cast<size_t>(r2)].n : 1) *
                         (r3 >= 0 ? p.dims[static_cast<size_t>(r3)].n : 1);
      const int64_t fc = cols.n * (c2 >= 0 ? p.dims[static_cast<size_t>(c2)].n : 1);
      const double sc = score(fr, fc);
      if (sc > best_score || (sc == best_score && fr * fc > best.rows * best.cols)) {
        best_score = sc;
        best = Fusion{r2, c2, r3, fr, fc};
      }
    }
  }
  return best;
}

bool FusesTiles(const Problem& p, const Machine& m, bool /*streaming*/, int /*threads*/) {
  const Fusion f = FindFusion(p, m);
  return f.rows2 >= 0 || f.cols2 >= 0;
}

// The least of each source row a dense stage's block must read for a band walk to take it
// in place of a staged walk (StagesTiles).
constexpr int64_t kDenseStageRunBytes = 256;

// With cache-bypassing stores, a walk whose destination rows are not whole lines apart
// stages them, when a row is longer than one strip of the band walk: the band walk would
// store ordinarily (BandWalkStreams), each strip's run starting and ending part-way into a
// line whose other part the next strip writes a whole pass later, each such line read from
// memory, written, read and written again. The staged walk writes every line whole with
// cache-bypassing stores, a block reading one row of tiles past its own to complete its
// last lines (StreamOwnedLines). An Intel Xeon, 1 / 2 threads, ratio to memcpy, band walk ->
// staged: f32 8001 x 8000 0.35 / 0.61 -> 0.57 / 0.85, f32 401x60x1493 `2,1,0` 0.57 / 0.57
// -> 0.80 / 0.81, f32 1000 x 20000 0.73 -> 0.91 (1 thread), i8 1000 x 100000 0.41 -> 0.55,
// i8 801x72x387x7 `3,2,0,1` (fused) 0.35 / 0.36 -> 0.77 / 0.68. Rows of one strip or fewer
// keep the band walk, which writes them whole and in order: f64 58 x 173250 0.71 / 0.67,
// f32 100 x 200000 0.62 / 0.52, bf16 300 x 100000 0.70 / 0.59, i8 100 x 1000000 0.51 /
// 0.40 (band / staged).
bool StagesStreamingRuns(const Dim& cols, int64_t rows, int64_t strip_rows) {
  return !BandWalkStreams(cols.dst_stride) && rows > strip_rows;
}

// Staging pays when one side's lines in flight alias in L1 and the plane holds whole blocks,
// and only with ordinary stores (with cache-bypassing ones, for StagesStreamingRuns' reason
// alone). Cache-bypassing stores never allocate in L1, so aliasing destination lines cost
// nothing there, and the band walk's prefetch of the next band's tiles serves aliasing
// source rows better than blocks through a stage do: in DRAM, 1 thread, ratio
// to memcpy, staged / in place (same binary, alternating): f32 8192 x 8000 0.64-0.72 /
// 1.16-1.17, bf16 8192^2 0.38 / 0.64, i8 16384 x 8192 0.24 / 0.34, bf16 64x64x64x128
// `0,3,1,2` 0.71 / 0.84, f64 16x64x64x128 `0,3,1,2` 0.64 / 0.85, f32 96x2048x2x128 `0,3,2,1`
// 0.82 / 1.03 (docs/performance.md, eighth look). Fused planes still stage (FusedPlane).
bool StagesTiles(const Problem& p, const Machine& m, bool streaming, int threads) {
  if (!IsTilePlane(p)) return false;
  const int64_t e = p.elem_bytes;
  const Dim& rows = RowsDim(p);
  const Dim& cols = ColsDim(p);
  const int64_t vector_bytes = BandVectorBytes(cols.n * e, m);
  const int64_t tile_cols = std::max<int64_t>(1, vector_bytes / e);
  if (rows.n < TileRows(e) || cols.n < 2 * tile_cols) return false;
  if (streaming) {
    // Rows that follow each other in the destination, as many as a band walk's dense stage
    // (DenseStagedPlane) takes with kDenseStageRunBytes of each source row per block, go there
    // instead: bf16 725 x 68500 `1,0`, 1 thread, 0.61-0.66 of memcpy staged, 0.86 so. Fewer
    // columns per block read too little of each row (bf16 2001 x 30000, one band of 64 B per
    // block: 0.70-0.79 staged, 0.59-0.60 so; f64 1001 x 20000, 192 B: 1.04-1.06, 0.80-0.81).
    // Only below two strips of rows: from there the driver may cut the rows between threads
    // (in blocks of a strip), and a plane cut so is no longer dense: its band walk stores
    // ordinarily (bf16 801x100x685 `1,2,0`, 2 threads: 0.31-0.40 of memcpy, 0.65 staged).
    const int64_t strip_rows = BandStripRows(TileRows(e), vector_bytes, m);
    if (rows.n < 2 * strip_rows && StagesDenseRows(cols.dst_stride, rows.n, e, tile_cols) &&
        DenseStageBlockCols(cols.dst_stride, tile_cols) * e >= kDenseStageRunBytes) {
      return false;
    }
    return StagesStreamingRuns(cols, rows.n, strip_rows);
  }
  // StrideAliases asks a tile's lines and the next band's (which the hardware fetches while the
  // tile runs) to fit the ways of their L1 sets. Where each thread's share of the output fits
  // half the L2, lines that leave L1 come back from L2 at once, and only the tile's own lines
  // must fit: 8- and 16-byte tiles (8 and 4 rows of a 64-byte vector) then walk in place, as
  // 1- to 4-byte ones (16-64 rows) do where their rows spread over enough sets (f32 and bf16
  // rows 1-2 KiB apart; bf16 512^2 on 1 thread, a review's check: 0.35 -> 0.60-0.64), while
  // rows 4 KiB apart still alias. An Intel Xeon, ratio to memcpy, staged / in place
  // with ordinary stores: 1 thread f64 256x512 0.62 / 0.70-0.79, f64 128x1024 0.51-0.52 /
  // 0.74-0.75, c128 256^2 0.57-0.60 / 0.80-0.84, f32 512^2 0.50-0.52 / 0.65-0.66 (16 rows 2 KiB
  // apart fall in two sets); 2 threads f64 512^2 0.37-0.40 / 0.50-0.51, f64 384^2 0.35-0.38 /
  // 0.56-0.58, c128 256x512 0.50-0.51 / 0.86-0.88, f64 2x256x512 `0,2,1` 0.54-0.55 / 0.81; where
  // the share does not fit, the stage stays ahead (2 threads f64 768x512 0.72-0.75 / 0.59-0.63,
  // c128 512^2 0.73 / 0.61-0.62, f64 1024^2 0.73 / 0.60-0.63).
  const int64_t share = ProblemBytes(p) < kParallelMinBytes || threads <= 1
                            ? ProblemBytes(p)
                            : ProblemBytes(p) / threads;
  const bool share_in_l2 = share <= m.l2_bytes / 2;
  const int64_t bands = share_in_l2 ? 1 : 2;
  if (StrideAliases(cols.dst_stride, tile_cols, m, bands) ||
      StrideAliases(rows.src_stride, TileRows(e), m, bands)) {
    return true;
  }
  // Past half the L2 (Machine::prefetch_ahead_bytes) a band walk reads each source row's next
  // line where it and the hardware fetched it a band ahead, in L1: where a strip's source lines
  // fall in too few of the L1's sets to stay there (rows an even number of lines apart), they
  // come from L2 or further again, and blocks through a stage run faster. An Intel Xeon, 1
  // thread, ratio to memcpy in one process, both walks fetching ahead, band / staged: f32
  // 768^2 0.62 / 0.80, 896^2 0.61 / 0.79, 1000 x 768 0.64 / 0.77, 640^2 0.64 / 0.68, 1200 x
  // 1280 0.68 / 0.72, 4096 x 320 0.61 / 0.68, bf16 1536 x 768 0.59 / 0.72; rows not so apart
  // keep the band walk: f32 600^2 0.75 / 0.64, 1000 x 3000 0.85 / 0.69. In L2 the band walk
  // stays ahead whatever the stride (f32 256^2 0.70 / 0.40).
  const int64_t strip_rows = std::min(BandStripRows(TileRows(e), vector_bytes, m), rows.n);
  return m.prefetch_ahead_bytes > 0 && ProblemBytes(p) >= m.prefetch_ahead_bytes && !share_in_l2 &&
         StrideAliases(rows.src_stride, strip_rows, m);
}

// An L2 block for a staged walk: as many bytes as an eighth of the L2 (the block, the source
// lines in flight and the destination lines leaving share it), at most kMaxStageBytes, shaped
// so source runs are twice the destination runs, destination rows an odd number of lines
// apart so they spread over every L1 set. Measured on 8192^2 f32 (DRAM) / 1024^2 f32 (cache):
// blocks of 176 x 32 (L1-sized) 0.49 / 0.41x memcpy, 128 rows x 256 columns 0.71 / 0.61,
// 256 x 128 0.68 / 0.48, 64 x 512 0.68 / 0.31.
void StageBlock(Tile& tile, int64_t e, int64_t cols, int64_t rows_cap, const Machine& m) {
  const int64_t budget = std::min(m.l2_bytes / 8, kMaxStageBytes);
  int64_t rows_fit = static_cast<int64_t>(std::sqrt(static_cast<double>(budget) / (2.0 * static_cast<double>(e))));
  rows_fit = std::clamp(rows_fit / tile.tile_rows * tile.tile_rows, tile.tile_rows, rows_cap);
  tile.stage_pitch = OddLinePitch(rows_fit * e + kLineBytes);  // at least a line of slack
  const int64_t cols_cap = std::max(tile.tile_cols, cols / tile.tile_cols * tile.tile_cols);
  tile.block_cols = std::clamp(budget / tile.stage_pitch / tile.tile_cols * tile.tile_cols,
                               tile.tile_cols, cols_cap);
  while (tile.block_cols * tile.stage_pitch > kMaxStageBytes && tile.block_cols > tile.tile_cols) {
    tile.block_cols -= tile.tile_cols;
  }
  tile.strip_rows = rows_fit;
}

constexpr StrategyCandidate kCandidates[] = {
    {Strategy::kCopy, "copy", "source and destination are one contiguous block",
     [](const Problem& p, const Machine&, bool, int) { return p.dims.empty(); }},
    {Strategy::kRowCopy, "row-copy",
     "the innermost run stays in place and its width is not in widths.inc: strided rows",
     [](const Problem& p, const Machine&, bool, int) { return !IsTileWidth(p.elem_bytes); }},
    {Strategy::kInterleaveRows, "interleave-rows",
     "2-4 destination-innermost rows (or more, of at most 32 bytes) whose columns are "
     "consecutive in the destination",
     InterleavesRows},
    {Strategy::kDeinterleaveCols, "deinterleave-cols",
     "2-4 source-innermost columns of a contiguous source", DeinterleavesCols},
    {Strategy::kFusedTiles, "fused-tiles",
     "a short plane: a dim that continues its rows in the destination joins them, one that "
     "continues its columns in the source joins those (any extents), so tiles and runs span both",
     FusesTiles},
    {Strategy::kStagedTiles, "staged-tiles",
     "a tile's destination (or source) lines and the next band's (its own alone where each "
     "thread's share of the output fits half the L2) are a multiple of a power of two apart and "
     "alias in L1 (past half the L2, a band's source lines), and the stores are ordinary; or "
     "the stores bypass the cache and destination rows longer than a strip are not whole lines "
     "apart: tiles go through an L1 block, destination rows leave as runs",
     StagesTiles},
    {Strategy::kTiles, "tiles",
     "in-register tiles; strips walked band by band (short ones in DRAM several bands at a time) "
     "so destination rows are written in runs",
     [](const Problem&, const Machine&, bool, int) { return true; }},
};

// Source bytes of each row a thread's column block keeps together. Two threads on 8192^2 f32
// read 1 KiB pieces of 8192 rows each at 15 GB/s; reading whole rows (blocks of rows instead,
// which would break the partition-tile claims) measured 17-18 GB/s; 2 KiB pieces sit between.
constexpr int64_t kMinRunBytes = 2048;

// Destination bytes of each row a thread's row block keeps together where the blocks share
// their first and last lines (SplitDriver): those two lines are then at most a 32nd.
constexpr int64_t kSharedRunBytes = 4096;

// Destination bytes a row-copy strip writes in one sequential run per column.
constexpr int64_t kRowCopyRunBytes = 1024;

// A run of the destination that holds one line two threads' shares both write (SplitDriver):
// shorter ones make that line more than a 256th of the output.
constexpr int64_t kSharedLineRunBytes = 256 * kLineBytes;
// An item below this many bytes costs more in claiming and loop setup than it balances.
constexpr int64_t kMinItemBytes = 64 * 1024;
// Items per thread: enough that a thread slowed by a neighbour on this shared machine hands
// its share to the others (claims are dynamic), few enough that each is >= kMinItemBytes.
constexpr int64_t kItemsPerThread = 16;

}  // namespace

bool IsTileWidth(int64_t bytes) {
  return std::find(std::begin(kTileWidths), std::end(kTileWidths), bytes) != std::end(kTileWidths);
}

std::span<const StrategyCandidate> StrategyCandidates() { return kCandidates; }

const StrategyCandidate& ChooseStrategy(const Problem& folded, const Machine& machine,
                                        bool streaming, int threads) {
  for (const StrategyCandidate& c : kCandidates) {
    if (c.applies(folded, machine, streaming, threads)) return c;
  }
  return kCandidates[std::size(kCandidates) - 1];  // unreachable: the last always applies
}

bool StrideAliases(int64_t stride, int64_t lines, const Machine& m, int64_t bands) {
  // Rows that are not line-aligned start at every offset and spread over the sets.
  if (stride <= 0 || stride % kLineBytes != 0) return false;
  const int64_t sets = std::max<int64_t>(1, m.l1d_bytes / (m.l1d_ways * kLineBytes));
  const int64_t step = (stride / kLineBytes) % sets;
  const int64_t distinct = step == 0 ? 1 : sets / std::gcd(step, sets);
  // The lines of one tile and of the next band's (the hardware prefetcher fetches those while
  // the tile runs) must fit the ways of the sets they fall in.
  return distinct * m.l1d_ways < bands * lines;
}

SourceRowsCopy FusedSourceCopy(int64_t elem_bytes, int64_t block_cols, int64_t block_rows,
                               bool streaming, bool rows_overfill_l2) {
  // In one process, alternating, ratio to memcpy, 1 / 2 threads (AMD EPYC Zen 5), in place
  // -> copied: i8 16^7 reversed (256 B runs) 0.13 / 0.25 -> 0.23 / 0.39, 64^5 (384 B) 0.18 /
  // 0.37 -> 0.29 / 0.63, 32^5 0.17 / 0.49 -> 0.30 / 0.64, 256x16^3x256 0.14 / 0.24 -> 0.27 /
  // 0.41, 16x64^3x16 `0,4,3,2,1` 0.27 / 0.55 -> 0.33 / 0.64. Not for runs of one or two lines
  // (i8 8^9 reversed, 64 B: 0.17 -> 0.13; 128 B within +-0.02), nor in cache (an extra copy:
  // i8 16^5 reversed 0.20 -> 0.19, 128^3 0.19 -> 0.17), nor for wider elements, whose tiles
  // load 32 rows or fewer: bf16 32x16^5 0.38 / 0.70 either way, bf16 64^5 0.28 / 0.61 ->
  // 0.30 / 0.55, f32 16^6 0.42 -> 0.35, f64 16^6 0.74 -> 0.60. In cache, only where a tile's
  // rows overfill an L2 set (thirtieth look: i8 2x16^5 reversed 0.15-0.16 -> 0.21-0.23, i8
  // 3x16^5 0.14-0.17 -> 0.24-0.25, 1 thread). 2-byte tiles with cache-bypassing stores where
  // their 32 rows overfill an L2 set (thirty-first look, 1 / 2 threads: bf16 16^6 reversed 0.25
  // / 0.28-0.30 -> 0.30-0.37 / 0.31-0.32, 32^5 0.22-0.25 / 0.21-0.22 -> 0.33-0.36 / 0.31-0.35,
  // 32x16^5 0.24-0.27 / 0.25-0.27 -> 0.27-0.33 / 0.28-0.31), not with ordinary stores in cache
  // (bf16 2x16^5 0.26 -> 0.22-0.24).
  const int64_t run = block_cols * elem_bytes;
  // 1-byte tiles in DRAM copy whatever their rows' sets; the L2 set is the reason where that
  // is not.
  const SourceCopy reason = elem_bytes == 1 && streaming ? SourceCopy::kByteTilesInDram
                            : rows_overfill_l2 && (elem_bytes == 1 || streaming)
                                ? SourceCopy::kRowsOverfillL2Set
                                : SourceCopy::kNone;
  if (reason == SourceCopy::kNone || !CopiesFusedSourceRows(elem_bytes) || run < 4 * kLineBytes) {
    return {};
  }
  const int64_t pitch = OddLinePitch(run);
  if (block_rows * pitch > kMaxStageBytes) return {};
  return {pitch, reason};
}

bool TileRowsOverfillAnL2Set(const Problem& folded, const Tile& tile, const Machine& machine) {
  if (tile.rows_dim < 0) return false;
  const int64_t sets = std::max<int64_t>(1, machine.l2_bytes / (kLineBytes * kMostL2Ways));
  // The rows' dims, innermost first, as FusedRowOffsets walks them.
  std::vector<const Dim*> dims = {&folded.dims[static_cast<size_t>(tile.rows_dim)]};
  for (int i : {tile.rows2_dim, tile.rows3_dim}) {
    if (i >= 0) dims.push_back(&folded.dims[static_cast<size_t>(i)]);
  }
  // The set of each of the tile's rows (at most 64), sorted so that a set's lines are adjacent.
  std::vector<int64_t> row_sets;
  for (int64_t r = 0; r < tile.tile_rows; ++r) {
    int64_t offset = 0;
    int64_t rest = r;
    for (const Dim* d : dims) {
      offset += (rest % d->n) * d->src_stride;
      rest /= d->n;
    }
    if (rest > 0) break;  // a plane of fewer rows than a tile
    row_sets.push_back((offset / kLineBytes) % sets);
  }
  std::sort(row_sets.begin(), row_sets.end());
  for (size_t i = 0; i + kMostL2Ways < row_sets.size(); ++i) {
    if (row_sets[i] == row_sets[i + kMostL2Ways]) return true;  // kMostL2Ways + 1 in one set
  }
  return false;
}

namespace {

// In DRAM the band walk reads one vector of each of a strip's rows per band. Where the
// strip's destination runs are short (its rows are few: a plane of 16-128 rows, as
// channels-last conversions of 16-128 channels have), bands are walked several at a time
// instead: each row of tiles reads kGroupedRunBytes of each of its source rows before the next
// row of tiles, runs the hardware prefetcher follows, and writes one line of each of the
// group's destination rows, which the rows below complete. In one process, alternating, ratio
// to memcpy, 1 / 2 threads (AMD EPYC Zen 5), band by band -> grouped: f32 32x64x64x128
// `0,2,3,1` 0.53 / 1.43 -> 0.79 / 2.00 (2 threads against one thread's memcpy), 128x64x8192
// `0,2,1` 0.75 / 1.43 -> 1.04 / 1.81, 64x64x12544 `0,2,1` 1.91 -> 2.33 (2 threads), 512x16x8192
// 0.74 -> 0.88, 64x128x8192 (8 bands) 0.84 -> 0.93, f64 256x32x4096 0.90 / 1.72 -> 1.03 / 2.05.
// Only for tiles of at most kGroupedTileRows rows: a bf16 or i8 tile reads 32 or 64 rows at
// once, more streams than the prefetcher follows (bf16 128x64x8192 0.77 -> 0.78, 64x128x8192
// 0.86 -> 0.75, i8 256x64x8192 0.67 -> 0.53); and only for destination runs of at most
// kGroupedDstRunBytes: f32 32x256x8192 (1 KiB runs) 0.87 -> 0.79 with 4 bands, 0.44 with 16,
// f64 64x128x4096 0.90 -> 0.47 with 16. A group's block stays within kGroupedBlockBytes (f32
// 64x128x8192: 8 bands 0.93, 16 bands 0.87).
constexpr int64_t kGroupedTileRows = 16;
constexpr int64_t kGroupedDstRunBytes = 512;
constexpr int64_t kGroupedRunBytes = 1024;
constexpr int64_t kGroupedBlockBytes = 64 * 1024;
// Machine::short_strips_bytes: strips of 32 rows (one 32- or 64-row tile of 2- and 1-byte elements)
// read the same 1 KiB of each source row. On the Intel Xeon of the sixteenth look, strips of
// 16-48 rows with groups of 16-64 bands ran within 0.04 of each other (f32 8192^2), 64 and
// 128 rows 0.61 and 0.49.
constexpr int64_t kShortStripRows = 32;

}  // namespace

bool ShortStrips(const Problem& folded, const Machine& machine) {
  return machine.short_strips_bytes > 0 && ProblemBytes(folded) >= machine.short_strips_bytes;
}

int64_t GroupedBands(int64_t elem_bytes, int64_t tile_rows, int64_t strip_rows,
                     int64_t vector_bytes) {
  if (tile_rows > kGroupedTileRows || strip_rows * elem_bytes > kGroupedDstRunBytes) return 1;
  return std::max<int64_t>(1, std::min(kGroupedRunBytes / vector_bytes,
                                       kGroupedBlockBytes / (strip_rows * vector_bytes)));
}

namespace {

// An interleave-rows plane whose columns fill no vector (under 16 bytes) is joined by the
// dim that continues its columns in the source, if one does (InterleaveJoinedColumns): i8
// 2048x4x256x4 `2,0,3,1`, planes of 4 x 4 bytes, became 4 x 1024 (1 thread, ratio to memcpy:
// 0.02 -> 0.26; f32 3x21x465x3 `2,1,3,0` 0.04 -> 0.25). Columns that fill a vector stay apart:
// the joined plane goes through a buffer (f32 3x21x465x15, 60 B of columns, on 32-byte vectors
// 0.70, joined 0.67). The dim that continues each group of columns in the destination, if one
// does, is then walked inside the plane (Tile::rows2_dim), so that a group's pieces leave one
// after the other (i8 2048x4x256x4: the 2048-dim, 16 B apart): one piece per group and plane,
// each its own line 32 KiB from the next, ran at 0.23 / 0.20 of memcpy on 1 / 2 threads, a
// group's pieces as runs 0.54 / 0.52 (i8 2000x4x250x4 0.32 / 0.22 -> 0.53 / 0.51, bf16
// 64x3x512x2 `2,0,3,1` 0.10 / 0.08 -> 0.25 / 0.19). Returns the plane's columns.
int64_t JoinNarrowColumns(const Problem& folded, const Machine& machine, Tile& tile) {
  const int64_t e = folded.elem_bytes;
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  if (cols.n * e >= 16 || machine.vector_bytes < 16) return cols.n;
  const auto other = [&](int i) { return i != tile.rows_dim && i != tile.cols_dim; };
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (other(i) && folded.dims[static_cast<size_t>(i)].src_stride == cols.n * e) {
      tile.cols2_dim = i;
      break;
    }
  }
  if (tile.cols2_dim < 0) return cols.n;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (other(i) && i != tile.cols2_dim &&
        folded.dims[static_cast<size_t>(i)].dst_stride == cols.n * rows.n * e) {
      tile.rows2_dim = i;
      break;
    }
  }
  return cols.n * folded.dims[static_cast<size_t>(tile.cols2_dim)].n;
}

// The same for a deinterleave-cols plane whose rows fill no vector: joined by the dim that
// continues them in the source (whose source is then one run), each block of rows copied to
// its place (DeinterleaveJoinedRows). 1 / 2 threads, ratio to memcpy: i8 100000x7x3 `0,2,1`
// (planes of 7 rows x 3 columns, all edge path before) 0.03 / 0.02 -> 0.39 / 0.19, bf16
// 100000x5x4 `0,2,1` 0.23 / 0.21 -> 0.61 / 0.54. Returns the plane's rows.
int64_t JoinNarrowRows(const Problem& folded, const Machine& machine, Tile& tile) {
  const int64_t e = folded.elem_bytes;
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  if (rows.n * e >= 16 || machine.vector_bytes < 16) return rows.n;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if (i != tile.rows_dim && i != tile.cols_dim && d.src_stride == rows.n * rows.src_stride) {
      tile.rows2_dim = i;
      return rows.n * d.n;
    }
  }
  return rows.n;
}

}  // namespace

Tile ChooseTile(const Problem& folded, Strategy strategy, const Machine& machine, bool streaming) {
  Tile tile;
  if (strategy == Strategy::kCopy || folded.dims.empty()) return tile;
  const int64_t e = folded.elem_bytes;
  tile.rows_dim = static_cast<int>(folded.dims.size()) - 1;
  tile.cols_dim = SourceInnerDim(folded);
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  tile.col_granule = std::max<int64_t>(1, CeilDiv(128, e));
  if (strategy == Strategy::kRowCopy) {
    // A row copy's strip writes each column's rows as one sequential destination run; runs
    // of 1 KiB (16 lines) keep the writes sequential where a line per row would scatter them.
    tile.row_block = std::max<int64_t>(1, CeilDiv(kRowCopyRunBytes, e));
    tile.row_granule = tile.row_block;
    return tile;
  }
  tile.row_block = rows.n;
  // Interleaving planes too narrow for any vector are joined with their neighbours first.
  const int64_t interleaved_cols =
      strategy == Strategy::kInterleaveRows ? JoinNarrowColumns(folded, machine, tile) : cols.n;
  const int64_t deinterleaved_rows =
      strategy == Strategy::kDeinterleaveCols ? JoinNarrowRows(folded, machine, tile) : rows.n;
  // The band walks pick a narrower vector for narrow planes, and so do the interleaving ones
  // for the extent their vectors run along (columns interleaved, rows de-interleaved): on
  // 64-byte vectors, f32 planes of 3 rows x 15 columns and bf16 ones of 16 rows x 4 columns
  // had not one whole vector and ran entirely through the edge path (0.42 and 0.11 of memcpy).
  // The fused strategy uses the target's widest (tiles_width-inl.h compiles it for that alone).
  tile.vector_bytes =
      strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles
          ? BandVectorBytes(cols.n * e, machine)
      : strategy == Strategy::kInterleaveRows   ? BandVectorBytes(interleaved_cols * e, machine)
      : strategy == Strategy::kDeinterleaveCols ? BandVectorBytes(deinterleaved_rows * e, machine)
                                                : machine.vector_bytes;
  tile.tile_rows = TileRows(e);
  tile.tile_cols = std::max<int64_t>(1, tile.vector_bytes / e);
  const int64_t rows_cap = RoundUp(rows.n, tile.tile_rows);
  const bool src_rows_alias =
      StrideAliases(rows.src_stride, std::min(tile.tile_rows, rows.n), machine);
  // Only the band and staged walks read it; a fused plane stages instead (below).
  tile.src_rows_alias =
      src_rows_alias && (strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles);
  if (strategy == Strategy::kStagedTiles) {
    StageBlock(tile, e, cols.n, rows_cap, machine);
    tile.rows_share_lines = streaming && !BandWalkStreams(cols.dst_stride);
  } else if (strategy == Strategy::kTiles || strategy == Strategy::kFusedTiles) {
    if (strategy == Strategy::kFusedTiles) {
      const Fusion f = FindFusion(folded, machine);
      tile.fused = true;
      tile.rows2_dim = f.rows2;
      tile.cols2_dim = f.cols2;
      tile.rows3_dim = f.rows3;
      tile.vector_bytes = machine.vector_bytes;
      tile.tile_cols = std::max<int64_t>(1, tile.vector_bytes / e);
      // Fused dims are far apart by nature (16^6: 4 MiB): stage as kStagedTiles does when
      // a tile's lines alias.
      const int64_t fused_rows = FusedRows(folded, tile);
      const int64_t fused_strip_rows = std::min(
          BandStripRows(tile.tile_rows, machine.vector_bytes, machine), kMaxFusedStripRows);
      const int64_t fused_cols =
          f.cols2 >= 0 ? cols.n * folded.dims[static_cast<size_t>(f.cols2)].n : cols.n;
      // As StagesTiles, only planes of whole tiles across: narrower ones would leave all their
      // tiles to the edge path (i8 9x286x429x3x3x13 `4,1,0,3,5,2`, 429 x 39 planes: 0.58 of
      // memcpy walked, 0.37 so staged).
      const bool stages_runs =
          streaming && fused_cols >= 2 * tile.tile_cols &&
          (StagesStreamingRuns(cols, fused_rows, fused_strip_rows) ||
           (f.cols2 >= 0 && StagesStreamingRuns(folded.dims[static_cast<size_t>(f.cols2)],
                                                fused_rows, fused_strip_rows)));
      if (StrideAliases(cols.dst_stride, std::min(tile.tile_cols, cols.n), machine) ||
          src_rows_alias || stages_runs) {
        StageBlock(tile, e, fused_cols, RoundUp(fused_rows, tile.tile_rows), machine);
        tile.strip_rows = std::min(tile.strip_rows, kMaxFusedStripRows);
        // With stages_runs the stage holds a row of tiles past the strip (FusedBlocks' halo).
        const SourceRowsCopy copy = FusedSourceCopy(
            e, tile.block_cols, tile.strip_rows + (stages_runs ? tile.tile_rows : 0), streaming,
            CopiesFusedSourceRows(e) && TileRowsOverfillAnL2Set(folded, tile, machine));
        tile.source_pitch = copy.pitch;
        tile.source_copy = copy.reason;
        tile.row_granule = tile.strip_rows;
        tile.col_granule = std::max(tile.col_granule, tile.tile_cols);
        tile.rows_share_lines = stages_runs;
        return tile;
      }
    }
    const int64_t plane_rows = FusedRows(folded, tile);
    tile.strip_rows = BandStripRows(tile.tile_rows, tile.vector_bytes, machine);
    tile.strip_rows = std::min(tile.strip_rows, RoundUp(plane_rows, tile.tile_rows));
    if (tile.fused) tile.strip_rows = std::min(tile.strip_rows, kMaxFusedStripRows);
    // Only where whole aligned lines can bypass the cache (TilesPlane): destination rows a
    // whole number of lines apart.
    if (strategy == Strategy::kTiles && streaming && BandWalkStreams(cols.dst_stride)) {
      if (ShortStrips(folded, machine)) {
        // Where the calibration found the memory serving short strips faster (an Intel
        // Xeon: f32 8192^2 0.21 -> 0.67 of memcpy, bf16 0.46 -> 1.19, i8 16384 x 8192 0.49
        // -> 1.09; walk_calibration.h), each row of tiles reads 1 KiB of its source rows. Only
        // past the streaming threshold, where it was measured: with the source in cache the
        // tall strips stay faster there too (f32 1024^2 0.50 / 0.35, f32 3x2048x2x128
        // `0,3,2,1` 0.79 / 0.53 with cache-bypassing stores).
        tile.strip_rows =
            std::min(RoundUp(std::max(tile.tile_rows, kShortStripRows), tile.tile_rows),
                     RoundUp(plane_rows, tile.tile_rows));
        tile.band_group = std::max<int64_t>(1, kGroupedRunBytes / tile.vector_bytes);
      } else {
        tile.band_group = GroupedBands(e, tile.tile_rows, tile.strip_rows, tile.vector_bytes);
      }
    }
  } else {
    tile.strip_rows = tile.tile_rows;
  }
  // In cache, past L2 (an Intel Xeon, ratio to memcpy, alternating in one process, 1 / 2
  // threads: f32 768^2 0.53 -> 0.67 / 0.79 -> 1.25, f32 1000^2 0.48 -> 0.76 / 0.58 -> 1.09,
  // f32 1000 x 3000 0.70 -> 0.83 / 0.99 -> 1.40; staged, the stores only: i8 2048^2 0.47 ->
  // 0.58 / 1.01 -> 1.34; in L2, f32 256^2, the prefetches only cost: 0.72 -> 0.66). With
  // cache-bypassing stores nothing is read for the stores, and the band walks prefetch their
  // source already.
  // A band walk whose destination rows are not whole lines apart stores ordinarily even in a
  // plan that streams (TilesPlane), so it fetches ahead there too, unless its rows follow each
  // other and go through a stage (StagesDenseRows).
  const bool ordinary_stores =
      !streaming || (strategy == Strategy::kTiles && !BandWalkStreams(cols.dst_stride) &&
                     !StagesDenseRows(cols.dst_stride, rows.n, e, tile.tile_cols));
  tile.prefetch_ahead = ordinary_stores && machine.prefetch_ahead_bytes > 0 &&
                        (strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles) &&
                        ProblemBytes(folded) >= machine.prefetch_ahead_bytes;
  tile.row_granule = tile.strip_rows;
  tile.col_granule = std::max(tile.col_granule, tile.tile_cols);
  return tile;
}

int64_t FusedRows(const Problem& folded, const Tile& tile) {
  int64_t rows = 1;
  for (const int i : {tile.rows_dim, tile.rows2_dim, tile.rows3_dim}) {
    if (i >= 0) rows *= folded.dims[static_cast<size_t>(i)].n;
  }
  return rows;
}

int64_t PlaneRunBytes(const Problem& folded, const Tile& tile, bool destination) {
  const std::array<int, 5> order =
      destination
          ? std::array{tile.rows_dim, tile.rows2_dim, tile.rows3_dim, tile.cols_dim, tile.cols2_dim}
          : std::array{tile.cols_dim, tile.cols2_dim, tile.rows_dim, tile.rows2_dim,
                       tile.rows3_dim};
  int64_t run = folded.elem_bytes;
  for (const int i : order) {
    if (i < 0) continue;
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if ((destination ? d.dst_stride : d.src_stride) != run) break;
    run *= d.n;
  }
  return run;
}

namespace {

// Whether the kernel loops walk folded dim i: neither the plane's nor taken whole by the driver.
bool IsKernelLoopDim(const Tile& tile, const DriverSplit& split, int i) {
  return !tile.InPlane(i) &&
         std::find(split.whole.begin(), split.whole.end(), i) == split.whole.end();
}

}  // namespace

int DestinationLoopDim(const Problem& folded, Strategy strategy, const Tile& tile,
                       const DriverSplit& split, const Machine& machine, bool streaming) {
  if (strategy == Strategy::kCopy || strategy == Strategy::kRowCopy || tile.rows_dim < 0) {
    return -1;
  }
  const int64_t dst_run = PlaneRunBytes(folded, tile, /*destination=*/true);
  const int64_t src_run = PlaneRunBytes(folded, tile, /*destination=*/false);
  if (dst_run >= src_run) return -1;
  int continues_dst = -1;
  int continues_src = -1;
  int64_t plane_bytes = folded.elem_bytes;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if (tile.InPlane(i)) {
      plane_bytes *= d.n;
    } else if (!IsKernelLoopDim(tile, split, i) || d.n == 1) {
      continue;
    } else if (d.dst_stride == dst_run) {
      continues_dst = i;
    } else if (d.src_stride == src_run) {
      continues_src = i;
    }
  }
  if (continues_dst < 0) return -1;
  // The bytes of the planes a kernel loop walks between a plane and the one continuing its
  // runs on one side: those of every loop inner to that side's continuing dim, in source order
  // or with `last` innermost (a driver dim cut into blocks counted whole: an upper bound).
  const auto between = [&](int continuing, int last) {
    const int64_t src_stride = folded.dims[static_cast<size_t>(continuing)].src_stride;
    int64_t bytes = plane_bytes;
    for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
      const Dim& d = folded.dims[static_cast<size_t>(i)];
      if (!IsKernelLoopDim(tile, split, i) || i == continuing) continue;
      if (i == last || d.src_stride < src_stride) bytes *= d.n;  // at most the problem's bytes
    }
    return bytes;
  };
  const int64_t source_order = between(continues_dst, -1);
  if (source_order == plane_bytes) return -1;  // source order walks it innermost already
  // Runs that are not whole lines share their first and last lines with the runs continuing
  // them. A destination line written in part leaves L1 where more than half of it lies
  // between, and comes back to be completed. Whole-line runs gain only where the stores are
  // ordinary (cache-bypassing ones fetch nothing for writing, and the source's streams then
  // matter more). A source line read in part is read again, which costs little while it is
  // still in L2.
  const bool destination_gains =
      dst_run % kLineBytes != 0 ? source_order > machine.l1d_bytes / 2 : !streaming;
  const bool source_refetched = continues_src >= 0 && src_run % kLineBytes != 0 &&
                                between(continues_src, continues_dst) > machine.l2_bytes / 2;
  return destination_gains && !source_refetched ? continues_dst : -1;
}

PartitionUnit FindPartitionUnit(const Problem& folded, int64_t leading, int64_t partitions) {
  PartitionUnit unit;
  unit.leading = leading;
  // Dim 0 of the output is never dropped when > 1 and only fuses with the dims after it, so
  // the folded dim 0 is `leading` times the fused factor.
  if (leading <= partitions || folded.dims.empty()) return unit;
  const int64_t n0 = folded.dims.front().n;
  if (n0 % leading != 0) return unit;
  unit.d0_per_tile = partitions * (n0 / leading);
  return unit;
}

int64_t LargestShare(int64_t n, int64_t block, int64_t outer, int threads) {
  // Threads claim items in order, each taking the next one when it is done (execute.cc):
  // about what giving every item to the least loaded thread gives. A heap of the loads keeps
  // this at items x log(threads) for the machines with hundreds of threads.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> load(
      std::greater<>{}, std::vector<int64_t>(static_cast<size_t>(std::max(threads, 1)), 0));
  int64_t largest = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t at = 0; at < n; at += block) {
      const int64_t least = load.top() + std::min(block, n - at);
      load.pop();
      load.push(least);
      largest = std::max(largest, least);
    }
  }
  return largest;
}

// The share of a split's work its busiest thread does, its blocked dim's blocks claimed as
// LargestShare has them.
double BusiestShare(const Problem& folded, const DriverSplit& split, int threads) {
  if (split.blocked_dim < 0) return 1.0 / std::max(1, threads);
  const int64_t n = folded.dims[static_cast<size_t>(split.blocked_dim)].n;
  const int64_t outer = split.items / CeilDiv(n, split.block);
  return static_cast<double>(LargestShare(n, split.block, outer, threads)) /
         static_cast<double>(n * outer);
}

int64_t BalancedBlock(int64_t n, int64_t block, int64_t granule, int64_t min_block, int64_t outer,
                      int threads) {
  // Rounded up to the granule, a few blocks can leave the last one short and a thread idle:
  // 281 output rows in partition tiles of 128 on 2 threads made blocks of 256 and 25 rows
  // (f64 4 x 281 x 548 `1,2,0`: the second thread added 12 % to one thread's speed). Smaller
  // multiples of the granule are tried while the items (`outer` times the blocks) stay few,
  // and the one whose largest thread's share is least wins, the larger block among equals.
  int64_t best = block;
  int64_t best_share = LargestShare(n, block, outer, threads);
  // One candidate per block count (the least multiple of the granule giving that many), up
  // to 16 more blocks than `block` gives: planning stays a few microseconds on any machine.
  const int64_t first = CeilDiv(n, block) + 1;
  for (int64_t count = first;
       count < first + 16 && outer * count <= 4 * static_cast<int64_t>(threads); ++count) {
    const int64_t b = RoundUp(CeilDiv(n, count), granule);
    if (b < std::max(granule, min_block)) break;
    const int64_t share = LargestShare(n, b, outer, threads);
    if (share < best_share) {
      best = b;
      best_share = share;
    }
  }
  return best;
}

DriverSplit SplitDriver(const Problem& folded, const Tile& tile, const PartitionUnit& unit,
                        int64_t target_items, int threads) {
  DriverSplit split;
  if (target_items <= 1) return split;
  const int m = static_cast<int>(folded.dims.size());
  const int64_t e = folded.elem_bytes;
  const auto take_whole = [&](int i) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    split.driver.push_back({d.n, d.src_stride, d.dst_stride});
    split.whole.push_back(i);
    split.items *= d.n;
  };
  // Blocks that are multiples of `granule` and at least `min_block`, about as many as the
  // target asks; few blocks are rounded to a multiple of the thread count so that no thread is
  // left with an extra one.
  const auto block_dim = [&](int i, int64_t granule, int64_t min_block) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    min_block = RoundUp(std::max(min_block, granule), granule);
    int64_t blocks = std::min(CeilDiv(target_items, split.items), d.n / min_block);
    // Too short for min_block per thread: one block per thread beats idle threads. Where the
    // items so far already share evenly, no thread is idle, and short blocks would only cut
    // every item's reads (i8 16^6 reversed, 2 threads: 16 items, then its 256 B columns in
    // blocks of 128 B, 0.21 of memcpy; the rows cut instead, 0.27-0.28).
    const bool short_of_min = blocks < threads;
    if (short_of_min && split.items % threads == 0) return false;
    if (short_of_min) blocks = std::min<int64_t>(threads, d.n / granule);
    if (blocks > threads && blocks < 4 * threads) blocks = blocks / threads * threads;
    if (blocks < 2) return false;
    int64_t block = BalancedBlock(d.n, RoundUp(CeilDiv(d.n, blocks), granule), granule, min_block,
                                  split.items, threads);
    // Those blocks are below min_block already, so smaller ones may balance them: where they
    // keep half of min_block's bytes of each source row together, or where the busiest
    // thread's share falls by at least an eighth. Intel Xeon, 2 threads, ratio to memcpy: f32
    // 528^2 (partition tiles of 128 rows) in blocks of 384 and 144 columns 0.47-0.49, of 256,
    // 256 and 16 0.60-0.66; f64 1113 x 360, 256 + 104 -> 128 + 128 + 104 (1 KiB runs, a 9 %
    // smaller share) 0.56 -> 0.80; i8 6565 x 300 (128 B runs, 33 %) 0.14 -> 0.25. Shorter runs
    // for less were not worth it: bf16 7361 x 372, 512 -> 256 B runs for 5 %, 0.43 -> 0.39; f32
    // 2x40x89x157 `3,0,1,2`, 384 -> 256 B for 3 %, 0.60 -> 0.52.
    // On the output's leading dim only whole partition tiles, whatever the granule (it is the
    // tile only from two tiles on): the SPEC ends every claim on one.
    const bool leading = unit.d0_per_tile > 0 && i == 0;
    if (short_of_min) {
      const int64_t finer = BalancedBlock(d.n, block, granule, granule, split.items, threads);
      const int64_t share = LargestShare(d.n, finer, split.items, threads);
      const int64_t before = LargestShare(d.n, block, split.items, threads);
      if (share < before && (2 * finer >= min_block || 8 * share <= 7 * before) &&
          (!leading || finer % unit.d0_per_tile == 0)) {
        block = finer;
      }
    }
    blocks = CeilDiv(d.n, block);
    if (blocks < 2) return false;
    split.driver.push_back({blocks, block * d.src_stride, block * d.dst_stride});
    split.items *= blocks;
    split.blocked_dim = i;
    split.block = block;
    return true;
  };
  // Columns cut into blocks keep at least kMinRunBytes of each source row together: narrower
  // column blocks make every item read short pieces of many rows.
  const int64_t min_cols = CeilDiv(kMinRunBytes, e);
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  // A fused side is cut only between whole runs of its inner dim, i.e. by blocking its outer
  // dim (Tile::OuterRowsDim / cols2_dim): every block then starts at a fixed offset, and the
  // block's extent (a multiple of the tile where the inner extent allows) is what the kernel walks.
  const auto fused_granule = [](int64_t inner, int64_t tile_extent) {
    return tile_extent / std::gcd(inner, tile_extent);
  };
  // How dim i may be cut into blocks: their granule and least extent.
  struct Cut {
    int64_t granule = 1;
    int64_t min_block = 1;
  };
  // The rows inside the fused rows' outer dim (rows x rows2 where a third dim joins them).
  const int64_t rows_within =
      tile.rows3_dim >= 0
          ? FusedRows(folded, tile) / folded.dims[static_cast<size_t>(tile.rows3_dim)].n
          : rows.n;
  const auto cut_of = [&](int i) -> Cut {
    if (i == tile.OuterRowsDim())
      return {fused_granule(rows_within, tile.tile_rows), CeilDiv(tile.row_granule, rows_within)};
    if (i == tile.cols2_dim)
      return {fused_granule(cols.n, tile.tile_cols), CeilDiv(min_cols, cols.n)};
    if (i == tile.rows_dim) return {tile.row_granule, 1};
    if (i == tile.cols_dim) return {tile.col_granule, min_cols};
    return {};
  };
  // Blocks of dim i as it may be cut; false when it cannot be.
  const auto block_as_cut = [&](int i) {
    const Cut cut = cut_of(i);
    return block_dim(i, cut.granule, cut.min_block);
  };

  if (unit.d0_per_tile > 0) {
    split.dst_prefix = true;
    for (int i = 0; i < m && split.items < target_items; ++i) {
      const Dim& d = folded.dims[static_cast<size_t>(i)];
      if (!tile.InPlane(i) && split.items * d.n <= 4 * target_items) {
        take_whole(i);
        continue;
      }
      // A fused side is cut only by its outer dim (as below); its inner dim never.
      if ((i == tile.rows_dim && tile.rows2_dim >= 0) ||
          (i == tile.rows2_dim && tile.rows3_dim >= 0) ||
          (i == tile.cols_dim && tile.cols2_dim >= 0)) {
        break;
      }
      const Cut cut = cut_of(i);
      if (i == 0 && d.n >= 2 * unit.d0_per_tile) {
        // Claims end on partition tiles. The cut's own granule is a preference (whole 128 B
        // of each source row), and for elements whose width is no power of two its least
        // common multiple with the tile can exceed the dim: a row copy of 9-byte elements
        // with 500 output rows (granule 15, so 1920) ran its 12.9 MB on one thread.
        if (!block_dim(i, std::lcm(cut.granule, unit.d0_per_tile), cut.min_block)) {
          block_dim(i, unit.d0_per_tile, cut.min_block);
        }
        break;
      }
      block_dim(i, cut.granule, cut.min_block);
      break;  // past a blocked dim (or a tile dim) the kernel owns the rest
    }
    const int64_t n0 = folded.dims.front().n;
    if (split.blocked_dim == 0) {
      if (split.block % unit.d0_per_tile == 0) {
        split.align_items = 1;
      } else if (unit.d0_per_tile % split.block == 0) {
        split.align_items = unit.d0_per_tile / split.block;
      }
    } else if (!split.whole.empty() && split.whole.front() == 0) {
      split.align_items = unit.d0_per_tile * (split.items / n0);
    }
    return split;
  }

  // One partition tile: no boundary to keep, so split where reads stay long.
  std::vector<int> order;
  for (int i = 0; i < m; ++i) {
    if (!tile.InPlane(i)) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return folded.dims[static_cast<size_t>(a)].src_stride > folded.dims[static_cast<size_t>(b)].src_stride;
  });
  // Steps 1-4 on the dims in `in_order`, into `split`.
  const auto split_in = [&](const std::vector<int>& in_order) {
    split = DriverSplit{};
    std::vector<bool> taken(static_cast<size_t>(m), false);
    // 1. Dims outside a row block in source order: each item still reads whole row blocks.
    for (int i : in_order) {
      const Dim& d = folded.dims[static_cast<size_t>(i)];
      if (split.items >= target_items) break;
      if (d.src_stride >= rows.src_stride * tile.row_granule &&
          split.items * d.n <= 4 * target_items) {
        take_whole(i);
        taken[static_cast<size_t>(i)] = true;
      }
    }
    // 2. Blocks of tile rows (a fused side: of its outer dim). Fused rows only after the other
    // dims (step 3): a block of them halves every plane's destination runs, where whole planes
    // per item keep them (2 threads, ratio to memcpy, alternating in one process: f32
    // 48x28x28x28x48 reversed 0.73-0.78 -> 1.12-1.21, f64 16^6 reversed 0.80 -> 1.15-1.39, f32
    // 16^6 0.67-0.70 -> 0.94-0.96, bf16 32x16^5 0.47-0.58 -> 0.55-0.65; f32 32x64x64x128
    // reversed 0.94-1.04 -> 0.91-0.96).
    const bool fused_rows = tile.rows2_dim >= 0;
    // Where row blocks share their first and last lines (Tile::rows_share_lines), the items'
    // blocks are each walked alone, with ordinary stores for those lines: only rows long enough
    // that each thread's block keeps kSharedRunBytes of every destination row are cut here, the
    // others last (bf16 725x548x125 `2,1,0`, 2 threads: rows in blocks of 320 0.41 of memcpy,
    // columns in blocks 0.61; i8 801x72x387x7 `3,2,0,1`, 57672 rows: rows 0.69, columns 0.60).
    const bool rows_late =
        tile.rows_share_lines &&
        rows.n * e < kSharedRunBytes * static_cast<int64_t>(std::max(threads, 1));
    if (split.items < target_items && !fused_rows && !rows_late && block_as_cut(tile.rows_dim)) {
      return;
    }
    // 3. The other dims, outermost in source order first.
    for (int i : in_order) {
      if (split.items >= target_items) break;
      if (taken[static_cast<size_t>(i)]) continue;
      if (split.items * folded.dims[static_cast<size_t>(i)].n <= 4 * target_items) {
        take_whole(i);
      } else {
        if (block_dim(i, 1, 1)) return;
        break;
      }
    }
    // 2, for fused rows: blocks of their outer dim; after the columns (step 4) where a third dim
    // joins them, which it does to make their runs long (FindFusion): f64 15x11x13x2x26x5
    // `4,2,5,0,3,1` (bench z04), 2 threads, ratio to memcpy, builds alternated: its 15-dim (the
    // third) in blocks 0.35-0.41, the columns' 26-dim in blocks 0.48-0.51.
    const bool rows_after_cols = fused_rows && tile.rows3_dim >= 0;
    if (split.items < target_items && fused_rows && !rows_after_cols &&
        block_as_cut(tile.OuterRowsDim())) {
      return;
    }
    // 4. Blocks of columns (a fused side: of its outer dim). Rows fused across three dims are
    // cut instead where that leaves the busiest thread an eighth less: i8 24^5 reversed, 2
    // threads, has its 24 columns' outer dim in blocks of 16 and 8 (the granule a 64-column
    // tile allows: one thread does two thirds) or its third row dim in blocks of 1 of 24
    // (ratio to memcpy, builds alternated: columns cut 0.18-0.23, rows 0.24-0.25).
    const int cols_outer = tile.cols2_dim >= 0 ? tile.cols2_dim : tile.cols_dim;
    if (split.items < target_items && rows_after_cols) {
      const DriverSplit before = split;
      const bool cols_cut = block_as_cut(cols_outer);  // a failed cut leaves `split` as it was
      const DriverSplit by_cols = split;
      split = before;
      const bool rows_cut = block_as_cut(tile.OuterRowsDim());
      if (cols_cut && (!rows_cut || 8 * BusiestShare(folded, split, threads) >
                                        7 * BusiestShare(folded, by_cols, threads))) {
        split = by_cols;
      }
      return;
    }
    if (split.items < target_items && block_as_cut(cols_outer)) return;
    // 2, for rows that share lines across blocks: blocks of rows where nothing else was cut.
    if (split.items < target_items && !fused_rows && rows_late) {
      block_as_cut(tile.rows_dim);
    }
  };
  split_in(order);
  // The threads' shares are cut on the first driver dim. Where one of these is first and its
  // destination stride is not a whole number of lines, each run of the destination it spans
  // holds a line both threads write, which moves between their caches on every call. Where
  // those runs are short (that line more than a 256th of the output), the dims go in
  // destination order, so that the shares fall where the destination is farthest apart. f64
  // 15x11x13x2x26x5 `4,2,5,0,3,1` (bench z04), 2 threads: cut on a dim 176 B apart in the
  // destination (runs of 2640 B), 0.45 of memcpy; on one 13200 B apart, 0.62. Longer runs
  // keep source order: their shared lines cost less than the source order gains (f64
  // 38x96x2x30x7 `2,1,4,3,0`, runs of 6 MB, 0.87 -> 0.62 in destination order; i8
  // 3372x41x6x14 `1,0,3,2`, 283 KB, 0.13 -> 0.07).
  const int first = split.whole.empty() ? split.blocked_dim : split.whole.front();
  const Dim* cut =
      first >= 0 && !tile.InPlane(first) ? &folded.dims[static_cast<size_t>(first)] : nullptr;
  if (threads > 1 && cut != nullptr && cut->dst_stride % kLineBytes != 0 &&
      cut->n * cut->dst_stride < kSharedLineRunBytes) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return folded.dims[static_cast<size_t>(a)].dst_stride >
             folded.dims[static_cast<size_t>(b)].dst_stride;
    });
    split_in(order);
    split.dst_order = true;
  }
  return split;
}

DriverSplit SplitCopy(int64_t bytes, int64_t leading, int64_t partitions, int64_t target_items) {
  DriverSplit split;
  int64_t chunk = RoundUp(std::max(kMinItemBytes, CeilDiv(bytes, std::max<int64_t>(target_items, 1))), 4096);
  int64_t tile_bytes = 0;
  if (leading > partitions && bytes % leading == 0) {
    tile_bytes = partitions * (bytes / leading);
    if (tile_bytes <= chunk) {
      chunk = RoundUp(chunk, tile_bytes);
    } else if (tile_bytes % chunk != 0) {
      const int64_t parts = CeilDiv(tile_bytes, chunk);
      if (tile_bytes % parts == 0) chunk = tile_bytes / parts;
    }
  }
  split.items = CeilDiv(bytes, chunk);
  split.driver.push_back({split.items, chunk, chunk});
  split.blocked_dim = 0;
  split.block = chunk;
  if (tile_bytes > 0) {
    if (chunk % tile_bytes == 0) {
      split.align_items = 1;
    } else if (tile_bytes % chunk == 0) {
      split.align_items = tile_bytes / chunk;
    }
  }
  return split;
}

int64_t TargetItems(int64_t bytes, int threads) {
  if (bytes < kParallelMinBytes || threads <= 1) return 1;
  return std::clamp<int64_t>(bytes / kMinItemBytes, 1, kItemsPerThread * threads);
}

namespace {
// HalvesByteTiles (nest.h) on this machine's target and vector.
bool MachineHalvesByteTiles(int64_t elem_bytes, const Machine& machine) {
  return HalvesByteTiles(std::string_view(machine.target).starts_with("AVX3"), elem_bytes,
                         machine.vector_bytes);
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
    case PlanOptions::Stores::kAuto: break;
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

namespace {

// Fused planes whose rows follow each other in the destination but are not whole lines apart
// (z10 of bench-cases-random.txt: bf16 planes of 135 x 15, rows 270 B apart, one run of 4050
// B each; z15: i8 planes of 429 rows x 13 x 3 columns, three runs of 5577 B) write runs that
// start and end part-way into lines, so FusedWalk stores them ordinarily even where the plan
// streams (0.48 and 0.59 of memcpy, Intel Xeon, 1 thread). Each plane then goes through a
// stage laid out as its runs, whose whole lines leave with cache-bypassing stores
// (FusedPlaneThroughStage): 0.72 and 0.74. Walking the planes in destination order instead,
// a group of them through the stage as one run (a kernel loop's destination stride is the
// run), streamed every line but the group's ends and measured slower (0.60, 0.75): the
// source order the loops keep reads each source row's runs plane after plane. Only with the
// nest's whole plane in every item (no rows or columns cut into blocks), runs of at least
// kMinStagedPlaneRunBytes, and the plane within a stage.
bool StagesPlanes(const Nest& nest) {
  if (!nest.streaming || nest.strategy != Strategy::kFusedTiles || nest.stage_pitch != 0 ||
      nest.blocked == Blocked::kRows || nest.blocked == Blocked::kCols) {
    return false;
  }
  if (BandWalkStreams(nest.dst_row_stride) && BandWalkStreams(nest.dst_outer_col_stride)) {
    return false;  // FusedWalk streams whole lines itself
  }
  const PlaneRuns runs = FusedPlaneRuns(nest.rows, nest.elem_bytes, nest.cols, nest.cols_inner,
                                        nest.dst_row_stride, nest.dst_outer_col_stride);
  return runs.count > 0 && runs.bytes >= kMinStagedPlaneRunBytes &&
         runs.count * runs.bytes <= kMaxStageBytes;
}

}  // namespace

Nest BuildNest(const Problem& folded, Strategy strategy, const Tile& tile,
               const DriverSplit& split, bool streaming) {
  Nest nest;
  nest.strategy = strategy;
  nest.elem_bytes = folded.elem_bytes;
  nest.streaming = streaming;
  nest.driver_rank = static_cast<int>(split.driver.size());
  std::copy(split.driver.begin(), split.driver.end(), nest.driver.begin());
  nest.items = split.items;
  nest.block = split.block;

  if (strategy == Strategy::kCopy) {
    nest.copy_bytes = ProblemBytes(folded);
    nest.blocked = Blocked::kBytes;
    nest.blocked_full = nest.copy_bytes;
    return nest;
  }

  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  nest.rows = rows.n;
  nest.src_row_stride = rows.src_stride;
  nest.cols = cols.n;
  nest.dst_row_stride = cols.dst_stride;
  nest.row_block = tile.row_block;
  nest.vector_bytes = tile.vector_bytes;
  nest.strip_rows = tile.strip_rows;
  nest.block_cols = tile.block_cols;
  nest.stage_pitch = tile.stage_pitch;
  nest.source_pitch = tile.source_pitch;
  nest.source_copy = tile.source_copy;
  nest.src_rows_alias = tile.src_rows_alias;
  nest.band_group = tile.band_group;
  nest.prefetch_ahead = tile.prefetch_ahead;
  nest.rows_inner = rows.n;
  nest.src_outer_row_stride = rows.n * rows.src_stride;
  nest.cols_inner = cols.n;
  nest.dst_outer_col_stride = cols.n * cols.dst_stride;
  if (tile.rows2_dim >= 0) {
    const Dim& r2 = folded.dims[static_cast<size_t>(tile.rows2_dim)];
    nest.rows = rows.n * r2.n;
    nest.src_outer_row_stride = r2.src_stride;
    nest.dst_outer_row_stride = r2.dst_stride;
  }
  if (tile.rows3_dim >= 0) {
    const Dim& r3 = folded.dims[static_cast<size_t>(tile.rows3_dim)];
    nest.rows_mid = nest.rows / rows.n;
    nest.rows *= r3.n;
    nest.src_outer2_row_stride = r3.src_stride;
  }
  if (tile.cols2_dim >= 0) {
    const Dim& c2 = folded.dims[static_cast<size_t>(tile.cols2_dim)];
    nest.cols = cols.n * c2.n;
    nest.dst_outer_col_stride = c2.dst_stride;
  }

  // Kernel loops: the dims the driver left, except the plane's, plus a row copy's row-block
  // loop (the tile strategies walk all rows of the plane themselves).
  struct Entry {
    LoopDim dim;
    int folded_index;  // -1 for the row-block loop
  };
  std::vector<Entry> entries;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (!IsKernelLoopDim(tile, split, i)) continue;
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    entries.push_back({{d.n, d.src_stride, d.dst_stride}, i});
  }
  if (strategy == Strategy::kRowCopy) {
    entries.push_back({{CeilDiv(rows.n, tile.row_block), tile.row_block * rows.src_stride,
                        tile.row_block * rows.dst_stride},
                       -1});
  }
  // Loop order: walk the source in memory order (largest source stride outermost), so that
  // consecutive planes continue the same source rows and reads form long streams; the dim
  // continuing the destination runs innermost where the planner says so (DestinationLoopDim).
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    const bool a_last = a.folded_index >= 0 && a.folded_index == tile.dst_loop_dim;
    const bool b_last = b.folded_index >= 0 && b.folded_index == tile.dst_loop_dim;
    if (a_last != b_last) return b_last;
    return a.dim.src_stride > b.dim.src_stride;
  });
  nest.loop_rank = static_cast<int>(entries.size());
  for (size_t k = 0; k < entries.size(); ++k) {
    nest.loops[k] = entries[k].dim;
    if (entries[k].folded_index < 0) nest.row_block_loop = static_cast<int>(k);
    if (entries[k].folded_index >= 0 && entries[k].folded_index == split.blocked_dim) {
      nest.blocked = Blocked::kLoop;
      nest.blocked_loop = static_cast<int>(k);
    }
  }
  if (split.blocked_dim >= 0) {
    nest.blocked_full = folded.dims[static_cast<size_t>(split.blocked_dim)].n;
    if (split.blocked_dim == tile.rows_dim) {
      nest.blocked = Blocked::kRows;
    } else if (split.blocked_dim == tile.cols_dim) {
      nest.blocked = Blocked::kCols;
    } else if (split.blocked_dim == tile.OuterRowsDim()) {  // blocks of whole inner row runs
      nest.blocked = Blocked::kRows;
      nest.block =
          split.block * (nest.rows / folded.dims[static_cast<size_t>(split.blocked_dim)].n);
      nest.blocked_full = nest.rows;
    } else if (split.blocked_dim == tile.cols2_dim) {
      nest.blocked = Blocked::kCols;
      nest.block = split.block * cols.n;
      nest.blocked_full = nest.cols;
    }
  }
  nest.stage_planes = StagesPlanes(nest);
  return nest;
}

}  // namespace iotx::kernels
