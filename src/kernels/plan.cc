// MakePlan: the planner's stages composed (problem.h, planner.h), and PlanBytes.
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "iotx/plan.h"
#include "kernels/plan_impl.h"

namespace iotx {
namespace {

// The staged walks keep a kMaxStageBytes block on the stack; the first Execute on a thread
// page-faults it in (32 pages: the 3 MiB source example's first call measured 580 us with
// warm data, 320-470 us with the stack touched first, 180 us later). Touching it here, on the
// thread that plans (and on the workers below), moves that cost to planning. The second block
// of a fused walk that copies its source rows first (Nest::source_pitch), and the second half
// of DenseStagedPlane's (kMaxDenseStageBytes), are not touched: such plans stream (outputs of
// DRAM size, unless stores are forced), whose first call 32 faults do not change, and every
// thread of every process that plans would keep 128 KiB more resident.
__attribute__((noinline)) void PrefaultStack() {
  volatile uint8_t block[kernels::kMaxStageBytes + 16 * 1024];
  for (size_t i = 0; i < sizeof(block); i += 4096) block[i] = 0;
}

// oneTBB starts its worker threads on the first parallel loop of the process: that first
// Execute measured 3.4-5.4 ms for the 3 MiB source example on 2 threads (102 us later), and
// 0.7-1.0 ms on one. The first plan that may run on several threads starts them instead,
// with a loop that waits until `threads` tasks ran at once (or 20 ms passed, should the arena
// offer fewer), so the first Execute of a process costs what the later ones do.
void StartWorkersOnce(int threads) {
  static std::once_flag once;
  std::call_once(once, [threads] {
    std::atomic<int> arrived{0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    tbb::parallel_for(0, threads, [&](int) {
      PrefaultStack();
      arrived.fetch_add(1);
      while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) {
      }
    }, tbb::simple_partitioner());
  });
}

// MakePlan's work on a problem MakeProblem or MakeStridedProblem built.
Expected<PlanPtr> PlanProblem(kernels::Problem unfolded, std::span<const int64_t> shape,
                              std::span<const int64_t> perm, size_t element_size,
                              const PlanOptions& options, bool strided_source) {
  if (options.max_threads < 0) {
    return Fail(ErrorCode::kInvalidArgument, "PlanOptions::max_threads must be >= 0 (0 = the arena's)");
  }
  PlanData d;
  d.shape = Dims(shape);
  d.perm = Dims(perm);
  d.elem_bytes = static_cast<int64_t>(element_size);
  d.options = options;
  d.src_range = kernels::SourceRange(unfolded);
  d.strided_source = strided_source;
  d.sbuf = kernels::MapOutput(shape, perm, d.elem_bytes, options.device);
  IOTX_RETURN_IF_ERROR(PlanStages(std::move(unfolded), d));
  if (d.bytes != 0) {
    PrefaultStack();
    if (d.nest.items > 1 && d.bytes >= kernels::kParallelMinBytes && d.threads_hint > 1 &&
        options.start_workers) {
      StartWorkersOnce(std::min(d.threads_hint, tbb::info::default_concurrency()));
    }
  }
  return std::make_shared<const Plan>(std::move(d));
}

}  // namespace

Expected<PlanPtr> MakePlan(std::span<const int64_t> shape, std::span<const int64_t> perm,
                           size_t element_size, const PlanOptions& options) {
  IOTX_ASSIGN_OR_RETURN(kernels::Problem unfolded, kernels::MakeProblem(shape, perm, element_size));
  return PlanProblem(std::move(unfolded), shape, perm, element_size, options, false);
}

Expected<PlanPtr> MakePlan(std::span<const int64_t> shape, std::span<const int64_t> src_strides,
                           std::span<const int64_t> perm, size_t element_size,
                           const PlanOptions& options) {
  IOTX_ASSIGN_OR_RETURN(kernels::Problem unfolded,
                        kernels::MakeStridedProblem(shape, src_strides, perm, element_size));
  return PlanProblem(std::move(unfolded), shape, perm, element_size, options, true);
}

Status PlanStages(kernels::Problem unfolded, PlanData& d) {
  const PlanOptions& options = d.options;
  d.bytes = kernels::ProblemBytes(unfolded);
  // The streaming calibration (threshold and DRAM walk) is read once per process, and only
  // asked for when it could matter: outputs whose stores may bypass the cache of at least
  // twice the L2, or for one thread of at least the L2 (its copies' crossover is timed from
  // there, Machine::one_thread_streaming_bytes).
  d.threads_hint = options.max_threads > 0 ? options.max_threads : tbb::info::default_concurrency();
  d.machine = kernels::CurrentMachine(false);
  const int64_t asked_from = (d.threads_hint == 1 ? 1 : 2) * d.machine.l2_bytes;
  if (options.stores != PlanOptions::Stores::kRegular && d.bytes >= asked_from) {
    d.machine = kernels::CurrentMachine(true);
  }
  d.unfolded = std::move(unfolded);
  d.folded = kernels::Fold(d.unfolded);
  if (d.bytes == 0) return Ok();

  const kernels::StoresChoice stores =
      kernels::ChooseStreaming(options.stores, d.folded, d.bytes, d.machine, d.threads_hint);
  d.stores_reason = stores.reason;
  const bool streaming = stores.streaming;
  d.strategy = &kernels::ChooseStrategy(d.folded, d.machine, streaming, d.threads_hint);
  const kernels::Strategy strategy = d.strategy->strategy;
  d.tile = kernels::ChooseTile(d.folded, strategy, d.machine, streaming);
  const int64_t target_items = kernels::TargetItems(d.bytes, d.threads_hint);
  const int64_t partitions = d.sbuf.geometry.partitions;
  if (strategy == kernels::Strategy::kCopy) {
    d.split = kernels::SplitCopy(d.bytes, d.sbuf.leading, partitions, target_items);
  } else {
    d.split = kernels::SplitDriver(d.folded, d.tile,
                                   kernels::FindPartitionUnit(d.folded, d.sbuf.leading, partitions),
                                   target_items, d.threads_hint);
  }
  d.tile.dst_loop_dim =
      kernels::DestinationLoopDim(d.folded, strategy, d.tile, d.split, d.machine, streaming);
  d.nest = kernels::BuildNest(d.folded, strategy, d.tile, d.split, streaming);
  d.run = kernels::ChooseRunItems(strategy, d.nest.elem_bytes, d.nest.vector_bytes);
  if (d.run == nullptr) {
    return Fail(ErrorCode::kUnsupported, "no compiled kernel for the chosen strategy");
  }
  return Ok();
}

size_t PlanBytes(const Plan& plan) { return static_cast<size_t>(plan.data().bytes); }

}  // namespace iotx
