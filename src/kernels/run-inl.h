// Per-target macro loop and item loop: walks a Nest (see nest.h) and calls the strip kernels.
// The kernel kind, element width and vector width are resolved once per call of RunItems, so
// the loops below are specialized and the per-strip work is one direct call.
#if defined(IOTX_KERNELS_RUN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_RUN_INL_H_
#undef IOTX_KERNELS_RUN_INL_H_
#else
#define IOTX_KERNELS_RUN_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/nest.h"
#include "kernels/row_copy-inl.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Extents of one item: the nest's, with the blocked one cut to this item's block.
struct ItemExtents {
  int64_t rows;
  int64_t cols;
  int64_t bytes;
  int64_t loop_n[kMaxRank + 1];
};

// Walks the kernel loops of one item and calls strip(src, dst, rows, cols, next) per position;
// `next` is the source of the following strip of the innermost loop, or null.
template <class Strip>
HWY_INLINE void RunLoops(const Nest& nest, const ItemExtents& ext, const uint8_t* src,
                         uint8_t* dst, const Strip& strip) {
  const int inner = nest.loop_rank - 1;
  const int rbl = nest.row_block_loop;
  const int64_t rb = nest.row_block;
  const LoopDim& in = nest.loops[static_cast<size_t>(inner)];
  const int64_t n_in = ext.loop_n[inner];
  int64_t idx[kMaxRank + 1] = {};
  for (;;) {
    if (inner == rbl) {
      for (int64_t i = 0; i < n_in; ++i) {
        strip(src + i * in.src_stride, dst + i * in.dst_stride, std::min(rb, ext.rows - i * rb),
              ext.cols, i + 1 < n_in ? src + (i + 1) * in.src_stride : nullptr);
      }
    } else {
      const int64_t rows = rbl >= 0 ? std::min(rb, ext.rows - idx[rbl] * rb) : ext.rows;
      for (int64_t i = 0; i < n_in; ++i) {
        strip(src + i * in.src_stride, dst + i * in.dst_stride, rows, ext.cols,
              i + 1 < n_in ? src + (i + 1) * in.src_stride : nullptr);
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

// Calls item(src, dst, extents) for items [begin, end) of the driver.
template <class Item>
HWY_INLINE void ForEachItem(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                            int64_t end, const Item& item) {
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
    if (nest.blocked != Blocked::kNone) {
      const int64_t extent = std::min(nest.block, nest.blocked_full - idx[last] * nest.block);
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
    item(src + src_off, dst + dst_off, ext);
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

// Strips reading at most this many source bytes request the next strip's lines up front.
// Short source rows (512 B for 128 f32) are read column-chunk by column-chunk, an order the
// hardware streamer does not follow within a page; the explicit requests restore it. Measured
// single-thread GB/s without / with: 32x64x64x128 f32 (0,3,1,2) 6.2 / 8.0; 96x2048x2x128 f32
// 6.3 / 8.1; the bf16 variant 5.6 / 9.0. Strips of 1 MiB (8192^2 f32) lost 8.0 -> 6.4 with it.
inline constexpr int64_t kPrefetchStripBytes = 64 * 1024;

template <size_t kElem, class D>
HWY_NOINLINE void RunTranspose(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                               int64_t end) {
  const D d;
  const bool streaming = nest.streaming;
  const auto stream_lines = static_cast<size_t>(nest.stream_lines);
  const int64_t ss = nest.src_row_stride;
  const int64_t ds = nest.dst_row_stride;
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    RunLoops(nest, ext, s, t, [&](const uint8_t* s2, uint8_t* t2, int64_t rows, int64_t cols,
                                  const uint8_t* next) {
      const int64_t row_bytes = cols * static_cast<int64_t>(kElem);
      if (next != nullptr && rows * row_bytes <= kPrefetchStripBytes) {
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t b = 0; b < row_bytes; b += kLineBytes) hwy::Prefetch(next + r * ss + b);
        }
      }
      TransposeStrip<kElem>(d, s2, ss, t2, ds, static_cast<size_t>(rows), static_cast<size_t>(cols),
                            streaming, stream_lines);
    });
  });
}

// Picks the widest vector whose columns the tile can fill: narrow tiles (a source-innermost
// dim shorter than one vector) would otherwise run only through the staged edge path.
template <size_t kElem>
HWY_INLINE void RunTransposeForWidth(const Nest& nest, const uint8_t* src, uint8_t* dst,
                                     int64_t begin, int64_t end) {
  using T = LaneT<kElem>;
  // A contiguous source of 2-4 columns is de-interleaved along the rows (DeinterleaveCols),
  // which wants the widest vectors.
  const bool deinterleave = nest.cols >= 2 && nest.cols <= 4 &&
                            nest.src_row_stride == nest.cols * static_cast<int64_t>(kElem);
  const int64_t col_bytes = deinterleave ? int64_t{64} : nest.cols * static_cast<int64_t>(kElem);
#if HWY_TARGET == HWY_SCALAR
  (void)col_bytes;
  RunTranspose<kElem, hn::ScalableTag<T>>(nest, src, dst, begin, end);
#elif HWY_HAVE_SCALABLE
  (void)col_bytes;
  RunTranspose<kElem, hn::Full128<T>>(nest, src, dst, begin, end);
#else
  constexpr int64_t kFullBytes = static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<T>()) * sizeof(T));
  if constexpr (kFullBytes >= 64) {
    if (col_bytes >= 64) return RunTranspose<kElem, hn::ScalableTag<T>>(nest, src, dst, begin, end);
    if (col_bytes >= 32) {
      return RunTranspose<kElem, hn::CappedTag<T, 32 / sizeof(T)>>(nest, src, dst, begin, end);
    }
  } else if constexpr (kFullBytes >= 32) {
    if (col_bytes >= 32) return RunTranspose<kElem, hn::ScalableTag<T>>(nest, src, dst, begin, end);
  }
  RunTranspose<kElem, hn::Full128<T>>(nest, src, dst, begin, end);
#endif
}

HWY_NOINLINE void RunRowCopy(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                             int64_t end) {
  const bool streaming = nest.streaming;
  const int64_t ss = nest.src_row_stride;
  const int64_t ds = nest.dst_row_stride;
  const auto elem = static_cast<size_t>(nest.elem_bytes);
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    RunLoops(nest, ext, s, t, [&](const uint8_t* s2, uint8_t* t2, int64_t rows, int64_t cols,
                                  const uint8_t* /*next*/) {
      RowCopyStrip(s2, ss, t2, ds, static_cast<size_t>(rows), static_cast<size_t>(cols), elem,
                   streaming);
    });
  });
}

HWY_NOINLINE void RunCopy(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                          int64_t end) {
  const bool streaming = nest.streaming;
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    if (streaming) {
      StreamBytes(s, t, static_cast<size_t>(ext.bytes));
    } else {
      std::memcpy(t, s, static_cast<size_t>(ext.bytes));
    }
  });
}

// Runs items [begin, end) of the nest. Thread-safe; allocates nothing.
HWY_NOINLINE void RunItems(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                           int64_t end) {
  switch (nest.kind) {
    case KernelKind::kCopy:
      RunCopy(nest, src, dst, begin, end);
      break;
    case KernelKind::kRowCopy:
      RunRowCopy(nest, src, dst, begin, end);
      break;
    case KernelKind::kTranspose:
      switch (nest.elem_bytes) {
        case 1: RunTransposeForWidth<1>(nest, src, dst, begin, end); break;
        case 2: RunTransposeForWidth<2>(nest, src, dst, begin, end); break;
        case 4: RunTransposeForWidth<4>(nest, src, dst, begin, end); break;
        case 8: RunTransposeForWidth<8>(nest, src, dst, begin, end); break;
        case 16: RunTransposeForWidth<16>(nest, src, dst, begin, end); break;
        default: RunRowCopy(nest, src, dst, begin, end); break;
      }
      break;
  }
  // Cache-bypassing stores are weakly ordered: fence them before the caller (or the thread
  // that joins this one) may read the destination.
  if (nest.streaming) hwy::FlushStream();
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_RUN_INL_H_
