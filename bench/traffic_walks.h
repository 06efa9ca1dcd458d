// The memory traffic of a permute's walks without the permute: what a tile walk and a staged
// walk of a case load and store, each 64-byte line moved whole and unshuffled, so the bytes
// land in the right lines but not in the right places within them. Timed next to iotx and
// memcpy (permute_bench.cc, --traffic), it separates what a layout's access pattern costs on
// a machine from what the kernel's shuffles and bookkeeping add: where iotx runs at the
// speed of its walk's traffic, the pattern, not the kernel, is the limit there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "iotx/status.h"

namespace iotx::bench {

// A permute seen as one plane of tiles: rows along the source dim that is innermost in the
// destination, columns along the source's innermost dim, every other dim an outer loop.
struct TrafficPlane {
  int64_t tile = 0;               // elements per tile side: one 64-byte line of each
  int64_t rows = 0, columns = 0;  // the plane's extents, in elements
  int64_t src_row_stride = 0;     // bytes between the plane's rows in the source
  int64_t dst_column_stride = 0;  // bytes between its columns' lines in the destination
  int64_t element_bytes = 0;
  std::vector<int64_t> outer_extents, outer_src_strides, outer_dst_strides;  // source order
};

// The plane of a permute of `shape` by `perm` (output axis i is source axis perm[i]) with
// elements of `element_bytes` (1 to 64, a power of two). Fails where the layout has no such
// plane: the innermost dim unmoved (a row copy), or a plane side that is not a whole number
// of tiles (the kernel fuses dims or runs partial tiles there, which this walk does not).
Expected<TrafficPlane> PlaneOf(std::span<const int64_t> shape, std::span<const int64_t> perm,
                               int64_t element_bytes);

// Tiles in place, as the kernel's band walk orders them: strips of `strip_rows` rows, each
// walked a column of tiles at a time, top to bottom; each tile loads its source rows' lines
// and stores its destination columns' lines. `src` and `dst` are 64-byte aligned; strip_rows
// is rounded down to whole tiles (at least one).
void TileWalkTraffic(const TrafficPlane& plane, const std::byte* src, std::byte* dst,
                     int64_t strip_rows, bool streaming_stores);

// Staged: blocks of `block_rows` rows x `block_bytes` of each row copied as runs into `stage`
// (block_rows * block_bytes bytes, 64-byte aligned), then copied out of it as the block's
// destination runs, one per column, block_rows elements each. block_rows is rounded down to
// whole tiles and block_bytes to whole lines (at least one of each).
void StagedWalkTraffic(const TrafficPlane& plane, const std::byte* src, std::byte* dst,
                       std::byte* stage, int64_t block_rows, int64_t block_bytes,
                       bool streaming_stores);

}  // namespace iotx::bench
