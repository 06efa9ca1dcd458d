// The device's on-chip SBUF geometry and how a permuted output lands on its partitions
// (SPEC section 8, FACTS section 4): the output's leading dim runs across the 128 partitions,
// the rest of each leading-dim row is a partition's free dim.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "iotx/plan.h"

namespace iotx::kernels {

struct SbufGeometry {
  const char* name;              // "trn2"
  const char* core;              // "NeuronCore-v3"
  int64_t partitions;            // partitions the output's leading dim runs across
  int64_t partition_bytes;       // physical bytes per partition
  int64_t usable_bytes;          // bytes per partition the compiler may allocate
};

SbufGeometry GeometryOf(DeviceGeneration device);

struct SbufMapping {
  SbufGeometry geometry;
  int64_t leading = 1;         // output dim 0 (1 for a scalar)
  int64_t row_bytes = 0;       // bytes of one leading-dim row (a partition's free extent)
  int64_t tiles = 0;           // partition tiles: ceil(leading / 128)
  int64_t last_tile_rows = 0;  // rows in the last tile (<= 128)
  // Whole leading-dim rows one partition can hold at once (0: a row exceeds the partition).
  int64_t rows_per_partition = 0;
};

// Maps dst = transpose(src.reshape(shape), perm) of elem_bytes elements onto SBUF.
SbufMapping MapOutput(std::span<const int64_t> shape, std::span<const int64_t> perm,
                      int64_t elem_bytes, DeviceGeneration device);

std::string ToString(const SbufMapping& mapping);

}  // namespace iotx::kernels
