// The doors into the per-target kernels (Highway dynamic dispatch, skeleton pattern): one
// translation unit per kind of kernel (copy.cc, row_copy.cc, and tiles_w<bytes>.cc per width
// of widths.inc, generated from tiles_width.cc.in), each compiled once per SIMD target, each
// resolving its target once, when a plan is made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/nest.h"

namespace iotx::kernels {

// Runs items [begin, end) of `nest` from src to dst. Thread-safe; allocates nothing.
using RunItemsFn = void (*)(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                            int64_t end);

// The compiled kernel of `strategy` for elem_bytes-byte elements and the tiles' vector width
// (tile strategies), on the best target of this CPU. Honours hwy::SetSupportedTargetsForTest,
// so tests can pin each target before planning. Null for a tile strategy and a width that
// widths.inc does not list.
RunItemsFn ChooseRunItems(Strategy strategy, int64_t elem_bytes, int64_t vector_bytes);

// Each kind's own door (defined in its translation unit).
RunItemsFn ChooseCopyRun();
RunItemsFn ChooseRowCopyRun();
#define IOTX_TILE_WIDTH(bytes) RunItemsFn ChooseTilesRun##bytes(Strategy strategy, int64_t vector_bytes);
#include "kernels/widths.inc"

// Name of the target the dispatch picks now ("AVX3", "AVX2", "SSE4", "EMU128", ...).
const char* ChosenTargetName();
// Bytes of the widest vector the chosen target's kernels use (16, 32 or 64).
size_t ChosenVectorBytes();
// Every target compiled into the kernels that this CPU supports, best first (hwy bit values).
std::vector<int64_t> CompiledTargets();

}  // namespace iotx::kernels
