#include "permute_args.h"

#include <charconv>
#include <iostream>
#include <numeric>

#include <fmt/format.h>

namespace iotx::cli {
namespace {

// "6144,256", "[3, 16, 128]" or "" (a scalar) -> dims.
std::optional<Dims> ParseList(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (!text.empty() && text.front() == '[' && text.back() == ']') text = trim(text.substr(1, text.size() - 2));
  Dims dims;
  if (text.empty()) return dims;
  for (;;) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) return std::nullopt;
    dims.push_back(value);
    if (comma == std::string_view::npos) return dims;
    text = text.substr(comma + 1);
  }
}

}  // namespace

void AddPermuteOptions(CLI::App* cmd, PermuteArgs& args) {
  cmd->add_option("--dtype", args.dtype,
                  "Element type, e.g. f32, bf16, i8, f64, c128 (only its size matters to the "
                  "kernel)")
      ->capture_default_str();
  cmd->add_option("--shape", args.shape,
                  "Source shape, comma-separated, e.g. 6144,256. With --reshape it is the "
                  "tensor's original shape; without, the shape after the reshape")
      ->required();
  cmd->add_option("--reshape", args.reshape,
                  "Fold the flat tensor into these dims first, e.g. 3,16,128,2,2,64 (must keep "
                  "the element count)");
  cmd->add_option("--transpose", args.transpose,
                  "Permutation of the (reshaped) axes, e.g. 0,4,5,3,1,2; output axis i is "
                  "source axis P[i] (default: identity)");
}

Expected<PermuteSpec> ResolvePermute(const PermuteArgs& args, bool& usage_error) {
  usage_error = false;
  PermuteSpec spec;
  const auto usage = [&usage_error](const std::string& message) {
    std::cerr << "iotx: " << message << '\n';
    usage_error = true;
    return Fail(ErrorCode::kInvalidArgument, message);
  };
  auto dtype = ParseDType(args.dtype);
  if (!dtype) return usage(fmt::format("--dtype: {}", dtype.error().message));
  spec.dtype = *dtype;
  auto shape = ParseList(args.shape);
  if (!shape) return usage(fmt::format("--shape: expected comma-separated integers like 6144,256, got \"{}\"", args.shape));
  if (args.reshape.empty()) {
    spec.shape = std::move(*shape);
  } else {
    auto reshape = ParseList(args.reshape);
    if (!reshape) {
      return usage(fmt::format("--reshape: expected comma-separated integers like 3,16,128, got \"{}\"", args.reshape));
    }
    const auto before = CheckedProduct(*shape);
    const auto after = CheckedProduct(*reshape);
    if (!before || !after || *before != *after) {
      return Fail(Error(ErrorCode::kElementCountMismatch,
                        fmt::format("reshape {} has {} elements but the shape {} has {}",
                                    ToString(*reshape), after ? fmt::format("{}", *after) : "too many",
                                    ToString(*shape), before ? fmt::format("{}", *before) : "too many"))
                      .AtKey("reshape"));
    }
    spec.shape = std::move(*reshape);
  }
  if (args.transpose.empty()) {
    spec.perm = Dims(spec.shape.size());
    std::iota(spec.perm.begin(), spec.perm.end(), 0);
  } else {
    auto perm = ParseList(args.transpose);
    if (!perm) {
      return usage(fmt::format("--transpose: expected comma-separated axes like 0,2,1, got \"{}\"", args.transpose));
    }
    spec.perm = std::move(*perm);
  }
  return spec;
}

}  // namespace iotx::cli
