// ChooseRunItems: the strategy recorded in a plan, mapped to its kind's translation unit.
#include "kernels/dispatch.h"

#include <hwy/targets.h>

namespace iotx::kernels {

RunItemsFn ChooseRunItems(Strategy strategy, int64_t elem_bytes, int64_t vector_bytes) {
  switch (strategy) {
    case Strategy::kCopy: return ChooseCopyRun();
    case Strategy::kRowCopy: return ChooseRowCopyRun();
    case Strategy::kInterleaveRows:
    case Strategy::kDeinterleaveCols:
    case Strategy::kTiles:
    case Strategy::kStagedTiles:
    case Strategy::kFusedTiles:
      switch (elem_bytes) {
#define IOTX_TILE_WIDTH(bytes) \
  case bytes: return ChooseTilesRun##bytes(strategy, vector_bytes);
#include "kernels/widths.inc"
        default: return nullptr;
      }
  }
  return nullptr;
}

std::vector<int64_t> CompiledTargets() {
  std::vector<int64_t> targets;
  for (int64_t bits = hwy::SupportedTargets() & HWY_TARGETS; bits != 0; bits &= bits - 1) {
    targets.push_back(bits & -bits);
  }
  return targets;
}

}  // namespace iotx::kernels
