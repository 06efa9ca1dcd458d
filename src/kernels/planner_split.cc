// The planner's split stage (planner.h: SplitDriver, SplitCopy): the items threads share,
// cut so that the shares come out even and claims end on device partition tiles.
#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "kernels/planner.h"
#include "kernels/planner_internal.h"

namespace iotx::kernels {
namespace {

// Source bytes of each row a thread's column block keeps together. Two threads on 8192^2 f32
// read 1 KiB pieces of 8192 rows each at 15 GB/s; reading whole rows (blocks of rows instead,
// which would break the partition-tile claims) measured 17-18 GB/s; 2 KiB pieces sit between.
constexpr int64_t kMinRunBytes = 2048;

// Destination bytes of each row a thread's row block keeps together where the blocks share
// their first and last lines (SplitDriver): those two lines are then at most a 32nd.
constexpr int64_t kSharedRunBytes = 4096;

// A run of the destination that holds one line two threads' shares both write (SplitDriver):
// shorter ones make that line more than a 256th of the output.
constexpr int64_t kSharedLineRunBytes = 256 * kLineBytes;
// An item below this many bytes costs more in claiming and loop setup than it balances.
constexpr int64_t kMinItemBytes = 64 * 1024;
// Items per thread: enough that a thread slowed by a neighbour on this shared machine hands
// its share to the others (claims are dynamic), few enough that each is >= kMinItemBytes.
constexpr int64_t kItemsPerThread = 16;

}  // namespace

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
    return folded.dims[static_cast<size_t>(a)].src_stride >
           folded.dims[static_cast<size_t>(b)].src_stride;
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
  int64_t chunk =
      RoundUp(std::max(kMinItemBytes, CeilDiv(bytes, std::max<int64_t>(target_items, 1))), 4096);
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

}  // namespace iotx::kernels
