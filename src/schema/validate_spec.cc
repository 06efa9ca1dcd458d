// The semantic checks of SPEC section 1 that apply wherever a spec is used.
#include <string>
#include <vector>

#include "iotx/spec.h"

namespace iotx {

Status ValidateSpec(const TransposeSpec& spec) {
  const size_t rank = spec.reshape.size();
  for (size_t i = 0; i < rank; ++i) {
    if (spec.reshape[i] < 0) {
      return Fail(ErrorCode::kNegativeDim, "reshape " + ToString(spec.reshape) + " has " +
                                               std::to_string(spec.reshape[i]) + " at index " +
                                               std::to_string(i) + "; dims must be >= 0");
    }
  }
  if (!CheckedProduct(spec.reshape)) {
    return Fail(ErrorCode::kDimOverflow,
                "the product of reshape " + ToString(spec.reshape) + " overflows int64");
  }
  const std::string expected = rank == 0 ? std::string("an empty list, as the reshape has no dims")
                                         : "a permutation of 0.." + std::to_string(rank - 1) +
                                               " (one axis per reshape dim, each once)";
  if (spec.transpose.size() != rank) {
    return Fail(ErrorCode::kNotPermutation, "transpose " + ToString(spec.transpose) + " has " +
                                                std::to_string(spec.transpose.size()) +
                                                " axes but reshape " + ToString(spec.reshape) +
                                                " has " + std::to_string(rank) +
                                                " dims; expected " + expected);
  }
  std::vector<bool> seen(rank, false);
  for (const int64_t axis : spec.transpose) {
    if (axis < 0 || static_cast<uint64_t>(axis) >= rank || seen[static_cast<size_t>(axis)]) {
      return Fail(ErrorCode::kNotPermutation,
                  "transpose " + ToString(spec.transpose) + " is not " + expected +
                      (axis < 0 || static_cast<uint64_t>(axis) >= rank
                           ? "; axis " + std::to_string(axis) + " is out of range"
                           : "; axis " + std::to_string(axis) + " repeats"));
    }
    seen[static_cast<size_t>(axis)] = true;
  }
  return Ok();
}

Status CheckElementCount(const TransposeSpec& spec, int64_t element_count) {
  const auto product = CheckedProduct(spec.reshape);
  if (!product || *product != element_count) {
    return Fail(ErrorCode::kElementCountMismatch,
                "reshape " + ToString(spec.reshape) + " holds " +
                    (product ? std::to_string(*product) : std::string("more than int64")) +
                    " elements but the tensor has " + std::to_string(element_count));
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
  // directory, or cut the C string short, is refused before a file is written.
  const auto fail = [&name](const std::string& why) {
    return Fail(ErrorCode::kUnsafeName,
                "input_name \"" + std::string(name.substr(0, 200)) + "\" " + why +
                    "; it becomes part of a file name (value_<input_name>.npy)");
  };
  if (name.empty()) {
    return Fail(ErrorCode::kUnsafeName,
                "input_name is empty; it becomes part of a file name (value_<input_name>.npy)");
  }
  if (name == "." || name == "..") return fail("is a directory name");
  if (name.find('/') != std::string_view::npos) return fail("contains '/'");
  if (name.find('\\') != std::string_view::npos) return fail("contains '\\'");
  if (name.find('\0') != std::string_view::npos) {
    return Fail(ErrorCode::kUnsafeName,
                "input_name contains a NUL character; it becomes part of a file name "
                "(value_<input_name>.npy)");
  }
  return Ok();
}

}  // namespace iotx
