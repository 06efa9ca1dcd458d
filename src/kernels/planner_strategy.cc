// The planner's strategy stage (planner.h: ChooseStrategy): the ordered candidates and the
// checks that pick one, and the fusion of a plane with its neighbouring dims.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

#include "kernels/planner.h"
#include "kernels/planner_internal.h"

namespace iotx::kernels {
namespace {

constexpr int64_t kTileWidths[] = {
#define IOTX_TILE_WIDTH(bytes) bytes,
#include "kernels/widths.inc"
};

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

}  // namespace

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

namespace {

bool FusesTiles(const Problem& p, const Machine& m, bool /*streaming*/, int /*threads*/) {
  const Fusion f = FindFusion(p, m);
  return f.rows2 >= 0 || f.cols2 >= 0;
}

}  // namespace

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

bool RealignsRows(const Problem& p, const Machine& m, int64_t vector_bytes, bool streaming) {
  return streaming && IsTilePlane(p) && m.realign_rows_bytes > 0 &&
         ProblemBytes(p) >= m.realign_rows_bytes &&
         BandWalkRealigns(MachineAvx512(m), vector_bytes, p.elem_bytes, ColsDim(p).dst_stride);
}

namespace {

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
    if (DenseStageBeatsBands(cols.dst_stride, rows.n, e, tile_cols, strip_rows)) return false;
    // Where the band walk realigns its rows (RealignsRows), it writes whole lines itself, in
    // place, without the stage's second pass over every byte.
    if (RealignsRows(p, m, vector_bytes, streaming)) return false;
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

}  // namespace iotx::kernels
