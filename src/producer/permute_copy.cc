#include "producer/permute_copy.h"

#include <cstdint>
#include <string>

#include "iotx/plan.h"

namespace iotx::producer {

Status PermuteCopy(const TransposeSpec* spec, std::span<const std::byte> src, size_t element_size,
                   std::span<std::byte> dst) {
  if (src.size() != dst.size()) {
    return Fail(ErrorCode::kBufferSize, "source holds " + std::to_string(src.size()) +
                                            " bytes but the destination " +
                                            std::to_string(dst.size()));
  }
  if (element_size == 0 || src.size() % element_size != 0) {
    return Fail(ErrorCode::kBufferSize, std::to_string(src.size()) +
                                            " bytes are not a whole number of " +
                                            std::to_string(element_size) + "-byte elements");
  }
  // A copy is the one-dimensional identity problem: the planner turns it into its parallel
  // row copy.
  const int64_t elements = static_cast<int64_t>(src.size() / element_size);
  const Dims copy_shape{elements};
  const Dims copy_perm{0};
  const Dims& shape = spec != nullptr ? spec->reshape : copy_shape;
  const Dims& perm = spec != nullptr ? spec->transpose : copy_perm;
  const std::optional<int64_t> count = CheckedProduct(shape);
  if (!count || *count != elements) {
    return Fail(ErrorCode::kBufferSize, "reshape " + ToString(shape) + " does not describe the " +
                                            std::to_string(elements) +
                                            " elements the buffers hold");
  }
  IOTX_ASSIGN_OR_RETURN(PlanPtr plan, MakePlan(shape, perm, element_size));
  return Execute(*plan, src.data(), dst.data());
}

}  // namespace iotx::producer
