// Planning and running the permute-copy kernel (SPEC section 8).
//
// Plan once, execute many: MakePlan folds the problem and picks a kernel, tile and threading
// in microseconds (it never runs the kernel); Execute binds buffers per call, allocates
// nothing and is safe to call from many threads at once on one plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "iotx/export.h"
#include "iotx/status.h"

namespace iotx {

// Neuron device generation, for reporting how the output maps onto SBUF partition tiles.
enum class DeviceGeneration {
  kTrn1,  // NeuronCore-v2 (Trn1/Inf2): 128 partitions x 192 KiB
  kTrn2,  // NeuronCore-v3: 128 x 224 KiB
  kTrn3,  // NeuronCore-v4: 128 x 256 KiB
};

struct IOTX_API PlanOptions {
  // Upper bound on threads; 0 = whatever the calling oneTBB task arena offers. Execute runs
  // on the arena it is called from (a runtime with its own pool passes ExecuteOptions). The
  // plan is also sized for it: each thread's share of the output decides whether its tiles fit
  // the cache and how the work is cut, so a plan made for many threads and run on one may be
  // slower than one made for one.
  int max_threads = 0;
  enum class Stores { kAuto, kRegular, kStreaming };
  // kAuto picks cache-bypassing stores when the output is far larger than the cache, and for
  // smaller outputs (from twice the L2) whose 1-, 2- or 4-byte tiles would otherwise go through a
  // staging block on AVX-512, or whose 1-byte tiles walk in place there, where this machine's
  // calibration finds them faster, and for a plan of one thread (max_threads = 1) that scatters its
  // writes (tiles, row copies) from half the size a copy needs, and one thread's 8- or 16-byte
  // tiles that would be staged from where its own copies were measured to leave its cache: the
  // output then leaves the cache. kRegular keeps it there for a consumer that reads it next.
  Stores stores = Stores::kAuto;
  DeviceGeneration device = DeviceGeneration::kTrn2;
  // Whether MakePlan may start oneTBB's worker threads ahead of the first Execute, so that
  // call is not an outlier. false for plans that run on the caller's threads only
  // (ExecuteOptions::parallel_for or max_threads = 1): then no thread starts before an
  // Execute that actually uses oneTBB.
  bool start_workers = true;
};

class Plan;  // immutable; defined in src/kernels
using PlanPtr = std::shared_ptr<const Plan>;

// dst = ascontiguousarray(transpose(src.reshape(shape), perm)) for elements of
// `element_size` bytes (any size >= 1). `shape` is the source shape after the reshape.
IOTX_API Expected<PlanPtr> MakePlan(std::span<const int64_t> shape, std::span<const int64_t> perm,
                                    size_t element_size, const PlanOptions& options = {});

// The same for a source read through strides: element (i_0, ..., i_k) of the source (of
// `shape`, already reshaped) is sum(i_j * src_strides[j]) bytes from the `src` given to
// Execute, so a transposed or stepped view (numpy's, DLPack's) is permuted with no copy first.
// Strides may be zero or negative (`src` is then the address of element (0, ..., 0), not the
// lowest one). The destination is contiguous as above. Execute reads only the elements the
// strides reach (its overlap check uses them); ExecuteRange refuses such a plan (kUnsupported).
IOTX_API Expected<PlanPtr> MakePlan(std::span<const int64_t> shape,
                                    std::span<const int64_t> src_strides,
                                    std::span<const int64_t> perm, size_t element_size,
                                    const PlanOptions& options = {});

// A caller's parallel-for (the C API's iotx_parallel_for_fn): runs task(task_context, i) for
// every i in [0, count), on any of the caller's threads and in any order, and returns only
// once every call has returned. It must not throw. iotx never calls it from inside a task.
// A task needs up to 384 KiB of free stack, as does a thread that executes by itself: the
// kernels keep their staging blocks there (128 KiB, twice in a fused walk that copies its
// source rows first; 256 KiB for planes whose destination rows follow each other), not on the
// heap; default pthread and oneTBB stacks have it.
using ParallelForFn = void (*)(void* context, size_t count,
                               void (*task)(void* task_context, size_t index),
                               void* task_context);

// How one Execute call may use threads, chosen per call (a plan's PlanOptions::max_threads
// still caps it).
struct IOTX_API ExecuteOptions {
  // Upper bound on threads for this call: 0 = the plan's choice, 1 = the calling thread only
  // (no oneTBB call at all), n = at most n.
  int max_threads = 0;
  // When set, parallel work is handed to this function instead of oneTBB: iotx creates no
  // thread (with max_threads = 0 it splits the work for std::thread::hardware_concurrency()).
  ParallelForFn parallel_for = nullptr;
  void* parallel_for_context = nullptr;  // passed to parallel_for as `context`
};

// Runs the plan: reads PlanBytes(plan) bytes from `src`, writes as many to `dst`, on the
// calling oneTBB arena (at most PlanOptions::max_threads of its threads) or as `options` say.
// Buffers may have any alignment; kInvalidArgument if they overlap or are null while bytes
// are to move. Thread-safe (one plan may run from many threads at once); no heap allocation.
IOTX_API Status Execute(const Plan& plan, const void* src, void* dst);
IOTX_API Status Execute(const Plan& plan, const void* src, void* dst,
                        const ExecuteOptions& options);

// Runs the part of the plan that makes output bytes [offset, offset + length): reads `src`
// (the whole source, PlanBytes(plan) bytes) and writes exactly `length` bytes to dst[0..length).
// Any byte offsets (they need not fall on elements). Ranges that together cover the output
// give exactly Execute's bytes, and may run on different threads at once. Each call plans its
// pieces (at most 2 * rank + 1 boxes of the output; microseconds, a few small allocations).
// A range costs about its share of Execute when it spans at least RangeGranule(plan) bytes;
// a thinner one reads the source sparsely (see docs/runtime.md). kInvalidArgument for a range
// past the output, null or overlapping buffers.
IOTX_API Status ExecuteRange(const Plan& plan, const void* src, void* dst, size_t offset,
                             size_t length, const ExecuteOptions& options = {});

// Output bytes a range must span to read whole cache lines of the source: 64 source bytes of
// each run the source-innermost dim contributes (1 for a plan that copies contiguous bytes).
IOTX_API size_t RangeGranule(const Plan& plan);

// Bytes read from src and written to dst.
IOTX_API size_t PlanBytes(const Plan& plan);

// Multi-line description: folded problem, kernel, tile, threading, SBUF mapping.
IOTX_API std::string Describe(const Plan& plan);

}  // namespace iotx
