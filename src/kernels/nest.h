// The loop nest a plan hands to the per-target kernels: plain data, no Highway types, so the
// planner (generic C++) and the kernels (compiled once per SIMD target) share it.
//
// Execution model (STYLE: micro-kernel / macro loop / driver):
//   driver  items enumerate the driver dims (outer -> inner, row-major); items are independent
//           and each writes one contiguous range of the destination, in destination order.
//   loops   per item, the kernel loops (outer -> inner) walk the remaining dims; one of them
//           walks blocks of `row_block` tile rows.
//   tile    per loop position, a strip of up to `row_block` rows x `cols` columns: rows are the
//           destination-innermost dim (consecutive rows in src, consecutive elements in dst),
//           columns the source-innermost dim (consecutive elements in src, rows in dst).
#pragma once

#include <array>
#include <cstdint>

#include "iotx/dims.h"

#include "kernels/problem.h"

namespace iotx::kernels {

// Most destination lines a streaming transpose writes back to back per row (see
// StreamLines in planner.h for how many it uses).
inline constexpr int64_t kMaxStreamLines = 4;

enum class KernelKind : uint8_t {
  kCopy,       // one contiguous block: the items are byte ranges of it
  kRowCopy,    // the innermost dim is unmoved: rows of elem_bytes copied to new places
  kTranspose,  // the innermost dim moves: in-register tile transposes of 1..16-byte elements
};

struct LoopDim {
  int64_t n = 1;
  int64_t src_stride = 0;  // bytes
  int64_t dst_stride = 0;  // bytes
};

// Which kernel extent the innermost driver dim cuts into blocks (its last block may be short).
enum class Blocked : uint8_t { kNone, kLoop, kRows, kCols, kBytes };

struct Nest {
  KernelKind kind = KernelKind::kCopy;
  int64_t elem_bytes = 1;
  bool streaming = false;  // cache-bypassing stores for full, aligned 64-byte lines

  int driver_rank = 0;
  std::array<LoopDim, kMaxRank> driver{};
  int64_t items = 1;
  Blocked blocked = Blocked::kNone;
  int blocked_loop = -1;     // with Blocked::kLoop: index into `loops`
  int64_t block = 0;         // extent of one block
  int64_t blocked_full = 0;  // extent of the blocked dim before blocking

  int loop_rank = 0;
  std::array<LoopDim, kMaxRank + 1> loops{};
  int row_block_loop = -1;  // index into `loops` of the row-block loop (its n is derived)

  int64_t rows = 1;
  int64_t src_row_stride = 0;
  int64_t cols = 1;
  int64_t dst_row_stride = 0;
  int64_t row_block = 1;
  int64_t stream_lines = 1;  // kTranspose with streaming: lines per destination row and strip
  int64_t copy_bytes = 0;  // kCopy: total bytes
};

}  // namespace iotx::kernels
