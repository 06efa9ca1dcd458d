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
                        int64_t target_items) {
  DriverSplit split;
  const int m = static_cast<int>(folded.dims.size());
  for (int i = 0; i < m && split.items < target_items; ++i) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    const bool is_tile = i == tile.rows_dim || i == tile.cols_dim;
    if (!is_tile && split.items * d.n <= 4 * target_items) {
      split.driver.push_back({d.n, d.src_stride, d.dst_stride});
      split.items *= d.n;
      split.consumed = i + 1;
      continue;
    }
    int64_t granule = i == tile.rows_dim ? tile.row_block : i == tile.cols_dim ? tile.col_granule : 1;
    if (i == 0 && unit.d0_per_tile > 0 && d.n >= 2 * unit.d0_per_tile) {
      granule = std::lcm(granule, unit.d0_per_tile);  // claims end on partition tiles
    }
    const int64_t block = RoundUp(CeilDiv(d.n, CeilDiv(target_items, split.items)), granule);
    if (block < d.n) {
      const int64_t blocks = CeilDiv(d.n, block);
      split.driver.push_back({blocks, block * d.src_stride, block * d.dst_stride});
      split.items *= blocks;
      split.blocked_dim = i;
      split.block = block;
    }
    break;  // past a blocked dim (or a tile dim) the kernel owns the rest
  }

  if (unit.d0_per_tile > 0 && !split.driver.empty()) {
    const int64_t n0 = folded.dims.front().n;
    if (split.blocked_dim == 0) {
      if (split.block % unit.d0_per_tile == 0) {
        split.align_items = 1;
      } else if (unit.d0_per_tile % split.block == 0) {
        split.align_items = unit.d0_per_tile / split.block;
      }
    } else if (split.consumed >= 1) {
      split.align_items = unit.d0_per_tile * (split.items / n0);
    }
  }
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
  for (int i = split.consumed; i < static_cast<int>(folded.dims.size()); ++i) {
    if (i == tile.rows_dim || i == tile.cols_dim) continue;
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
