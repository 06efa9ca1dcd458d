// The tile strategies' translation unit, compiled once per SIMD target (Highway
// foreach_target): kTiles, kStagedTiles, kFusedTiles, kInterleaveRows and kDeinterleaveCols
// for every width of widths.inc. ChooseTilesRun() resolves the target once, at planning.
#include "kernels/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/run-inl.h"
#include "kernels/tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

// Every plane of items [begin, end) through the strategy kStrategy with vector tag D.
template <Strategy kStrategy, size_t kElem, class D>
HWY_NOINLINE void RunTiles(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                           int64_t end) {
  const D d;
  const bool streaming = nest.streaming;
  const int64_t ss = nest.src_row_stride;
  const int64_t ds = nest.dst_row_stride;
  const auto strip_rows = static_cast<size_t>(nest.strip_rows);
  const auto block_cols = static_cast<size_t>(nest.block_cols);
  const auto pitch = static_cast<size_t>(nest.stage_pitch);
  const FusedGeometry fused{nest.rows_inner, ss, nest.src_outer_row_stride,
                            nest.cols_inner, ds, nest.dst_outer_col_stride};
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    RunLoops(nest, ext, s, t, [&](const uint8_t* s2, uint8_t* t2, int64_t rows, int64_t cols) {
      const auto r = static_cast<size_t>(rows);
      const auto c = static_cast<size_t>(cols);
      if constexpr (kStrategy == Strategy::kTiles) {
        TilesPlane<kElem>(d, s2, ss, t2, ds, r, c, strip_rows, streaming);
      } else if constexpr (kStrategy == Strategy::kStagedTiles) {
        StagedPlane<kElem>(d, s2, ss, t2, ds, r, c, strip_rows, block_cols, pitch, streaming);
      } else if constexpr (kStrategy == Strategy::kFusedTiles) {
        FusedPlane<kElem>(d, s2, t2, r, c, fused, strip_rows, block_cols, pitch, streaming);
      } else if constexpr (kStrategy == Strategy::kInterleaveRows) {
        InterleavePlane<kElem>(d, s2, ss, t2, ds, r, c, streaming);
      } else {
        DeinterleavePlane<kElem>(d, s2, ss, t2, ds, r, c, streaming);
      }
    });
  });
  // Cache-bypassing stores are weakly ordered: fence them before the caller (or the thread
  // that joins this one) may read the destination.
  if (streaming) hwy::FlushStream();
}

// The vector tag of `vector_bytes` (the planner's choice, at most the target's width).
template <Strategy kStrategy, size_t kElem>
RunItemsFn RunForVector(int64_t vector_bytes) {
  using T = LaneT<kElem>;
#if HWY_TARGET == HWY_SCALAR
  (void)vector_bytes;
  return &RunTiles<kStrategy, kElem, hn::ScalableTag<T>>;
#elif HWY_HAVE_SCALABLE  // the block-local shuffles assume 128-bit blocks
  (void)vector_bytes;
  return &RunTiles<kStrategy, kElem, hn::Full128<T>>;
#else
  constexpr size_t kFullBytes = hn::MaxLanes(hn::ScalableTag<T>()) * sizeof(T);
  if constexpr (kFullBytes >= 64) {
    if (vector_bytes >= 64) return &RunTiles<kStrategy, kElem, hn::ScalableTag<T>>;
  }
  if constexpr (kFullBytes >= 32) {
    if (vector_bytes >= 32) return &RunTiles<kStrategy, kElem, hn::CappedTag<T, 32 / sizeof(T)>>;
  }
  return &RunTiles<kStrategy, kElem, hn::Full128<T>>;
#endif
}

template <size_t kElem>
RunItemsFn RunForStrategy(Strategy strategy, int64_t vector_bytes) {
  switch (strategy) {
    case Strategy::kStagedTiles: return RunForVector<Strategy::kStagedTiles, kElem>(vector_bytes);
    case Strategy::kFusedTiles: return RunForVector<Strategy::kFusedTiles, kElem>(vector_bytes);
    case Strategy::kInterleaveRows:
      if constexpr (kElem <= 8) return RunForVector<Strategy::kInterleaveRows, kElem>(vector_bytes);
      break;
    case Strategy::kDeinterleaveCols:
      if constexpr (kElem <= 8) return RunForVector<Strategy::kDeinterleaveCols, kElem>(vector_bytes);
      break;
    default: break;
  }
  return RunForVector<Strategy::kTiles, kElem>(vector_bytes);
}

RunItemsFn GetTilesRun(Strategy strategy, int64_t elem_bytes, int64_t vector_bytes) {
  switch (elem_bytes) {
#define IOTX_TILE_WIDTH(bytes) \
  case bytes: return RunForStrategy<bytes>(strategy, vector_bytes);
#include "kernels/widths.inc"
    default: return nullptr;
  }
}

const char* GetTargetName() { return hwy::TargetName(HWY_TARGET); }
size_t GetVectorBytes() { return hn::Lanes(DBytes()); }

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace iotx::kernels {

HWY_EXPORT(GetTilesRun);
HWY_EXPORT(GetTargetName);
HWY_EXPORT(GetVectorBytes);

RunItemsFn ChooseTilesRun(Strategy strategy, int64_t elem_bytes, int64_t vector_bytes) {
  return HWY_DYNAMIC_DISPATCH(GetTilesRun)(strategy, elem_bytes, vector_bytes);
}

const char* ChosenTargetName() { return HWY_DYNAMIC_DISPATCH(GetTargetName)(); }

size_t ChosenVectorBytes() { return HWY_DYNAMIC_DISPATCH(GetVectorBytes)(); }

}  // namespace iotx::kernels
#endif  // HWY_ONCE
