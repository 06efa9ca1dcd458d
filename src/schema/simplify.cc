// SPEC section 2: the producer's dim-folding rule, which is the wire rule and must be exact.
#include <algorithm>
#include <string>
#include <vector>

#include "core/check.h"
#include "iotx/spec.h"

namespace iotx {
namespace {

// prod(orig[0..j]) for every interior j (0 <= j < len(orig)-1), sorted: the boundaries a
// merge may not erase. The caller has checked that the full product fits in int64; with a
// zero dim the prefix products from there on are 0, which the rule counts as a boundary.
std::vector<int64_t> InteriorBoundaries(std::span<const int64_t> orig) {
  std::vector<int64_t> boundaries;
  int64_t prefix = 1;
  for (size_t j = 0; j + 1 < orig.size(); ++j) {
    prefix = (prefix == 0 || orig[j] == 0) ? 0 : prefix * orig[j];
    boundaries.push_back(prefix);
  }
  std::sort(boundaries.begin(), boundaries.end());
  return boundaries;
}

Status CheckOrigShape(std::span<const int64_t> orig) {
  for (size_t i = 0; i < orig.size(); ++i) {
    if (orig[i] < 0) {
      return Fail(ErrorCode::kNegativeDim, "original shape " + ToString(orig) + " has " +
                                               std::to_string(orig[i]) + " at index " +
                                               std::to_string(i) + "; dims must be >= 0");
    }
  }
  if (!CheckedProduct(orig)) {
    return Fail(ErrorCode::kDimOverflow,
                "the product of original shape " + ToString(orig) + " overflows int64");
  }
  return Ok();
}

}  // namespace

Expected<TransposeSpec> Simplify(const TransposeSpec& spec, std::span<const int64_t> orig_shape) {
  IOTX_RETURN_IF_ERROR(ValidateSpec(spec));
  IOTX_RETURN_IF_ERROR(CheckOrigShape(orig_shape));
  IOTX_RETURN_IF_ERROR(CheckSpecFits(spec, orig_shape, ""));

  const size_t rank = spec.reshape.size();
  const std::vector<int64_t> boundaries = InteriorBoundaries(orig_shape);

  // follows[i]: axis i+1 comes right after axis i in the transpose.
  std::vector<bool> follows(rank, false);
  for (size_t k = 0; k + 1 < rank; ++k) {
    if (spec.transpose[k + 1] == spec.transpose[k] + 1) {
      follows[static_cast<size_t>(spec.transpose[k])] = true;
    }
  }

  // Walk the reshape once, deciding for each boundary i-1 | i whether it merges; group[i] is
  // the merged dim reshape dim i lands in. `prefix` is prod(R[0..i-1]), the running product
  // at that boundary (0 from the first zero dim on, as the rule says).
  TransposeSpec out;
  std::vector<int64_t> group(rank, 0);
  int64_t prefix = 1;
  for (size_t i = 0; i < rank; ++i) {
    const bool merges_into_previous =
        i > 0 && follows[i - 1] &&
        !std::binary_search(boundaries.begin(), boundaries.end(), prefix);
    if (merges_into_previous) {
      out.reshape.back() *= spec.reshape[i];
    } else {
      out.reshape.push_back(spec.reshape[i]);
    }
    group[i] = static_cast<int64_t>(out.reshape.size()) - 1;
    prefix = (prefix == 0 || spec.reshape[i] == 0) ? 0 : prefix * spec.reshape[i];
  }

  // Renumber: the first axis of each group stands for the group; the rest follow it in the
  // transpose (that is why they merged) and disappear.
  for (size_t k = 0; k < rank; ++k) {
    const auto axis = static_cast<size_t>(spec.transpose[k]);
    if (axis == 0 || group[axis] != group[axis - 1]) out.transpose.push_back(group[axis]);
  }
  // Merging never changes the element count or breaks the permutation.
  IOTX_DCHECK(ValidateSpec(out).has_value());
  IOTX_DCHECK(CheckedProduct(out.reshape) == CheckedProduct(spec.reshape));
  return out;
}

}  // namespace iotx
