// ExecuteRange: the bytes [offset, offset + length) of a plan's output, for runtimes that feed
// a device in DMA-sized pieces.
//
// The output is dense in destination order, so a contiguous range of it is a union of at most
// 2 * rank + 1 boxes: a fixed prefix of outer indices, one dim cut to a sub-range, the inner
// dims whole (the classic decomposition of a row-major interval). Each box is itself a permute
// problem with the whole problem's strides and offset bases; it is folded and planned by the
// same stages as MakePlan (PlanStages) and run by the same driver (RunPlan), so each range
// costs about its share of the whole. The folded element is spelled out as an innermost dim of
// single bytes first, so a range may start or end inside an element; folding joins the bytes
// back into wide elements wherever a box holds whole ones.
//
// A box that fixes the source-innermost dim has no contiguous source run left: each of its
// elements is a read of its own. The planner's kernels need a source-contiguous dim, so such
// boxes are gathered by a plain loop below: the reads, one cache line per element, not the
// loop, take the time, which is why RangeGranule tells callers how thick a range should be.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "iotx/plan.h"
#include "kernels/plan_impl.h"

namespace iotx {
namespace {

using kernels::Dim;
using kernels::Problem;

// Pieces of a range up to this size use regular stores unless the plan forces streaming: a
// range is what the caller hands to the DMA next, so it should stay in cache, and a thin box
// writes short runs to many destination rows, which cache-bypassing stores handle badly.
// Measured on 8192^2 f32 `1,0` fed in 1 MiB ranges (32 output rows of 32 KiB each), 1 thread,
// same run: regular stores 2.79 GB/s, streaming 1.54 GB/s; 2 MiB ranges 3.12 vs 2.55; from
// 16 MiB on the two were within noise, so larger pieces keep the planner's choice.
constexpr int64_t kRegularStoresBoxBytes = 8 << 20;

// One element of `bytes` bytes, with the width known at compile time where it is common.
inline void CopyElement(const uint8_t* src, uint8_t* dst, int64_t bytes) {
  switch (bytes) {
    case 1: *dst = *src; return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, static_cast<size_t>(bytes)); return;
  }
}

// Elements [begin, end) of dim 0 of a folded box without a source-contiguous dim; dst is the
// box's dense destination.
void Gather(const Problem& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end) {
  const int m = static_cast<int>(p.dims.size());
  const int64_t e = p.elem_bytes;
  const Dim& inner = p.dims.back();
  if (m == 1) {
    for (int64_t i = begin; i < end; ++i) {
      CopyElement(src + i * inner.src_stride, dst + i * inner.dst_stride, e);
    }
    return;
  }
  // Odometer over dims 0..m-2 (dim 0 limited to [begin, end)), inner dim in the loop.
  int64_t idx[kMaxRank + 2] = {};
  idx[0] = begin;
  const uint8_t* s = src + begin * p.dims[0].src_stride;
  uint8_t* t = dst + begin * p.dims[0].dst_stride;
  for (;;) {
    for (int64_t i = 0; i < inner.n; ++i) {
      CopyElement(s + i * inner.src_stride, t + i * inner.dst_stride, e);
    }
    int k = m - 2;
    for (; k >= 0; --k) {
      const Dim& d = p.dims[static_cast<size_t>(k)];
      s += d.src_stride;
      t += d.dst_stride;
      if (++idx[k] < (k == 0 ? end : d.n)) break;
      if (k == 0) return;
      s -= d.n * d.src_stride;
      t -= d.n * d.dst_stride;
      idx[k] = 0;
    }
  }
}

// Runs one box: `box` is unfolded (bytes as elements), src and dst point at its first element.
Status RunBox(const PlanData& whole, Problem box, const uint8_t* src, uint8_t* dst,
              const ExecuteOptions& options) {
  Problem folded = kernels::Fold(box);
  const int64_t bytes = kernels::ProblemBytes(folded);
  if (bytes == 0) return Ok();
  // A contiguous run small enough for one thread: no plan needed.
  if (folded.dims.empty() && bytes < kernels::kParallelMinBytes) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return Ok();
  }
  if (!folded.dims.empty() && kernels::SourceInnerDim(folded) < 0) {
    const int64_t n0 = folded.dims.front().n;
    const int threads =
        bytes < kernels::kParallelMinBytes ? 1 : ThreadsFor(whole.options, options);
    const int tasks = static_cast<int>(std::min<int64_t>({threads, n0, kMaxClaimTasks}));
    if (tasks <= 1) {
      Gather(folded, src, dst, 0, n0);
      return Ok();
    }
    // Claims of dim-0 slices, run as RunPlan runs its items.
    const int64_t per_claim = std::max<int64_t>(1, n0 / (4 * tasks));
    const int64_t claims = (n0 + per_claim - 1) / per_claim;
    const bool all_claimed = ParallelClaims(
        tasks, claims,
        [&](int64_t c) {
          Gather(folded, src, dst, c * per_claim, std::min(n0, (c + 1) * per_claim));
        },
        options.parallel_for, options.parallel_for_context);
    if (!all_claimed) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the parallel_for callback returned before running all " +
                      std::to_string(tasks) + " tasks; the output is incomplete");
    }
    return Ok();
  }
  PlanData d;
  d.options = whole.options;
  // The box is no output of its own to map onto the device: one partition tile.
  d.sbuf.geometry = whole.sbuf.geometry;
  d.sbuf.leading = 1;
  if (d.options.stores == PlanOptions::Stores::kAuto && bytes <= kRegularStoresBoxBytes) {
    d.options.stores = PlanOptions::Stores::kRegular;
  }
  // Items sized for the threads this call may use; a call limited to the calling thread (or
  // to the caller's pool) also keeps the planner from asking oneTBB for its concurrency.
  if (options.max_threads > 0 || options.parallel_for != nullptr) {
    d.options.max_threads = ThreadsFor(whole.options, options);
  }
  IOTX_RETURN_IF_ERROR(PlanStages(std::move(box), d));
  return RunPlan(d, src, dst, options);
}

}  // namespace

Status ExecuteRange(const Plan& plan, const void* src, void* dst, size_t offset, size_t length,
                    const ExecuteOptions& options) {
  const PlanData& d = plan.data();
  IOTX_RETURN_IF_ERROR(CheckExecuteOptions(options));
  const auto total = static_cast<size_t>(d.bytes);
  if (offset > total || length > total - offset) {
    return Fail(ErrorCode::kInvalidArgument,
                "ExecuteRange: bytes [" + std::to_string(offset) + ", " +
                    (length > SIZE_MAX - offset ? std::string("beyond SIZE_MAX")
                                                : std::to_string(offset + length)) +
                    ") are not within the plan's " + std::to_string(total) + "-byte output");
  }
  if (d.strided_source) {
    // Its boxes and overlap check assume a dense source (plan.h).
    return Fail(ErrorCode::kUnsupported, "ExecuteRange: a plan of a strided source runs whole (Execute)");
  }
  if (length == 0) return Ok();
  if (src == nullptr || dst == nullptr) {
    return Fail(ErrorCode::kInvalidArgument, "ExecuteRange: null buffer for a non-empty range");
  }
  const auto* s = static_cast<const uint8_t*>(src);
  auto* t = static_cast<uint8_t*>(dst);
  const auto su = reinterpret_cast<uintptr_t>(s);
  const auto tu = reinterpret_cast<uintptr_t>(t);
  if (su < tu + length && tu < su + total) {
    return Fail(ErrorCode::kInvalidArgument,
                "ExecuteRange: the destination overlaps the source");
  }

  // The folded problem with its element as an innermost dim of bytes.
  const Problem& folded = d.folded;
  std::vector<Dim> dims = folded.dims;
  dims.push_back(Dim{folded.elem_bytes, 1, 1});
  const int m = static_cast<int>(dims.size());
  // Destination bytes per index of each dim (dense: the output is in destination order).
  std::vector<int64_t> extent(static_cast<size_t>(m));
  int64_t stride = 1;
  for (int i = m - 1; i >= 0; --i) {
    extent[static_cast<size_t>(i)] = stride;
    stride *= dims[static_cast<size_t>(i)].n;
  }

  auto k = static_cast<int64_t>(offset);
  const auto end = static_cast<int64_t>(offset + length);
  while (k < end) {
    // The outermost dim j whose whole indices start at k and fit before `end`: the largest box.
    int j = 0;
    while (k % extent[static_cast<size_t>(j)] != 0 || k + extent[static_cast<size_t>(j)] > end) ++j;
    const Dim& dj = dims[static_cast<size_t>(j)];
    const int64_t ej = extent[static_cast<size_t>(j)];
    const int64_t first = (k / ej) % dj.n;
    const int64_t count = std::min((end - k) / ej, dj.n - first);
    int64_t src_off = first * dj.src_stride;
    for (int i = 0; i < j; ++i) {
      const Dim& di = dims[static_cast<size_t>(i)];
      src_off += ((k / extent[static_cast<size_t>(i)]) % di.n) * di.src_stride;
    }
    Problem box;
    box.elem_bytes = 1;
    box.dims.assign(dims.begin() + j, dims.end());
    box.dims.front().n = count;
    IOTX_RETURN_IF_ERROR(RunBox(d, std::move(box), s + src_off,
                                t + (k - static_cast<int64_t>(offset)), options));
    k += count * ej;
  }
  return Ok();
}

size_t RangeGranule(const Plan& plan) {
  const Problem& folded = plan.data().folded;
  const int inner = kernels::SourceInnerDim(folded);
  if (folded.empty || folded.dims.empty() || inner < 0) return 1;
  const int64_t e = folded.elem_bytes;
  const Dim& d = folded.dims[static_cast<size_t>(inner)];
  if (e >= 64) return static_cast<size_t>(e);
  const int64_t indices = std::min<int64_t>(d.n, (64 + e - 1) / e);
  return static_cast<size_t>(indices * d.dst_stride);
}

}  // namespace iotx
