// MakePlan: the planner's stages composed (problem.h, planner.h), and PlanBytes.
#include <tbb/info.h>

#include <memory>

#include "iotx/plan.h"
#include "kernels/plan_impl.h"

namespace iotx {

Expected<PlanPtr> MakePlan(std::span<const int64_t> shape, std::span<const int64_t> perm,
                           size_t element_size, const PlanOptions& options) {
  if (options.max_threads < 0) {
    return Fail(ErrorCode::kInvalidArgument, "PlanOptions::max_threads must be >= 0 (0 = the arena's)");
  }
  IOTX_ASSIGN_OR_RETURN(kernels::Problem unfolded, kernels::MakeProblem(shape, perm, element_size));

  PlanData d;
  d.shape = Dims(shape);
  d.perm = Dims(perm);
  d.elem_bytes = static_cast<int64_t>(element_size);
  d.options = options;
  d.sbuf = kernels::MapOutput(shape, perm, d.elem_bytes, options.device);
  PlanStages(std::move(unfolded), d);
  return std::make_shared<const Plan>(std::move(d));
}

void PlanStages(kernels::Problem unfolded, PlanData& d) {
  const PlanOptions& options = d.options;
  d.bytes = kernels::ProblemBytes(unfolded);
  d.run = kernels::ChooseRunItems();
  d.target = kernels::ChosenTargetName();
  d.vector_bytes = kernels::ChosenVectorBytes();
  d.threads_hint = options.max_threads > 0 ? options.max_threads : tbb::info::default_concurrency();
  d.unfolded = std::move(unfolded);
  d.folded = kernels::Fold(d.unfolded);
  if (d.bytes == 0) return;

  d.kernel = &kernels::ChooseKernel(d.folded);
  const kernels::KernelKind kind = d.kernel->kind;
  const bool streaming = kernels::ChooseStreaming(options.stores, d.bytes);
  d.tile = kernels::ChooseTile(d.folded, kind, streaming);
  const int64_t target_items = kernels::TargetItems(d.bytes, d.threads_hint);
  if (kind == kernels::KernelKind::kCopy) {
    d.split = kernels::SplitCopy(d.bytes, d.sbuf.leading, target_items);
  } else {
    d.split = kernels::SplitDriver(d.folded, d.tile,
                                   kernels::FindPartitionUnit(d.folded, d.sbuf.leading), target_items,
                                   d.threads_hint);
  }
  d.nest = kernels::BuildNest(d.folded, kind, d.tile, d.split, streaming);
}

size_t PlanBytes(const Plan& plan) { return static_cast<size_t>(plan.data().bytes); }

}  // namespace iotx
