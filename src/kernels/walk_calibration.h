// Which walk a tile plane past the cache takes, measured once per machine beside the
// streaming threshold (machine.cc) and kept with it (calibration_cache.h).
//
// A plane whose output bypasses the cache reads each source row a vector at a time. Walked in
// tall strips band by band (hundreds of rows, one vector of each per band), its reads are
// hundreds of streams at once, which AMD Zen 5 serves well (its L3 keeps what the L2 drops);
// on an Intel Xeon of the same AVX-512 width the same walk ran at 0.21-0.49 of memcpy where
// strips of 32 rows, 1 KiB of each source row at a time, ran at 0.67-1.4 (f32 8192^2, bf16
// 8192^2, i8 16384 x 8192, f64 4096^2, c128 2048^2; docs/performance.md, sixteenth look). No
// cache size or vector width tells the two machines apart, so the calibration times the
// kernel's own walks on both and keeps the faster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/machine.h"

namespace iotx::kernels {

struct WalkChoice {
  bool short_strips = false;
  std::string why;  // the measured rates, for `iotx plan`
};

// Times f32 transposes of `bytes` (source rows a power of two apart and not) with both
// walks and cache-bypassing stores, between `src` and `dst` (each at least `bytes`, 64-byte
// aligned, already touched; both are overwritten), on the calling thread. Short strips are
// kept only when they are at least a tenth faster over both layouts: a noisy measurement
// keeps the established walk.
WalkChoice CalibrateDramWalk(const Machine& machine, uint8_t* src, uint8_t* dst, size_t bytes);

}  // namespace iotx::kernels
