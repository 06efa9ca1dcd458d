// Execute: the parallel driver. Items of the plan's nest are claimed from a shared counter by
// at most `threads` oneTBB tasks on the calling arena, so a thread that the machine slows down
// simply claims fewer; each claim is a run of items ending on an SBUF partition tile where the
// plan allows it.
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/overlap.h"
#include "core/parallel.h"
#include "iotx/plan.h"
#include "kernels/plan_impl.h"

namespace iotx {
namespace {

struct Claims {
  int64_t unit = 1;   // items per claim
  int64_t count = 1;  // claims
  int threads = 1;
};

Claims PlanClaims(const PlanData& d) {
  Claims c;
  const int64_t items = d.nest.items;
  c.count = items;
  if (d.bytes < kernels::kParallelMinBytes || items <= 1) {
    c.unit = items;
    c.count = 1;
    return c;
  }
  int threads = tbb::this_task_arena::max_concurrency();
  if (d.options.max_threads > 0) threads = std::min(threads, d.options.max_threads);
  // Whole partition tiles per claim, unless that leaves too few claims to share.
  const int64_t align = d.split.align_items;
  if (align > 1 && items / align >= threads) {
    c.unit = align;
    c.count = (items + align - 1) / align;
  }
  c.threads = static_cast<int>(std::min<int64_t>(threads, c.count));
  return c;
}

}  // namespace

Status Execute(const Plan& plan, const void* src, void* dst) {
  const PlanData& d = plan.data();
  if (d.bytes == 0) return Ok();
  if (src == nullptr || dst == nullptr) {
    return Fail(ErrorCode::kInvalidArgument, "Execute: null buffer for a plan that moves bytes");
  }
  const auto* s = static_cast<const uint8_t*>(src);
  auto* t = static_cast<uint8_t*>(dst);
  // A strided plan's source range is not the destination's (plan.h).
  if (RangesOverlap(s + d.src_range.lo, static_cast<size_t>(d.src_range.hi - d.src_range.lo), t,
                    static_cast<size_t>(d.bytes))) {
    return Fail(ErrorCode::kInvalidArgument, "Execute: source and destination buffers overlap");
  }

  const Claims claims = PlanClaims(d);
  const kernels::Nest& nest = d.nest;
  const kernels::RunItemsFn run = d.run;
  const int64_t items = nest.items;
  if (claims.threads <= 1) {
    run(nest, s, t, 0, items);
    return Ok();
  }
  std::atomic<int64_t> next{0};
  ParallelForEach(claims.threads, [&](int) {
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= claims.count) return;
      run(nest, s, t, c * claims.unit, std::min(items, (c + 1) * claims.unit));
    }
  });
  return Ok();
}

}  // namespace iotx
