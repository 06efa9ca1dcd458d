// Describe: a plan printing itself (`iotx plan`): every stage's decision and the number that
// decided it.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string_view>

#include "core/text.h"
#include "iotx/plan.h"
#include "kernels/plan_impl.h"

namespace iotx {
namespace {

std::string Bytes(int64_t b) { return FormatBytes(static_cast<uint64_t>(b)); }

std::string DimRole(const PlanData& d, int i) {
  std::string role;
  const auto add = [&role](std::string_view s) {
    role += role.empty() ? "" : ", ";
    role += s;
  };
  if (std::find(d.split.whole.begin(), d.split.whole.end(), i) != d.split.whole.end()) add("driver");
  if (i == d.split.blocked_dim) add(fmt::format("driver in blocks of {}", d.split.block));
  if (i == d.tile.rows_dim) add("tile rows (destination-innermost)");
  if (i == d.tile.cols_dim) add("tile columns (source-innermost)");
  if (i == d.tile.rows2_dim || i == d.tile.rows3_dim) add("fused into the tile rows");
  if (i == d.tile.cols2_dim) add("fused into the tile columns");
  if (role.empty()) add("kernel loop");
  return role;
}

std::string LoopName(const PlanData& d, int k) {
  const kernels::LoopDim& l = d.nest.loops[static_cast<size_t>(k)];
  if (k == d.nest.row_block_loop) return fmt::format("row blocks of {} (n={})", d.nest.row_block, l.n);
  for (size_t i = 0; i < d.folded.dims.size(); ++i) {
    const kernels::Dim& f = d.folded.dims[i];
    if (f.src_stride == l.src_stride && f.dst_stride == l.dst_stride &&
        static_cast<int>(i) != d.tile.rows_dim && static_cast<int>(i) != d.tile.cols_dim) {
      return fmt::format("dim {} (n={})", i, l.n);
    }
  }
  return fmt::format("n={}", l.n);
}

// The one-thread rules of the `stores:` line (ChooseStreaming): scattered writes from half
// the copy's threshold, and staged 8- and 16-byte tiles from where one thread's copies leave
// its cache when that comes first; "(this one)" marks the rule the plan followed.
std::string OneThreadStores(const kernels::Machine& m, kernels::StoresReason reason) {
  const int64_t scattered = kernels::OneThreadStreamingBytes(m);
  std::string s = fmt::format(", from {} for one thread's tiles and row copies{}", Bytes(scattered),
                              reason == kernels::StoresReason::kOneThread ? " (this one)" : "");
  if (m.one_thread_streaming_bytes > 0 && m.one_thread_streaming_bytes < scattered) {
    s += fmt::format(", from {} for one thread's plans that would stage 8- or 16-byte tiles{}",
                     Bytes(m.one_thread_streaming_bytes),
                     reason == kernels::StoresReason::kOneThreadWideStaged
                         ? " (this one: it walks in place instead)"
                         : "");
  }
  return s;
}

}  // namespace

std::string Describe(const Plan& plan) {
  const PlanData& d = plan.data();
  Dims out_shape;
  for (int64_t axis : d.perm) out_shape.push_back(d.shape[static_cast<size_t>(axis)]);
  std::string s = fmt::format("problem:  shape {} transpose {} -> output {}, {}-byte elements, {} bytes\n",
                              ToString(d.shape), ToString(d.perm), ToString(out_shape), d.elem_bytes,
                              d.bytes);
  if (d.bytes == 0) {
    s += "kernel:   none (the tensor has a zero extent; Execute moves nothing)\n";
    s += fmt::format("sbuf:     {}\n", kernels::ToString(d.sbuf));
    return s;
  }
  const kernels::Problem dropped = kernels::DropUnitDims(d.unfolded);
  const kernels::Problem fused = kernels::FuseContiguous(dropped);
  s += fmt::format("folding:  {} dims -> drop size-1: {} -> fuse contiguous: {} -> widen element: {} ({} B element)\n",
                   d.unfolded.dims.size(), dropped.dims.size(), fused.dims.size(), d.folded.dims.size(),
                   d.folded.elem_bytes);
  s += "folded:   destination order, strides in bytes\n";
  for (size_t i = 0; i < d.folded.dims.size(); ++i) {
    const kernels::Dim& f = d.folded.dims[i];
    s += fmt::format("          dim {}: n={:<8} src_stride={:<10} dst_stride={:<10} {}\n", i, f.n,
                     f.src_stride, f.dst_stride, DimRole(d, static_cast<int>(i)));
  }
  const kernels::Machine& m = d.machine;
  s += fmt::format("machine:  L1d {} {}-way, L2 {}, last-level {} ({}); {} target, {}-byte vectors\n",
                   Bytes(m.l1d_bytes), m.l1d_ways, Bytes(m.l2_bytes), Bytes(m.llc_bytes),
                   m.cache_source, m.target, m.vector_bytes);
  s += fmt::format("strategy: {} ({})\n", d.strategy->name, d.strategy->when);
  const kernels::Nest& n = d.nest;
  const int64_t e = d.folded.elem_bytes;
  switch (n.strategy) {
    case kernels::Strategy::kCopy:
      break;
    case kernels::Strategy::kRowCopy:
      s += fmt::format("tile:     strips of {} rows of {} B elements x {} columns ({} B runs per column)\n",
                       n.row_block, e, n.cols, n.row_block * e);
      break;
    case kernels::Strategy::kInterleaveRows:
      if (n.rows_inner <= 4) {
        s += fmt::format(
            "tile:     {} rows x {} columns interleaved with StoreInterleaved{} on {}-byte "
            "vectors\n",
            n.rows_inner, n.cols, n.rows_inner, n.vector_bytes);
      } else {
        // InterleaveRowsByRounds (8, 16 or 32 rows of 8-32 bytes) or InterleaveRowsPadded
        // (other counts, padded to 16 or 32 bytes of rows): groups of up to 16 bytes of rows,
        // log2(rows per group) rounds each.
        const int64_t rows = n.rows_inner;
        const bool exact = kernels::InterleaveFormOf(rows, e) == kernels::InterleaveForm::kRounds;
        const int64_t padded = kernels::InterleaveRoundRows(rows, e);
        const int64_t groups = std::max<int64_t>(1, padded * e / 16);
        s += fmt::format(
            "tile:     {} rows{} x {} columns on {}-byte vectors, interleaved as the tile's rows "
            "are: {} group(s) of {} rows, {} interleave rounds each, then {}\n",
            rows, exact ? "" : fmt::format(" (padded to {} with zeros)", padded), n.cols,
            n.vector_bytes, groups, padded / groups,
            std::countr_zero(static_cast<uint64_t>(padded / groups)),
            exact ? "128-bit blocks transposed into whole vectors of the destination"
                  : "each column's 16-byte pieces stored in column order, the next column's "
                    "overwriting the padding");
      }
      if (d.tile.cols2_dim >= 0) {
        s += fmt::format(
            "joined:   columns = {} x {} (dim {} continues dim {} in the source): interleaved "
            "through an L1 buffer, each group of {} columns ({} B) then copied to its place",
            n.cols_inner, n.cols / n.cols_inner, d.tile.cols2_dim, d.tile.cols_dim, n.cols_inner,
            n.cols_inner * n.rows_inner * e);
        if (d.tile.rows2_dim >= 0) {
          s += fmt::format(
              "; dim {} (n={}) continues each group in the destination and is walked "
              "in the plane, so that a group's pieces leave as one run",
              d.tile.rows2_dim, n.rows / n.rows_inner);
        }
        s += "\n";
      }
      break;
    case kernels::Strategy::kDeinterleaveCols:
      s += fmt::format("tile:     {} rows x {} columns de-interleaved with LoadInterleaved{} on {}-byte vectors\n",
                       n.rows, n.cols, n.cols, n.vector_bytes);
      if (d.tile.rows2_dim >= 0) {
        s += fmt::format(
            "joined:   rows = {} x {} (dim {} continues dim {} in the source): de-interleaved "
            "through an L1 buffer, each block's {} rows of a column ({} B) then copied to its "
            "place\n",
            n.rows_inner, n.rows / n.rows_inner, d.tile.rows2_dim, d.tile.rows_dim, n.rows_inner,
            n.rows_inner * e);
      }
      break;
    case kernels::Strategy::kTiles:
    case kernels::Strategy::kFusedTiles:
    case kernels::Strategy::kStagedTiles: {
      std::string how;
      const bool avx512 = std::string_view(m.target).starts_with("AVX3");
      if (m.vector_bytes < 16) {
        how = "element by element (no SIMD target)";
      } else if (!avx512 && e < 8) {  // kTileInRegisters in tile-inl.h
        how = "interleave rounds per group, 16-byte pieces through an L1 buffer";
      } else if (kernels::HalvesByteTiles(avx512, e, n.vector_bytes)) {
        how =
            "in registers: two halves of 32 columns, each 64 rows x 32 bytes in 32 vectors "
            "(four interleave rounds transpose its 16 x 16 blocks, one two-source permute per "
            "line joins a column's four), each half's 32 lines out before the other's";
      } else if (kernels::GathersTileRows(avx512, e, n.vector_bytes, n.src_rows_alias)) {
        how = fmt::format(
            "in registers: rows gathered by 128-bit blocks (a load and three inserts per vector), "
            "then {} interleave rounds per group of {} vectors",
            __builtin_ctzll(static_cast<uint64_t>(16 / e)), 16 / e);
      } else if (e >= 4) {
        how = fmt::format("in registers: {} interleave round(s) per group of {} rows, then 128-bit block transposes",
                          e >= 16 ? 0 : __builtin_ctzll(static_cast<uint64_t>(16 / e)), std::max<int64_t>(1, 16 / e));
      } else {
        how = fmt::format("in registers: rows interleaved {} into 4-byte lanes, then the 4-byte tile",
                          e == 2 ? "in pairs" : "twice");
      }
      if (n.src_rows_alias && kernels::GathersTileRows(avx512, e, n.vector_bytes, false)) {
        how += fmt::format(
            ", each source row loaded once: rows {} B apart share too few of the L1's "
            "sets for a tile gathered by blocks, which reads each line four times",
            n.src_row_stride);
      }
      s += fmt::format("tile:     micro-tile {} rows x {} columns on {}-byte vectors ({}); whole 64-byte lines out\n",
                       d.tile.tile_rows, d.tile.tile_cols, n.vector_bytes, how);
      if (n.strategy == kernels::Strategy::kFusedTiles) {
        const auto side = [](int64_t inner, int64_t total, int outer_dim, int dim, const char* where) {
          if (outer_dim < 0) return fmt::format("{} (dim {} alone)", inner, dim);
          return fmt::format("{} x {} (dim {} continues dim {} in the {})", inner, total / inner, outer_dim,
                             dim, where);
        };
        // FusedWalk (fused_plane-inl.h) when not staged, with partial tiles in it where they run in
        // registers; the staged walk computes offsets per strip. FusedEdge for the rest.
        const bool walk = n.stage_pitch == 0;
        const bool in_walk = walk && avx512 && m.vector_bytes >= 16;
        // A third dim joining the rows (Tile::rows3_dim): rows = inner x mid x outer.
        std::string rows_side =
            side(n.rows_inner, n.rows_mid > 0 ? n.rows_inner * n.rows_mid : n.rows,
                 d.tile.rows2_dim, d.tile.rows_dim, "destination");
        if (d.tile.rows3_dim >= 0) {
          rows_side += fmt::format(
              " x {} (dim {} continues dim {} in the destination: {} B runs, where two dims "
              "left {} B)",
              n.rows / (n.rows_inner * n.rows_mid), d.tile.rows3_dim, d.tile.rows2_dim, n.rows * e,
              n.rows_inner * n.rows_mid * e);
        }
        s += fmt::format(
            "fused:    rows = {}, columns = {}; offsets per strip and band{}; partial tiles {}\n",
            rows_side, side(n.cols_inner, n.cols, d.tile.cols2_dim, d.tile.cols_dim, "source"),
            walk ? ", kept from plane to plane" : "",
            in_walk ? "in the walk on the same offsets (masked loads and stores)"
                    : "at the fused plane's ends through the edge path");
      }
      if (n.stage_pitch == 0 && n.band_group > 1) {
        s += fmt::format(
            "walk:     strips of {} rows, with cache-bypassing stores (whole aligned lines) "
            "{} bands of {} columns at a time: each row of tiles reads {} B of each of its {} "
            "source rows before the next row, and the strip's {} rows complete {} B runs per "
            "destination row ({})\n",
            n.strip_rows, n.band_group, d.tile.tile_cols, n.band_group * n.vector_bytes,
            d.tile.tile_rows, n.strip_rows, n.strip_rows * e,
            kernels::ShortStrips(d.folded, m)
                ? "short strips: this machine's calibration read them faster than "
                  "tall strips walked band by band, see stores"
                : "runs this short: bands walked one by one read one vector per row "
                  "and band, more streams than the hardware prefetcher follows");
      } else if (n.stage_pitch == 0 && n.strategy == kernels::Strategy::kTiles && n.streaming &&
                 n.blocked != kernels::Blocked::kRows &&
                 kernels::StagesDenseRows(n.dst_row_stride, n.rows, e, d.tile.tile_cols) &&
                 (!n.realign_rows || kernels::DenseStageBeatsBands(n.dst_row_stride, n.rows, e,
                                                             d.tile.tile_cols, n.strip_rows))) {
        // DenseStagedPlane (tiles-inl.h); items that each take a block of the rows see rows
        // that no longer follow each other, and walk band by band (the next line says so).
        const int64_t block = kernels::DenseStageBlockCols(n.dst_row_stride, d.tile.tile_cols);
        s += fmt::format(
            "walk:     blocks of {} whole columns through a buffer of at most {} laid out as the "
            "destination, with a line's worth of columns past the block, a row of tiles at a "
            "time across the block's bands ({} B of each of {} source rows), then out as whole "
            "lines with cache-bypassing stores; because destination rows follow each other ({} B "
            "each, not whole lines), so a band walk's tiles would each write part of a line\n",
            block, Bytes(kernels::kMaxDenseStageBytes), block * e, d.tile.tile_rows,
            n.dst_row_stride);
      } else if (n.stage_pitch == 0) {
        s += fmt::format(
            "walk:     strips of {} rows, each walked band by band ({} columns, top to bottom): "
            "{} B runs per destination row; at most L1d / (2 x {}-byte vector) rows, so one "
            "band's source lines fit half the L1{}{}{}\n",
            n.strip_rows, d.tile.tile_cols, n.strip_rows * e, n.vector_bytes,
            n.prefetch_ahead
                ? fmt::format("; each tile fetches the same tile of the next band and the "
                              "destination lines of the tile {} further down for writing (output "
                              "{} of at least half the L2: the stores would miss)",
                              kernels::kStoreTilesAhead, Bytes(d.bytes))
                : "",
            n.strategy != kernels::Strategy::kTiles || !n.streaming ? std::string()
            : n.realign_rows  // TileBandsRealigned (tiles-inl.h)
                ? fmt::format("; destination rows {} B apart are not whole lines apart, so each "
                              "band's tiles go through two L1 buffers in turn and each row's "
                              "line between its last two tiles leaves whole with a "
                              "cache-bypassing store (one lane permute of the two), a run's "
                              "first and last partial lines with byte-masked ordinary stores, "
                              "fetched for writing a band ahead",
                              n.dst_row_stride)
            : !kernels::BandWalkStreams(n.dst_row_stride)
                ? fmt::format("; destination rows {} B apart are not whole lines apart, so the "
                              "walk stores ordinarily though the plan streams",
                              n.dst_row_stride)
            : n.src_rows_alias
                ? "; with cache-bypassing stores (whole aligned lines) each tile prefetches the "
                  "same tile of the next band into L2 (source rows this far apart share too few "
                  "of the L1's sets to keep it there)"
                : "; with cache-bypassing stores (whole aligned lines) each tile prefetches the "
                  "same tile of the next band",
            n.strategy == kernels::Strategy::kTiles &&
                    kernels::HalvesByteTiles(avx512, e, n.vector_bytes)
                ? "; each band is walked twice, 32 columns at a time (the tile's halves), so 32 "
                  "destination rows take lines at once rather than 64"
                : "");
      } else {
        const bool dst_alias = kernels::StrideAliases(n.dst_row_stride, d.tile.tile_cols, m);
        // StagesStreamingRuns (planner_strategy.cc): destination rows not whole lines apart, with
        // cache-bypassing stores; the kernels then complete each block's lines from the next
        // block's first rows (StreamOwnedLines).
        const bool partial_lines =
            n.streaming &&
            (!kernels::BandWalkStreams(n.dst_row_stride) ||
             (d.tile.cols2_dim >= 0 && !kernels::BandWalkStreams(n.dst_outer_col_stride)));
        const std::string why =
            partial_lines
                ? fmt::format(
                      "because destination rows {} B apart are not whole lines apart: "
                      "a band walk's strips would each write part of a line, so every "
                      "line leaves whole with cache-bypassing stores, each block's "
                      "tiles running one row of tiles into the next block to complete "
                      "the lines its rows start",
                      !kernels::BandWalkStreams(n.dst_row_stride) ? n.dst_row_stride
                                                                  : n.dst_outer_col_stride)
                : fmt::format(
                      "because {} rows {} B apart fall in too few of the L1's sets "
                      "({}-way)",
                      dst_alias ? "destination" : "source",
                      dst_alias ? n.dst_row_stride : n.src_row_stride, m.l1d_ways);
        s += fmt::format(
            "walk:     blocks of {} rows x {} columns through a buffer of {} (L2 / 8 at most; "
            "rows {} B apart), then {} B runs per destination row{}; {}{}\n",
            n.strip_rows, n.block_cols, Bytes(n.block_cols * n.stage_pitch), n.stage_pitch,
            n.strip_rows * e,
            n.prefetch_ahead ? fmt::format(", each fetching the next run's lines for writing "
                                           "(output {} of at least half the L2: the stores "
                                           "would miss)",
                                           Bytes(d.bytes))
                             : "",
            why,
            n.strategy == kernels::Strategy::kStagedTiles && !partial_lines
                ? "; only with ordinary stores (cache-bypassing ones never allocate in L1: such "
                  "plans walk in place)"
            : n.source_pitch > 0
                ? fmt::format(
                      "; each block's source rows first copied as {} B runs into a second buffer "
                      "(rows {} B apart, the runs {} rows ahead fetched meanwhile), which the "
                      "tiles read: {}{}",
                      n.block_cols * e, n.source_pitch, kernels::kSourceRowsAhead,
                      n.source_copy == kernels::SourceCopy::kByteTilesInDram
                          ? fmt::format("in DRAM, a 1-byte tile loads {} rows at once, one line "
                                        "of each",
                                        d.tile.tile_rows)
                          : fmt::format("{}a tile's {} source rows put more than {} lines in one "
                                        "set of the L2 (more than a 16-way L2 holds), "
                                        "the copy's spread over the sets",
                                        n.streaming ? "in DRAM, " : "", d.tile.tile_rows,
                                        kernels::kMostL2Ways),
                      n.streaming ? "; a column of tiles at a time, its runs streamed out before "
                                    "the next column is tiled"
                                  : "")
                : "");
      }
      s += fmt::format("plane:    {} rows x {} columns\n", n.rows, n.cols);
      if (n.stage_planes) {
        // StagesPlanes (planner_nest.cc), FusedPlaneThroughStage (fused_plane-inl.h).
        const kernels::PlaneRuns runs = kernels::FusedPlaneRuns(
            n.rows, e, n.cols, n.cols_inner, n.dst_row_stride, n.dst_outer_col_stride);
        s += fmt::format(
            "stage:    each plane through a buffer of {} laid out as its destination ({} of {} B) "
            "with ordinary stores, then out with cache-bypassing stores for the whole lines "
            "(ordinary ones for each run's first and last, which other planes share); because "
            "destination rows {} B apart are not whole lines apart, so the walk would store "
            "them all ordinarily\n",
            Bytes(runs.count * runs.bytes),
            runs.count == 1 ? std::string("one run") : fmt::format("{} runs", runs.count),
            runs.bytes, n.dst_row_stride);
      }
      break;
    }
  }
  if (d.nest.loop_rank > 0) {
    s += "loops:    per item, outer -> inner (source memory order";
    if (d.tile.dst_loop_dim >= 0) {
      // DestinationLoopDim (planner.h).
      const int64_t dst_run = kernels::PlaneRunBytes(d.folded, d.tile, /*destination=*/true);
      s += fmt::format(
          ", but dim {} innermost: it continues the plane's {} B destination runs, shorter than "
          "its {} B source runs{}",
          d.tile.dst_loop_dim, dst_run, kernels::PlaneRunBytes(d.folded, d.tile, false),
          dst_run % kernels::kLineBytes == 0
              ? ""
              : ", and source order would leave their shared lines before "
                "completing them");
    }
    s += "):";
    for (int k = 0; k < d.nest.loop_rank; ++k) s += (k ? ", " : " ") + LoopName(d, k);
    s += "\n";
  }
  s += fmt::format("driver:   {} item(s)", d.split.items);
  if (d.nest.strategy == kernels::Strategy::kCopy) {
    // The last item holds what is left: all of it when one item covers the tensor.
    const int64_t last = d.bytes - (d.split.items - 1) * d.split.block;
    s += fmt::format(" of {} contiguous bytes", d.split.items == 1 ? last : d.split.block);
    if (d.split.items > 1 && last != d.split.block) s += fmt::format(" (the last {})", last);
  } else if (!d.split.driver.empty()) {
    s += d.split.dst_prefix ? " (destination-order prefix: each a contiguous output range)"
         : d.split.dst_order
             ? " (dims in destination order: in source order the threads' shares would be cut "
               "on a dim whose destination runs are not whole lines, lines both would write)"
             : " (source-order dims and row blocks: each keeps whole source rows)";
  }
  s += fmt::format("; threads: up to {} (sized for {}), one thread below {}\n",
                   d.options.max_threads > 0 ? fmt::format("{}", d.options.max_threads)
                                             : std::string("the calling arena's concurrency"),
                   d.threads_hint, Bytes(kernels::kParallelMinBytes));
  std::string threshold;
  if (d.options.stores != PlanOptions::Stores::kAuto) {
    threshold = "forced by PlanOptions::stores";
  } else if (m.streaming_bytes == 0) {
    threshold = d.threads_hint == 1
                    ? fmt::format("automatic; below the L2 ({}) one thread's stores stay regular",
                                  Bytes(m.l2_bytes))
                    : fmt::format("automatic; below twice the L2 ({}) stores stay regular",
                                  Bytes(2 * m.l2_bytes));
  } else {
    const bool staged_first =
        m.staged_streaming_bytes > 0 && m.staged_streaming_bytes < m.streaming_bytes;
    threshold = fmt::format(
        "automatic streaming from {}{}{}; {}", Bytes(m.streaming_bytes),
        staged_first
            ? fmt::format(
                  ", from {} for plans that would stage 1-, 2- or 4-byte tiles "
                  "on 64-byte vectors{} and for 1-byte tiles in halves walked in "
                  "place{}",
                  Bytes(m.staged_streaming_bytes),
                  d.stores_reason == kernels::StoresReason::kWouldStage
                      ? " (this one: it walks in place instead)"
                      : "",
                  d.stores_reason == kernels::StoresReason::kByteTilesInPlace ? " (this one)" : "")
            : "",
        d.threads_hint == 1 ? OneThreadStores(m, d.stores_reason) : "", m.streaming_why);
  }
  s += fmt::format("stores:   {} (output {}; {})\n",
                   d.nest.streaming ? "cache-bypassing (streaming) for whole aligned lines" : "regular",
                   Bytes(d.bytes), threshold);
  s += fmt::format("sbuf:     {}\n", kernels::ToString(d.sbuf));
  if (d.sbuf.tiles <= 1) {
    s += "          parallel claims: the output is a single partition tile, so claims divide it\n";
  } else if (d.split.align_items > 0) {
    s += fmt::format("          parallel claims end on partition-tile boundaries ({} item(s) per claim unit)\n",
                     d.split.align_items);
  } else {
    s += "          parallel claims do not follow partition tiles (item sizes do not divide them)\n";
  }
  return s;
}

}  // namespace iotx
