// `iotx bench --check`: the kernel's output for one case against the same permute done one
// element at a time, on a source whose every byte differs from its neighbours', so that a
// kernel experiment is timed only once it is known to be right.
#pragma once

#include <cstddef>

#include "iotx/plan.h"
#include "iotx/status.h"
#include "permute_args.h"

namespace iotx::cli {

// Runs `plan` (made for `spec` with `elem_bytes` elements) once on the calling thread's oneTBB
// arena and compares its output with the naive permute. Ok when every byte agrees; otherwise
// the first output element that differs, its index and both values.
Status CheckAgainstNaive(const Plan& plan, const PermuteSpec& spec, size_t elem_bytes);

}  // namespace iotx::cli
