// The definition of iotx::Plan (declared opaque in include/iotx/plan.h): everything MakePlan
// decided, immutable after construction. Tools, tests and benchmarks may read it.
#pragma once

#include <cstdint>
#include <string>

#include "iotx/dims.h"
#include "iotx/plan.h"
#include "kernels/dispatch.h"
#include "kernels/machine.h"
#include "kernels/nest.h"
#include "kernels/planner.h"
#include "kernels/problem.h"
#include "kernels/sbuf.h"

namespace iotx {

struct PlanData {
  Dims shape;  // source shape after the reshape
  Dims perm;
  int64_t elem_bytes = 1;
  PlanOptions options;
  int64_t bytes = 0;
  kernels::ByteRange src_range;  // the source bytes read, from the source pointer
  bool strided_source = false;   // made by MakePlan's strided-source overload

  kernels::Problem unfolded;  // MakeProblem's output, before the fold stages
  kernels::Problem folded;
  kernels::Machine machine;  // what the choices below were derived from
  // Why nest.streaming is what it is (ChooseStreaming), for Describe.
  kernels::StoresReason stores_reason = kernels::StoresReason::kSmallOutput;
  const kernels::StrategyCandidate* strategy = nullptr;  // null when there is nothing to move
  kernels::Tile tile;
  kernels::DriverSplit split;
  kernels::Nest nest;
  kernels::SbufMapping sbuf;
  int threads_hint = 1;  // the thread count the items were sized for

  kernels::RunItemsFn run = nullptr;  // the strategy's kernel on the chosen target
};

class Plan {
 public:
  explicit Plan(PlanData data) : data_(std::move(data)) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const PlanData& data() const { return data_; }

 private:
  const PlanData data_;
};

// The planner's stages (fold, kernel, tile, driver split, nest) on `unfolded`: a problem in
// destination order whose destination is dense (MakePlan's whole problem, or a box of it for
// ExecuteRange; the source may have any strides, but a dim with src_stride == elem_bytes must
// remain after folding). Fills every field of `d` that follows from the problem; d.options
// must be set, and d.sbuf.geometry (d.sbuf as MapOutput makes it for a whole output).
// kUnsupported when no compiled kernel fits.
Status PlanStages(kernels::Problem unfolded, PlanData& d);

// Threads one Execute may use: the plan's cap, the call's, and what is available (oneTBB's
// arena, or the hardware's threads when the caller's parallel-for runs the work). Asks
// oneTBB nothing when a cap is 1.
int ThreadsFor(const PlanOptions& plan, const ExecuteOptions& call);
// kInvalidArgument for a negative max_threads.
Status CheckExecuteOptions(const ExecuteOptions& options);
// Execute without its argument checks: claims the plan's items on the threads `options` allow.
Status RunPlan(const PlanData& d, const uint8_t* src, uint8_t* dst, const ExecuteOptions& options);

}  // namespace iotx
