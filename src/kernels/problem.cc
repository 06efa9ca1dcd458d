#include "kernels/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "iotx/dims.h"

namespace iotx::kernels {

Expected<Problem> MakeProblem(std::span<const int64_t> shape, std::span<const int64_t> perm,
                              size_t elem_bytes) {
  if (elem_bytes == 0) return Fail(ErrorCode::kInvalidArgument, "element size must be at least 1 byte");
  if (shape.size() > kMaxRank) {
    return Fail(ErrorCode::kUnsupported,
                fmt::format("rank {} exceeds the kernel's maximum of {}", shape.size(), kMaxRank));
  }
  if (perm.size() != shape.size()) {
    return Fail(ErrorCode::kNotPermutation,
                fmt::format("transpose {} has {} axes but the shape {} has {}", iotx::ToString(perm),
                            perm.size(), iotx::ToString(shape), shape.size()));
  }
  std::vector<bool> seen(shape.size(), false);
  for (int64_t axis : perm) {
    if (axis < 0 || static_cast<size_t>(axis) >= shape.size() || seen[static_cast<size_t>(axis)]) {
      return Fail(ErrorCode::kNotPermutation,
                  fmt::format("transpose {} is not a permutation of 0..{}", iotx::ToString(perm),
                              static_cast<int64_t>(shape.size()) - 1));
    }
    seen[static_cast<size_t>(axis)] = true;
  }
  for (int64_t n : shape) {
    if (n < 0) return Fail(ErrorCode::kNegativeDim, fmt::format("shape {} has a negative dimension", iotx::ToString(shape)));
  }
  // The bytes the extents span, zeros left out as numpy counts them (an empty array's other
  // extents must still fit), at most 2^62: every size, stride and rounding the planner and the
  // plan's description compute then fits int64 with room to round up.
  constexpr int64_t kMostBytes = int64_t{1} << 62;
  int64_t span = static_cast<int64_t>(elem_bytes);
  bool too_large = false;
  for (int64_t n : shape) {
    if (n > 0) too_large = too_large || __builtin_mul_overflow(span, n, &span) || span > kMostBytes;
  }
  if (too_large) {
    return Fail(ErrorCode::kDimOverflow,
                fmt::format("shape {} with {}-byte elements spans more than 2^62 bytes (zero "
                            "extents left out, as numpy counts them)",
                            iotx::ToString(shape), elem_bytes));
  }
  const std::optional<int64_t> count = CheckedProduct(shape);

  Problem problem;
  problem.elem_bytes = static_cast<int64_t>(elem_bytes);
  problem.empty = *count == 0;
  const size_t rank = shape.size();
  // Source strides of each source axis (row-major); destination strides follow dst order.
  std::vector<int64_t> src_stride(rank);
  int64_t stride = problem.elem_bytes;
  for (size_t i = rank; i-- > 0;) {
    src_stride[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  problem.dims.resize(rank);
  stride = problem.elem_bytes;
  for (size_t j = rank; j-- > 0;) {
    const auto axis = static_cast<size_t>(perm[j]);
    problem.dims[j] = Dim{shape[axis], src_stride[axis], stride};
    stride *= std::max<int64_t>(shape[axis], 1);
  }
  return problem;
}

Expected<Problem> MakeStridedProblem(std::span<const int64_t> shape,
                                     std::span<const int64_t> src_strides,
                                     std::span<const int64_t> perm, size_t elem_bytes) {
  if (src_strides.size() != shape.size()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("source strides {} have {} entries but the shape {} has {}",
                            iotx::ToString(src_strides), src_strides.size(), iotx::ToString(shape),
                            shape.size()));
  }
  IOTX_ASSIGN_OR_RETURN(Problem problem, MakeProblem(shape, perm, elem_bytes));
  // The farthest offset either way must fit in int64: sum of |stride| * (n - 1).
  int64_t reach = static_cast<int64_t>(elem_bytes);
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t step = 0;
    const int64_t magnitude = src_strides[i] < 0 ? -src_strides[i] : src_strides[i];
    if (src_strides[i] == std::numeric_limits<int64_t>::min() ||
        __builtin_mul_overflow(magnitude, std::max<int64_t>(shape[i] - 1, 0), &step) ||
        __builtin_add_overflow(reach, step, &reach)) {
      return Fail(ErrorCode::kDimOverflow,
                  fmt::format("source strides {} of shape {} reach past int64 byte offsets",
                              iotx::ToString(src_strides), iotx::ToString(shape)));
    }
  }
  for (size_t j = 0; j < perm.size(); ++j) {
    problem.dims[j].src_stride = src_strides[static_cast<size_t>(perm[j])];
  }
  return problem;
}

ByteRange SourceRange(const Problem& problem) {
  if (problem.empty) return {};
  ByteRange range{0, problem.elem_bytes};
  for (const Dim& d : problem.dims) {
    const int64_t far = (d.n - 1) * d.src_stride;
    if (far < 0) range.lo += far;
    else range.hi += far;
  }
  return range;
}

Problem DropUnitDims(Problem problem) {
  if (problem.empty) return problem;
  std::erase_if(problem.dims, [](const Dim& d) { return d.n == 1; });
  return problem;
}

Problem FuseContiguous(Problem problem) {
  if (problem.empty || problem.dims.empty()) return problem;
  std::vector<Dim> fused;
  fused.reserve(problem.dims.size());
  fused.push_back(problem.dims.front());
  for (size_t i = 1; i < problem.dims.size(); ++i) {
    Dim& outer = fused.back();
    const Dim& inner = problem.dims[i];
    if (outer.src_stride == inner.n * inner.src_stride &&
        outer.dst_stride == inner.n * inner.dst_stride) {
      outer = Dim{outer.n * inner.n, inner.src_stride, inner.dst_stride};
    } else {
      fused.push_back(inner);
    }
  }
  problem.dims = std::move(fused);
  return problem;
}

Problem WidenElement(Problem problem) {
  if (problem.empty) return problem;
  while (!problem.dims.empty()) {
    const Dim& inner = problem.dims.back();
    if (inner.src_stride != problem.elem_bytes || inner.dst_stride != problem.elem_bytes) break;
    problem.elem_bytes *= inner.n;
    problem.dims.pop_back();
  }
  return problem;
}

Problem EnsureSourceColumn(Problem problem) {
  if (problem.empty || problem.dims.empty() || SourceInnerDim(problem) >= 0) return problem;
  problem.dims.insert(problem.dims.end() - 1, Dim{1, problem.elem_bytes, 0});
  return problem;
}

Problem Fold(Problem problem) {
  return EnsureSourceColumn(WidenElement(FuseContiguous(DropUnitDims(std::move(problem)))));
}

int64_t ProblemBytes(const Problem& problem) {
  if (problem.empty) return 0;
  int64_t bytes = problem.elem_bytes;
  for (const Dim& d : problem.dims) bytes *= d.n;
  return bytes;
}

int SourceInnerDim(const Problem& problem) {
  for (size_t i = 0; i < problem.dims.size(); ++i) {
    if (problem.dims[i].src_stride == problem.elem_bytes) return static_cast<int>(i);
  }
  return -1;
}

std::string ToString(const Problem& problem) {
  std::string out = fmt::format("elem {} B;", problem.elem_bytes);
  if (problem.empty) return out + " empty (a zero extent)";
  if (problem.dims.empty()) return out + " no dims (one contiguous block)";
  out += " dims";
  for (const Dim& d : problem.dims) {
    out += fmt::format(" [n={} src={} dst={}]", d.n, d.src_stride, d.dst_stride);
  }
  return out;
}

}  // namespace iotx::kernels
