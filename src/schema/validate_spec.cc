// The semantic checks of SPEC section 1 that apply wherever a spec is used.
#include <string>
#include <vector>

#include "core/text.h"
#include "iotx/spec.h"

namespace iotx {
namespace {

// value_<name>.npy and the hidden temporary it is written through
// (".value_<name>.npy.tmp-<pid>-<n>-<16 hex>", at most 64 bytes of decoration) must fit in a
// file name: NAME_MAX is 255 bytes on Linux file systems.
constexpr size_t kMaxInputNameBytes = 255 - 64 - (sizeof("value_.npy") - 1);

}  // namespace

Status ValidateSpec(const TransposeSpec& spec) {
  const size_t rank = spec.reshape.size();
  // Every tensor, file header and plan holds at most kMaxRank dims; a longer reshape could
  // never be applied, so it is refused here, where every command and `validate` see it.
  if (rank > kMaxRank) {
    return Fail(ErrorCode::kTooManyDims,
                "reshape " + ShortList(spec.reshape) + " has " + std::to_string(rank) +
                    " dims; at most " + std::to_string(kMaxRank) + " are supported");
  }
  for (size_t i = 0; i < rank; ++i) {
    if (spec.reshape[i] < 0) {
      return Fail(ErrorCode::kNegativeDim, "reshape " + ShortList(spec.reshape) + " has " +
                                               std::to_string(spec.reshape[i]) + " at index " +
                                               std::to_string(i) + "; dims must be >= 0");
    }
  }
  if (!CheckedProduct(spec.reshape)) {
    return Fail(ErrorCode::kDimOverflow,
                "the product of reshape " + ShortList(spec.reshape) + " overflows int64");
  }
  const std::string expected = rank == 0 ? std::string("an empty list, as the reshape has no dims")
                                         : "a permutation of 0.." + std::to_string(rank - 1) +
                                               " (one axis per reshape dim, each once)";
  if (spec.transpose.size() != rank) {
    return Fail(ErrorCode::kNotPermutation, "transpose " + ShortList(spec.transpose) + " has " +
                                                std::to_string(spec.transpose.size()) +
                                                " axes but reshape " + ShortList(spec.reshape) +
                                                " has " + std::to_string(rank) +
                                                " dims; expected " + expected);
  }
  std::vector<bool> seen(rank, false);
  for (const int64_t axis : spec.transpose) {
    if (axis < 0 || static_cast<uint64_t>(axis) >= rank || seen[static_cast<size_t>(axis)]) {
      return Fail(ErrorCode::kNotPermutation,
                  "transpose " + ShortList(spec.transpose) + " is not " + expected +
                      (axis < 0 || static_cast<uint64_t>(axis) >= rank
                           ? "; axis " + std::to_string(axis) + " is out of range"
                           : "; axis " + std::to_string(axis) + " repeats"));
    }
    seen[static_cast<size_t>(axis)] = true;
  }
  return Ok();
}

Status CheckSpecFits(const TransposeSpec& spec, std::span<const int64_t> shape,
                     std::string_view input_name) {
  IOTX_RETURN_IF_ERROR(ValidateSpec(spec));
  const auto count = [](std::span<const int64_t> dims) {
    const auto product = CheckedProduct(dims);
    return product ? std::to_string(*product) : std::string("more than int64 holds");
  };
  const auto reshaped = CheckedProduct(spec.reshape);
  const auto elements = CheckedProduct(shape);
  if (!reshaped || !elements || *reshaped != *elements) {
    std::string message = "Reshape size mismatch";
    if (!input_name.empty()) message += " for input: " + std::string(input_name);
    // The source's two messages for this failure, the wrapper's and the producer's, in one.
    message += ": illegal static io reshape from " + ShortList(shape) + " to " +
               ShortList(spec.reshape) + " (the tensor holds " + count(shape) +
               " elements, the reshape " + count(spec.reshape) + ")";
    return Fail(Error(ErrorCode::kReshapeSizeMismatch, std::move(message))
                    .AtKey(std::string(input_name)));
  }
  return Ok();
}

Dims DeviceShape(const TransposeSpec& spec) {
  Dims shape;
  shape.reserve(spec.transpose.size());
  for (int64_t axis : spec.transpose) shape.push_back(spec.reshape[static_cast<size_t>(axis)]);
  return shape;
}

Status CheckInputName(std::string_view name) {
  // The name becomes part of a file name (value_<name>.npy): anything that could name another
  // directory, cut the C string short or not fit in a file name is refused before a file is
  // written.
  const auto fail = [&name](const std::string& why) {
    return Fail(ErrorCode::kUnsafeName,
                "input_name " + Excerpt(name) + " " + why +
                    "; it becomes part of a file name (value_<input_name>.npy)");
  };
  if (name.empty()) {
    return Fail(ErrorCode::kUnsafeName,
                "input_name is empty; it becomes part of a file name (value_<input_name>.npy)");
  }
  if (name == "." || name == "..") return fail("is a directory name");
  if (name.find('/') != std::string_view::npos) return fail("contains '/'");
  if (name.find('\\') != std::string_view::npos) return fail("contains '\\'");
  if (name.find('\0') != std::string_view::npos) return fail("contains a NUL character");
  if (name.size() > kMaxInputNameBytes) {
    return fail("has " + std::to_string(name.size()) + " bytes, more than the " +
                std::to_string(kMaxInputNameBytes) +
                " that fit in a file name with the value_ prefix, the .npy suffix and the "
                "temporary an atomic write goes through (NAME_MAX is 255)");
  }
  return Ok();
}

}  // namespace iotx
