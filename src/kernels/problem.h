// The permute problem as the planner sees it: a list of {n, src_stride, dst_stride} dims and
// an element size, folded by small pure stages (SPEC section 8, STYLE "planning as stages").
//
// Dims are listed in destination order, outermost first; strides are in BYTES so that
// widening the element (which changes the unit) keeps every stride meaningful.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "iotx/status.h"

namespace iotx::kernels {


struct Dim {
  int64_t n = 1;           // extent
  int64_t src_stride = 0;  // bytes between consecutive indices in the source
  int64_t dst_stride = 0;  // bytes between consecutive indices in the destination
  friend bool operator==(const Dim&, const Dim&) = default;
};

struct Problem {
  std::vector<Dim> dims;   // destination order, outermost first
  int64_t elem_bytes = 1;  // bytes moved as one unit
  bool empty = false;      // some extent is 0: nothing to move
  friend bool operator==(const Problem&, const Problem&) = default;
};

// dst = ascontiguousarray(transpose(src.reshape(shape), perm)) as a problem in destination
// order. Fails with kNotPermutation, kNegativeDim, kDimOverflow or kInvalidArgument.
Expected<Problem> MakeProblem(std::span<const int64_t> shape, std::span<const int64_t> perm,
                              size_t elem_bytes);

// The same for a source given by strides: element (i_0, ..., i_k) of the source (of `shape`,
// already reshaped) is src_strides[0] * i_0 + ... bytes from the source pointer. Strides may
// be zero (a broadcast view) or negative (a reversed slice); a view numpy or DLPack hands out
// is read in place. Fails as MakeProblem, or kDimOverflow when an offset overflows int64.
Expected<Problem> MakeStridedProblem(std::span<const int64_t> shape,
                                     std::span<const int64_t> src_strides,
                                     std::span<const int64_t> perm, size_t elem_bytes);

// The source bytes a problem reads, [lo, hi) from the source pointer ({0, 0} when empty).
struct ByteRange {
  int64_t lo = 0;
  int64_t hi = 0;
};
ByteRange SourceRange(const Problem& problem);

// Stage 1: removes extent-1 dims (they move nothing). Keeps `empty` problems as they are.
Problem DropUnitDims(Problem problem);
// Stage 2: merges dim i with dim i+1 when they are adjacent in both source and destination.
Problem FuseContiguous(Problem problem);
// Stage 3: folds an innermost dim that stays innermost and contiguous on both sides into the
// element (f32 rows of 16 become 64-byte elements).
Problem WidenElement(Problem problem);
// Stage 4: a strided source may leave no dim whose elements are adjacent in the source (a
// slice with a step on its last axis); the planner's plane needs one as its columns, so an
// extent-1 dim with source stride elem_bytes (and no destination stride) goes in before the
// innermost dim. Dense problems always have one: they pass unchanged.
Problem EnsureSourceColumn(Problem problem);
// Stages 1-4 in order.
Problem Fold(Problem problem);

// Total bytes moved (0 for an empty problem).
int64_t ProblemBytes(const Problem& problem);
// Index of the dim that is innermost (element-contiguous) in the source, or -1 if none.
int SourceInnerDim(const Problem& problem);

// "elem 4 B; dims [n=3 src=2097152 dst=1048576] [n=128 src=4 dst=8192] ..."
std::string ToString(const Problem& problem);

}  // namespace iotx::kernels
