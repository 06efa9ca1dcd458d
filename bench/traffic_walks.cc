// The traffic walks of traffic_walks.h, compiled once per SIMD target (Highway foreach_target)
// so their lines move with the widest vectors and cache-bypassing stores the machine has, as
// the kernel's do.
#include "traffic_walks.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "traffic_walks.cc"
#include <algorithm>

#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int64_t kLine = 64;

// One aligned 64-byte line, in as many vectors as the target needs.
template <bool kStream>
HWY_INLINE void MoveLine(const uint8_t* from, uint8_t* to) {
  const hn::CappedTag<uint8_t, kLine> d;
  for (size_t i = 0; i < static_cast<size_t>(kLine); i += hn::Lanes(d)) {
    const auto v = hn::Load(d, from + i);
    if constexpr (kStream) {
      hn::Stream(v, d, to + i);
    } else {
      hn::Store(v, d, to + i);
    }
  }
}

// Calls visit(src offset, dst offset) for every position of the plane's outer dims.
template <class Visit>
void ForEachPlane(const TrafficPlane& p, const Visit& visit) {
  const size_t n = p.outer_extents.size();
  std::vector<int64_t> index(n, 0);
  int64_t s = 0, t = 0;
  while (true) {
    visit(s, t);
    size_t k = n;
    for (; k > 0; --k) {
      const size_t i = k - 1;
      if (++index[i] < p.outer_extents[i]) {
        s += p.outer_src_strides[i];
        t += p.outer_dst_strides[i];
        break;
      }
      s -= p.outer_src_strides[i] * (p.outer_extents[i] - 1);
      t -= p.outer_dst_strides[i] * (p.outer_extents[i] - 1);
      index[i] = 0;
    }
    if (k == 0) return;
  }
}

template <bool kStream>
void TileWalk(const TrafficPlane& p, const uint8_t* src, uint8_t* dst, int64_t strip_rows) {
  const int64_t e = p.element_bytes, srs = p.src_row_stride, dcs = p.dst_column_stride;
  ForEachPlane(p, [&](int64_t so, int64_t to) {
    for (int64_t r0 = 0; r0 < p.rows; r0 += strip_rows) {
      const int64_t r1 = std::min(p.rows, r0 + strip_rows);
      for (int64_t c = 0; c < p.columns; c += p.tile) {
        for (int64_t r = r0; r < r1; r += p.tile) {
          const uint8_t* s = src + so + r * srs + c * e;
          uint8_t* t = dst + to + c * dcs + r * e;
          for (int64_t i = 0; i < p.tile; ++i) MoveLine<kStream>(s + i * srs, t + i * dcs);
        }
      }
    }
  });
}

template <bool kStream>
void StagedWalk(const TrafficPlane& p, const uint8_t* src, uint8_t* dst, uint8_t* stage,
                int64_t block_rows, int64_t block_bytes) {
  const int64_t e = p.element_bytes, srs = p.src_row_stride, dcs = p.dst_column_stride;
  const int64_t block_columns = block_bytes / e;
  ForEachPlane(p, [&](int64_t so, int64_t to) {
    for (int64_t r0 = 0; r0 < p.rows; r0 += block_rows) {
      const int64_t rows = std::min(block_rows, p.rows - r0);
      for (int64_t c0 = 0; c0 < p.columns; c0 += block_columns) {
        const int64_t run_in = std::min(block_columns, p.columns - c0) * e, run_out = rows * e;
        for (int64_t r = 0; r < rows; ++r) {
          const uint8_t* s = src + so + (r0 + r) * srs + c0 * e;
          for (int64_t x = 0; x < run_in; x += kLine)
            MoveLine<false>(s + x, stage + r * run_in + x);
        }
        for (int64_t c = 0; c < run_in / e; ++c) {
          uint8_t* t = dst + to + (c0 + c) * dcs + r0 * e;
          for (int64_t x = 0; x < run_out; x += kLine) {
            MoveLine<kStream>(stage + c * run_out + x, t + x);
          }
        }
      }
    }
  });
}

void RunTileWalk(const TrafficPlane& p, const uint8_t* src, uint8_t* dst, int64_t strip_rows,
                 bool streaming) {
  if (streaming) {
    TileWalk<true>(p, src, dst, strip_rows);
    hwy::FlushStream();
  } else {
    TileWalk<false>(p, src, dst, strip_rows);
  }
}

void RunStagedWalk(const TrafficPlane& p, const uint8_t* src, uint8_t* dst, uint8_t* stage,
                   int64_t block_rows, int64_t block_bytes, bool streaming) {
  if (streaming) {
    StagedWalk<true>(p, src, dst, stage, block_rows, block_bytes);
    hwy::FlushStream();
  } else {
    StagedWalk<false>(p, src, dst, stage, block_rows, block_bytes);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <fmt/format.h>

namespace iotx::bench {

HWY_EXPORT(RunTileWalk);
HWY_EXPORT(RunStagedWalk);

Expected<TrafficPlane> PlaneOf(std::span<const int64_t> shape, std::span<const int64_t> perm,
                               int64_t element_bytes) {
  const size_t n = shape.size();
  if (n < 2 || perm.size() != n || element_bytes < 1 || element_bytes > 64 ||
      (element_bytes & (element_bytes - 1)) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "a traffic plane needs a permute of at least 2 dims and a power-of-two element "
                "of 1 to 64 bytes");
  }
  std::vector<bool> seen(n, false);
  for (int64_t axis : perm) {
    if (axis < 0 || static_cast<size_t>(axis) >= n || seen[static_cast<size_t>(axis)]) {
      return Fail(ErrorCode::kInvalidArgument, "the transpose is not a permutation of the dims");
    }
    seen[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> src_stride(n), dst_stride(n);
  int64_t bytes = element_bytes;
  for (size_t i = n; i-- > 0;) {
    src_stride[i] = bytes;
    bytes *= shape[i];
  }
  bytes = element_bytes;
  for (size_t j = n; j-- > 0;) {
    dst_stride[static_cast<size_t>(perm[j])] = bytes;
    bytes *= shape[static_cast<size_t>(perm[j])];
  }
  const auto column_dim = n - 1, row_dim = static_cast<size_t>(perm[n - 1]);
  TrafficPlane p;
  p.element_bytes = element_bytes;
  p.tile = 64 / element_bytes;
  p.rows = shape[row_dim];
  p.columns = shape[column_dim];
  if (row_dim == column_dim) {
    return Fail(ErrorCode::kInvalidArgument,
                "the innermost dim stays innermost: a row copy, not a plane of tiles");
  }
  if (p.rows % p.tile != 0 || p.columns % p.tile != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("a plane of {} x {} is not whole tiles of {} x {}", p.rows, p.columns,
                            p.tile, p.tile));
  }
  p.src_row_stride = src_stride[row_dim];
  p.dst_column_stride = dst_stride[column_dim];
  for (size_t i = 0; i < n; ++i) {
    if (i == row_dim || i == column_dim || shape[i] == 1) continue;
    p.outer_extents.push_back(shape[i]);
    p.outer_src_strides.push_back(src_stride[i]);
    p.outer_dst_strides.push_back(dst_stride[i]);
  }
  return p;
}

namespace {

// `n` rounded down to whole tiles (lines), at least one: the walks never move part of a line.
int64_t WholeTiles(int64_t n, int64_t tile) { return std::max(tile, n / tile * tile); }

}  // namespace

void TileWalkTraffic(const TrafficPlane& plane, const std::byte* src, std::byte* dst,
                     int64_t strip_rows, bool streaming_stores) {
  HWY_DYNAMIC_DISPATCH(RunTileWalk)
  (plane, reinterpret_cast<const uint8_t*>(src), reinterpret_cast<uint8_t*>(dst),
   WholeTiles(strip_rows, plane.tile), streaming_stores);
}

void StagedWalkTraffic(const TrafficPlane& plane, const std::byte* src, std::byte* dst,
                       std::byte* stage, int64_t block_rows, int64_t block_bytes,
                       bool streaming_stores) {
  HWY_DYNAMIC_DISPATCH(RunStagedWalk)
  (plane, reinterpret_cast<const uint8_t*>(src), reinterpret_cast<uint8_t*>(dst),
   reinterpret_cast<uint8_t*>(stage), WholeTiles(block_rows, plane.tile),
   WholeTiles(block_bytes, 64), streaming_stores);
}

}  // namespace iotx::bench
#endif  // HWY_ONCE
