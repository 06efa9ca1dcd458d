#include "kernels/planner.h"

#include <unistd.h>

#include <algorithm>
#include <numeric>

#include "kernels/sbuf.h"

namespace iotx::kernels {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

bool IsTransposeWidth(int64_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

constexpr KernelCandidate kCandidates[] = {
    {KernelKind::kCopy, "copy", "source and destination are one contiguous block",
     [](const Problem& p) { return p.dims.empty(); }},
    {KernelKind::kRowCopy, "row-copy",
     "the innermost run stays in place and is not a 1/2/4/8/16-byte element: strided rows",
     [](const Problem& p) { return !IsTransposeWidth(p.elem_bytes); }},
    {KernelKind::kTranspose, "transpose",
     "the innermost dim moves: tiled 2-D transpose in registers of 1/2/4/8/16-byte elements",
     [](const Problem& p) { return IsTransposeWidth(p.elem_bytes); }},
};

// Source bytes of each row a thread's column block keeps together. Two threads on 8192^2 f32
// read 1 KiB pieces of 8192 rows each at 15 GB/s; reading whole rows (blocks of rows instead,
// which would break the partition-tile claims) measured 17-18 GB/s; 2 KiB pieces sit between.
constexpr int64_t kMinRunBytes = 2048;

// Source bytes per strip when de-interleaving 2-4 columns.
constexpr int64_t kDeinterleaveBytes = 4096;

// Destination bytes a row-copy strip writes in one sequential run per column.
constexpr int64_t kRowCopyRunBytes = 1024;

// An item below this many bytes costs more in claiming and loop setup than it balances.
constexpr int64_t kMinItemBytes = 64 * 1024;
// Items per thread: enough that a thread slowed by a neighbour on this shared machine hands
// its share to the others (claims are dynamic), few enough that each is >= kMinItemBytes.
constexpr int64_t kItemsPerThread = 16;

}  // namespace

std::span<const KernelCandidate> KernelCandidates() { return kCandidates; }

const KernelCandidate& ChooseKernel(const Problem& folded) {
  for (const KernelCandidate& c : kCandidates) {
    if (c.applies(folded)) return c;
  }
  return kCandidates[std::size(kCandidates) - 1];  // unreachable: the last two cover all sizes
}

int64_t StreamLines(int64_t elem_bytes) {
  // Two opposing costs, measured on the development machine with cache-bypassing stores:
  // writes want several consecutive lines per destination row (a pattern test: 1 line per
  // row and visit 9.4 GB/s, 2 lines 19.3, 4 lines 22.7, sequential 22.0), but each extra line
  // adds 64 / elem_bytes source rows read at once, and beyond ~32-64 rows the reads slow down.
  // Single thread, GB/s for lines = 1 / 2 / 4: 8192^2 f32 7.6 / 8.8 / 6.8; 8192^2 bf16
  // 8.1 / 8.8 / 4.8; 16384x8192 i8 6.0 / 5.2 / 4.8; 4096^2 f64 8.1 / 10.9 / 11.4.
  switch (elem_bytes) {
    case 1: return 1;
    case 2:
    case 4: return 2;
    default: return 4;
  }
}

Tile ChooseTile(const Problem& folded, KernelKind kind, bool streaming) {
  Tile tile;
  if (kind == KernelKind::kCopy || folded.dims.empty()) return tile;
  tile.rows_dim = static_cast<int>(folded.dims.size()) - 1;
  tile.cols_dim = SourceInnerDim(folded);
  const int64_t e = folded.elem_bytes;
  // Enough rows that each destination row gets a whole 64-byte line per strip (StreamLines
  // lines when streaming); enough columns per thread block that each source row gives a pair
  // of lines (the adjacent-line prefetcher fetches 128-byte pairs).
  if (kind == KernelKind::kTranspose) {
    tile.stream_lines = streaming ? StreamLines(e) : 1;
    tile.row_block = std::max<int64_t>(1, CeilDiv(64 * tile.stream_lines, e));
    const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
    const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
    if (cols.n <= 4 && rows.src_stride == cols.n * e) {
      // A contiguous source of 2-4 columns is de-interleaved along the rows: strips of
      // kDeinterleaveBytes of source each, so the per-strip work outweighs the loop overhead.
      tile.row_block = RoundUp(std::max(tile.row_block, CeilDiv(kDeinterleaveBytes, cols.n * e)),
                               tile.row_block);
    }
  } else {
    // A row copy's strip writes each column's rows as one sequential destination run; runs of
    // 1 KiB (16 lines) keep the writes sequential where a line per row would scatter them.
    tile.row_block = std::max<int64_t>(1, CeilDiv(kRowCopyRunBytes, e));
  }
  tile.col_granule = std::max<int64_t>(1, CeilDiv(128, e));
  return tile;
}

PartitionUnit FindPartitionUnit(const Problem& folded, int64_t leading) {
  PartitionUnit unit;
  unit.leading = leading;
  // Dim 0 of the output is never dropped when > 1 and only fuses with the dims after it, so
  // the folded dim 0 is `leading` times the fused factor.
  if (leading <= kSbufPartitions || folded.dims.empty()) return unit;
  const int64_t n0 = folded.dims.front().n;
  if (n0 % leading != 0) return unit;
  unit.d0_per_tile = kSbufPartitions * (n0 / leading);
  return unit;
}

DriverSplit SplitDriver(const Problem& folded, const Tile& tile, const PartitionUnit& unit,
                        int64_t target_items, int threads) {
  DriverSplit split;
  if (target_items <= 1) return split;
  const int m = static_cast<int>(folded.dims.size());
  const int64_t e = folded.elem_bytes;
  const auto is_tile = [&](int i) { return i == tile.rows_dim || i == tile.cols_dim; };
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
    // Too short for min_block per thread: one block per thread beats idle threads.
    if (blocks < threads) blocks = std::min<int64_t>(threads, d.n / granule);
    if (blocks > threads && blocks < 4 * threads) blocks = blocks / threads * threads;
    if (blocks < 2) return false;
    const int64_t block = RoundUp(CeilDiv(d.n, blocks), granule);
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

  if (unit.d0_per_tile > 0) {
    split.dst_prefix = true;
    for (int i = 0; i < m && split.items < target_items; ++i) {
      const Dim& d = folded.dims[static_cast<size_t>(i)];
      if (!is_tile(i) && split.items * d.n <= 4 * target_items) {
        take_whole(i);
        continue;
      }
      int64_t granule = i == tile.rows_dim ? tile.row_block : i == tile.cols_dim ? tile.col_granule : 1;
      if (i == 0 && d.n >= 2 * unit.d0_per_tile) {
        granule = std::lcm(granule, unit.d0_per_tile);  // claims end on partition tiles
      }
      block_dim(i, granule, i == tile.cols_dim ? min_cols : 1);
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
    if (!is_tile(i)) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return folded.dims[static_cast<size_t>(a)].src_stride > folded.dims[static_cast<size_t>(b)].src_stride;
  });
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  std::vector<bool> taken(static_cast<size_t>(m), false);
  // 1. Dims outside a row block in source order: each item still reads whole row blocks.
  for (int i : order) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if (split.items >= target_items) break;
    if (d.src_stride >= rows.src_stride * tile.row_block && split.items * d.n <= 4 * target_items) {
      take_whole(i);
      taken[static_cast<size_t>(i)] = true;
    }
  }
  // 2. Blocks of tile rows.
  if (split.items < target_items && block_dim(tile.rows_dim, tile.row_block, 1)) return split;
  // 3. The other dims, outermost in source order first.
  for (int i : order) {
    if (split.items >= target_items) break;
    if (taken[static_cast<size_t>(i)]) continue;
    if (split.items * folded.dims[static_cast<size_t>(i)].n <= 4 * target_items) {
      take_whole(i);
    } else {
      if (block_dim(i, 1, 1)) return split;
      break;
    }
  }
  // 4. Blocks of columns.
  if (split.items < target_items) block_dim(tile.cols_dim, tile.col_granule, min_cols);
  return split;
}

DriverSplit SplitCopy(int64_t bytes, int64_t leading, int64_t target_items) {
  DriverSplit split;
  int64_t chunk = RoundUp(std::max(kMinItemBytes, CeilDiv(bytes, std::max<int64_t>(target_items, 1))), 4096);
  int64_t tile_bytes = 0;
  if (leading > kSbufPartitions && bytes % leading == 0) {
    tile_bytes = kSbufPartitions * (bytes / leading);
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

int64_t StreamingThresholdBytes() {
  // Streaming pays once source and destination no longer fit the core's private L2 together.
  // Measured on the development machine (2 MiB L2 per core; an LLC that reports 260 MiB but is
  // shared by the whole host and holds little of ours: memcpy at 16 MiB already runs at DRAM
  // speed), f32 transposes, single thread, regular vs streaming stores: 384x384 (576 KiB)
  // 19.8 vs 12.3 GB/s, 512x512 (1 MiB) 7.9 vs 12.5, 768x768 8.1 vs 11.9. So the threshold is
  // half the L2, not the reported LLC.
  static const int64_t threshold = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return (l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 21) / 2;
  }();
  return threshold;
}

bool ChooseStreaming(PlanOptions::Stores stores, int64_t bytes) {
  switch (stores) {
    case PlanOptions::Stores::kRegular: return false;
    case PlanOptions::Stores::kStreaming: return true;
    case PlanOptions::Stores::kAuto: break;
  }
  return bytes >= StreamingThresholdBytes();
}

Nest BuildNest(const Problem& folded, KernelKind kind, const Tile& tile, const DriverSplit& split,
               bool streaming) {
  Nest nest;
  nest.kind = kind;
  nest.elem_bytes = folded.elem_bytes;
  nest.streaming = streaming;
  nest.driver_rank = static_cast<int>(split.driver.size());
  std::copy(split.driver.begin(), split.driver.end(), nest.driver.begin());
  nest.items = split.items;
  nest.block = split.block;

  if (kind == KernelKind::kCopy) {
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
  nest.stream_lines = tile.stream_lines;

  // Kernel loops: the dims the driver left, except the tile's, plus the row-block loop.
  struct Entry {
    LoopDim dim;
    int folded_index;  // -1 for the row-block loop
  };
  std::vector<Entry> entries;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (i == tile.rows_dim || i == tile.cols_dim) continue;
    if (std::find(split.whole.begin(), split.whole.end(), i) != split.whole.end()) continue;
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    entries.push_back({{d.n, d.src_stride, d.dst_stride}, i});
  }
  entries.push_back({{CeilDiv(rows.n, tile.row_block), tile.row_block * rows.src_stride,
                      tile.row_block * rows.dst_stride},
                     -1});
  // Loop order: walk the source in memory order (largest source stride outermost). Each strip
  // reads row_block rows; with this order consecutive strips continue those rows, so reads
  // form long sequential streams the hardware prefetcher follows, while the destination is
  // written in whole lines that need no prefetch.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
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
    if (split.blocked_dim == tile.rows_dim) {
      nest.blocked = Blocked::kRows;
    } else if (split.blocked_dim == tile.cols_dim) {
      nest.blocked = Blocked::kCols;
    }
    nest.blocked_full = folded.dims[static_cast<size_t>(split.blocked_dim)].n;
  }
  return nest;
}

}  // namespace iotx::kernels
