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
  // on the arena it is called from, so a runtime that wants its own pool calls it inside
  // its tbb::task_arena::execute().
  int max_threads = 0;
  enum class Stores { kAuto, kRegular, kStreaming };
  // kAuto picks cache-bypassing stores only when the output is far larger than the cache.
  Stores stores = Stores::kAuto;
  DeviceGeneration device = DeviceGeneration::kTrn2;
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
// lowest one). The destination is contiguous as above.
IOTX_API Expected<PlanPtr> MakePlan(std::span<const int64_t> shape,
                                    std::span<const int64_t> src_strides,
                                    std::span<const int64_t> perm, size_t element_size,
                                    const PlanOptions& options = {});

// Runs the plan: reads PlanBytes(plan) bytes from `src` (a strided plan: the elements its
// strides reach), writes PlanBytes(plan) to `dst`, on the
// calling oneTBB arena (at most PlanOptions::max_threads of its threads). Buffers may have any
// alignment; kInvalidArgument if they overlap or are null while bytes are to move.
// Thread-safe (one plan may run from many threads at once); no heap allocation of its own.
IOTX_API Status Execute(const Plan& plan, const void* src, void* dst);

// Bytes read from src and written to dst.
IOTX_API size_t PlanBytes(const Plan& plan);

// Multi-line description: folded problem, kernel, tile, threading, SBUF mapping.
IOTX_API std::string Describe(const Plan& plan);

}  // namespace iotx
