// Execute: the parallel driver. The plan's items are cut into claims (runs of items ending on
// an SBUF partition tile where the plan allows it) and run by ParallelClaims on at most
// `threads` tasks (on the calling oneTBB arena, or the caller's parallel-for): equal shares,
// each task its own first, then helping the others, so a thread that the machine slows down
// simply claims fewer and repeated calls keep each part on the same thread's cache.
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <thread>

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

Claims PlanClaims(const PlanData& d, const ExecuteOptions& options) {
  Claims c;
  const int64_t items = d.nest.items;
  c.count = items;
  // Small outputs stay on the calling thread without asking oneTBB anything.
  const int threads =
      d.bytes < kernels::kParallelMinBytes || items <= 1 ? 1 : ThreadsFor(d.options, options);
  if (threads <= 1) {
    c.unit = items;
    c.count = 1;
    return c;
  }
  // Whole partition tiles per claim, unless that leaves too few claims to share.
  const int64_t align = d.split.align_items;
  if (align > 1 && items / align >= threads) {
    c.unit = align;
    c.count = (items + align - 1) / align;
  }
  c.threads = static_cast<int>(std::min<int64_t>({threads, c.count, kMaxClaimTasks}));
  return c;
}

}  // namespace

int ThreadsFor(const PlanOptions& plan, const ExecuteOptions& call) {
  int cap = plan.max_threads;
  if (call.max_threads > 0) cap = cap > 0 ? std::min(cap, call.max_threads) : call.max_threads;
  if (cap == 1) return 1;  // decided before asking oneTBB anything
  int available = 1;
  if (call.parallel_for != nullptr) {
    available = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  } else {
    available = tbb::this_task_arena::max_concurrency();
  }
  return cap > 0 ? std::min(available, cap) : available;
}

Status CheckExecuteOptions(const ExecuteOptions& options) {
  if (options.max_threads < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "ExecuteOptions::max_threads is " + std::to_string(options.max_threads) +
                    "; expected 0 (the plan's choice), 1 (the calling thread only) or more");
  }
  return Ok();
}

Status RunPlan(const PlanData& d, const uint8_t* src, uint8_t* dst, const ExecuteOptions& options) {
  if (d.bytes == 0) return Ok();
  const Claims claims = PlanClaims(d, options);
  const kernels::Nest& nest = d.nest;
  const kernels::RunItemsFn run = d.run;
  const int64_t items = nest.items;
  if (claims.threads <= 1) {
    run(nest, src, dst, 0, items);
    return Ok();
  }
  const bool all_claimed = ParallelClaims(
      claims.threads, claims.count,
      [&](int64_t c) {
        run(nest, src, dst, c * claims.unit, std::min(items, (c + 1) * claims.unit));
      },
      options.parallel_for, options.parallel_for_context);
  if (!all_claimed) {
    return Fail(ErrorCode::kInvalidArgument,
                "the parallel_for callback returned before running all " +
                    std::to_string(claims.threads) + " tasks; the output is incomplete");
  }
  return Ok();
}

Status Execute(const Plan& plan, const void* src, void* dst) {
  return Execute(plan, src, dst, ExecuteOptions{});
}

Status Execute(const Plan& plan, const void* src, void* dst, const ExecuteOptions& options) {
  const PlanData& d = plan.data();
  IOTX_RETURN_IF_ERROR(CheckExecuteOptions(options));
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
  return RunPlan(d, s, t, options);
}

}  // namespace iotx
