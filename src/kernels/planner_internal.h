// What the planner's stages (planner_*.cc) share: the measures of a folded problem and of
// the machine that more than one stage reads. Internal to the planner; planner.h is the
// stages' interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "kernels/machine.h"
#include "kernels/nest.h"
#include "kernels/planner.h"
#include "kernels/problem.h"

namespace iotx::kernels {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether the machine's dispatch runs an AVX-512 target (Highway's AVX3 family), whose byte
// masks and lane permutes some walks need (HalvesByteTiles, BandWalkRealigns in nest.h).
inline bool MachineAvx512(const Machine& m) {
  return std::string_view(m.target).starts_with("AVX3");
}
inline int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// The pitch of a stage whose rows hold `bytes` each: whole lines, an odd number of them, so
// that consecutive rows spread over every L1 set instead of sharing a few.
inline int64_t OddLinePitch(int64_t bytes) {
  int64_t lines = CeilDiv(bytes, kLineBytes);
  if (lines % 2 == 0) ++lines;
  return lines * kLineBytes;
}

inline const Dim& RowsDim(const Problem& p) { return p.dims.back(); }
inline const Dim& ColsDim(const Problem& p) {
  return p.dims[static_cast<size_t>(SourceInnerDim(p))];
}

// The vector a band of columns uses: the widest the target has that the columns fill (narrow
// planes would otherwise run only through the staged edge path).
inline int64_t BandVectorBytes(int64_t col_bytes, const Machine& m) {
  for (int64_t v = m.vector_bytes; v > 16; v /= 2) {
    if (col_bytes >= v) return v;
  }
  return 16;
}

inline int64_t TileRows(int64_t e) { return std::max<int64_t>(1, 64 / e); }

// The rows of a band walk's strip: one band reads strip rows source lines of one vector each,
// and half the L1 holds them and the lines the hardware prefetches for the next band (768^2
// f32 in cache: bands of 64 rows 0.72x memcpy, 384 rows 0.70-0.77; DRAM 8000^2: 64 rows
// 0.74, 384 rows 0.84-0.85).
inline int64_t BandStripRows(int64_t tile_rows, int64_t vector_bytes, const Machine& m) {
  return std::max(tile_rows, m.l1d_bytes / (2 * vector_bytes) / tile_rows * tile_rows);
}

inline bool IsTilePlane(const Problem& p) {
  return !p.dims.empty() && IsTileWidth(p.elem_bytes) && SourceInnerDim(p) >= 0 &&
         SourceInnerDim(p) != static_cast<int>(p.dims.size()) - 1;
}

// The dims a fused plane joins to its rows (rows2, then rows3 continuing them further) and to
// its columns (cols2), -1 where none does, and the fused plane's extents.
struct Fusion {
  int rows2 = -1, cols2 = -1, rows3 = -1;
  int64_t rows = 0, cols = 0;  // the fused extents
};

// The dims that join a plane's rows and columns into a fused plane (planner_strategy.cc), if
// any: Fusion{} where none does.
Fusion FindFusion(const Problem& p, const Machine& m);

// With cache-bypassing stores, whether a walk of `rows` rows stages its destination runs:
// the rows are not whole lines apart (`cols`' destination stride) and longer than a strip of
// `strip_rows` (planner_strategy.cc).
bool StagesStreamingRuns(const Dim& cols, int64_t rows, int64_t strip_rows);

// Whether a band walk of `p` on vectors of `vector_bytes` realigns its destination rows
// (Tile::realign_rows): cache-bypassing stores, an output of at least
// Machine::realign_rows_bytes, and rows BandWalkRealigns (nest.h) takes.
bool RealignsRows(const Problem& p, const Machine& m, int64_t vector_bytes, bool streaming);

}  // namespace iotx::kernels
