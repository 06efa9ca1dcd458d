// The planner's last stages (planner.h: DestinationLoopDim, BuildNest): the order of the
// kernel loops, and the loop nest the per-target kernels run.
#include <algorithm>
#include <vector>

#include "kernels/planner.h"
#include "kernels/planner_internal.h"

namespace iotx::kernels {

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

Nest BuildNest(const Problem& folded, Strategy strategy, const Tile& tile, const DriverSplit& split,
               bool streaming) {
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
  nest.realign_rows = tile.realign_rows;
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
