// Per-target item and macro loops shared by every strategy's translation unit: walk a Nest
// (see nest.h) and call the strategy's plane function per kernel-loop position. The strategy,
// element width and vector width were fixed by the planner and the dispatch (dispatch.h), so
// the loops below are specialized and the per-plane work is one direct call.
#if defined(IOTX_KERNELS_RUN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_RUN_INL_H_
#undef IOTX_KERNELS_RUN_INL_H_
#else
#define IOTX_KERNELS_RUN_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/nest.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

// Extents of one item: the nest's, with the blocked one cut to this item's block.
struct ItemExtents {
  int64_t rows;
  int64_t cols;
  int64_t bytes;
  int64_t loop_n[kMaxRank + 1];
};

// Walks the kernel loops of one item and calls plane(src, dst, rows, cols) per position.
template <class Plane>
HWY_INLINE void RunLoops(const Nest& nest, const ItemExtents& ext, const uint8_t* src,
                         uint8_t* dst, const Plane& plane) {
  if (nest.loop_rank == 0) return plane(src, dst, ext.rows, ext.cols);
  const int inner = nest.loop_rank - 1;
  const int rbl = nest.row_block_loop;
  const int64_t rb = nest.row_block;
  const LoopDim& in = nest.loops[static_cast<size_t>(inner)];
  const int64_t n_in = ext.loop_n[inner];
  int64_t idx[kMaxRank + 1] = {};
  for (;;) {
    if (inner == rbl) {
      for (int64_t i = 0; i < n_in; ++i) {
        plane(src + i * in.src_stride, dst + i * in.dst_stride, std::min(rb, ext.rows - i * rb),
              ext.cols);
      }
    } else {
      const int64_t rows = rbl >= 0 ? std::min(rb, ext.rows - idx[rbl] * rb) : ext.rows;
      for (int64_t i = 0; i < n_in; ++i) {
        plane(src + i * in.src_stride, dst + i * in.dst_stride, rows, ext.cols);
      }
    }
    int k = inner - 1;
    for (; k >= 0; --k) {
      const LoopDim& l = nest.loops[static_cast<size_t>(k)];
      src += l.src_stride;
      dst += l.dst_stride;
      if (++idx[k] < ext.loop_n[k]) break;
      src -= ext.loop_n[k] * l.src_stride;
      dst -= ext.loop_n[k] * l.dst_stride;
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

// Calls item(src, dst, extents) for items [begin, end) of the driver. `row_shift`
// (Blocked::kRows only) moves every boundary between row blocks that many rows later: the
// first block grows by it, the last shrinks (RunTiles sets it so that the blocks after the
// first start on a destination line, LineRowShift).
template <class Item>
HWY_INLINE void ForEachItem(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                            int64_t end, int64_t row_shift, const Item& item) {
  ItemExtents ext;
  ext.rows = nest.rows;
  ext.cols = nest.cols;
  ext.bytes = nest.copy_bytes;
  for (int i = 0; i < nest.loop_rank; ++i) ext.loop_n[i] = nest.loops[static_cast<size_t>(i)].n;

  // Decode `begin` into driver indices (innermost fastest) and offsets.
  int64_t idx[kMaxRank] = {};
  int64_t src_off = 0, dst_off = 0;
  int64_t rest = begin;
  for (int k = nest.driver_rank - 1; k >= 0; --k) {
    const LoopDim& d = nest.driver[static_cast<size_t>(k)];
    idx[k] = rest % d.n;
    rest /= d.n;
    src_off += idx[k] * d.src_stride;
    dst_off += idx[k] * d.dst_stride;
  }
  const int last = nest.driver_rank - 1;
  for (int64_t it = begin; it < end; ++it) {
    int64_t shift_src = 0, shift_dst = 0;  // where a shifted row block starts, past its own
    bool empty = false;                    // a last row block the shift left no row
    if (nest.blocked != Blocked::kNone) {
      int64_t extent = std::min(nest.block, nest.blocked_full - idx[last] * nest.block);
      if (row_shift != 0) {
        const int64_t start = idx[last] * nest.block;
        const int64_t first = start == 0 ? 0 : std::min(nest.blocked_full, start + row_shift);
        const int64_t past = idx[last] + 1 == nest.driver[static_cast<size_t>(last)].n
                                 ? nest.blocked_full
                                 : std::min(nest.blocked_full, start + nest.block + row_shift);
        extent = past - first;
        empty = extent == 0;
        shift_src =
            (first - start) * (nest.driver[static_cast<size_t>(last)].src_stride / nest.block);
        shift_dst =
            (first - start) * (nest.driver[static_cast<size_t>(last)].dst_stride / nest.block);
      }
      switch (nest.blocked) {
        case Blocked::kRows: ext.rows = extent; break;
        case Blocked::kCols: ext.cols = extent; break;
        case Blocked::kBytes: ext.bytes = extent; break;
        case Blocked::kLoop: ext.loop_n[nest.blocked_loop] = extent; break;
        case Blocked::kNone: break;
      }
    }
    if (nest.row_block_loop >= 0) {
      ext.loop_n[nest.row_block_loop] = (ext.rows + nest.row_block - 1) / nest.row_block;
    }
    if (!empty) item(src + src_off + shift_src, dst + dst_off + shift_dst, ext);
    for (int k = last; k >= 0; --k) {
      const LoopDim& d = nest.driver[static_cast<size_t>(k)];
      src_off += d.src_stride;
      dst_off += d.dst_stride;
      if (++idx[k] < d.n) break;
      src_off -= d.n * d.src_stride;
      dst_off -= d.n * d.dst_stride;
      idx[k] = 0;
    }
  }
}

template <class Item>
HWY_INLINE void ForEachItem(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                            int64_t end, const Item& item) {
  ForEachItem(nest, src, dst, begin, end, 0, item);
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_RUN_INL_H_
