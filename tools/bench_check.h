// `iotx bench --check`: the kernel's output for one case against the same permute done one
// element at a time, on a source whose every byte differs from its neighbours', so that a
// kernel experiment is timed only once it is known to be right.
#pragma once

#include <cstddef>

#include "iotx/plan.h"
#include "iotx/status.h"
#include "permute_args.h"

namespace iotx::cli {

// Fills `src` with the pattern, runs `plan` (made for `spec` with `elem_bytes` elements) once
// from it into `dst` on the calling thread's oneTBB arena (the bench's own buffers, which the
// timing then reuses: its speed does not depend on the bytes) and compares the output with
// the naive permute. Ok when every byte agrees; otherwise the first output element that
// differs, its index and both values.
Status CheckAgainstNaive(const Plan& plan, const PermuteSpec& spec, size_t elem_bytes,
                         std::byte* src, std::byte* dst);

}  // namespace iotx::cli
