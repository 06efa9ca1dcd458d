// `iotx simplify`: the producer's dim-folding rule (SPEC section 2) on one spec.
#include <iostream>
#include <string>

#include "cli_output.h"
#include "cmd_simplify.h"
#include "command.h"
#include "int_list.h"
#include "iotx/spec.h"

namespace iotx::cli {
int RunSimplify(const SimplifyOptions& options) {
  // The validators already accepted all three lists.
  const std::vector<int64_t> shape = *ParseIntList(options.shape);
  const std::vector<int64_t> reshape = *ParseIntList(options.reshape);
  const std::vector<int64_t> transpose = *ParseIntList(options.transpose);
  const TransposeSpec spec{Dims(std::span<const int64_t>(reshape)),
                           Dims(std::span<const int64_t>(transpose))};
  const Expected<TransposeSpec> simplified = Simplify(spec, shape);
  if (!simplified) {
    PrintError(simplified.error());
    return kExitFailure;
  }
  std::cout << ToJson(*simplified) << '\n';
  return kExitOk;
}

}  // namespace iotx::cli
