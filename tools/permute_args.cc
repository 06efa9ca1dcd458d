#include "permute_args.h"

#include <iostream>
#include <numeric>

#include <fmt/format.h>

#include "cli_output.h"
#include "command.h"
#include "int_list.h"
#include "iotx/spec.h"

namespace iotx::cli {

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
  auto shape = ParseIntList(args.shape);
  if (!shape) return usage(fmt::format("--shape: expected comma-separated integers like 6144,256, got \"{}\"", args.shape));
  if (args.reshape.empty()) {
    spec.shape = Dims(*shape);
  } else {
    auto reshape = ParseIntList(args.reshape);
    if (!reshape) {
      return usage(fmt::format("--reshape: expected comma-separated integers like 3,16,128, got \"{}\"", args.reshape));
    }
    // Checked as every command checks a spec against its tensor; the transpose comes later.
    TransposeSpec fold{Dims(*reshape), Dims(reshape->size())};
    std::iota(fold.transpose.begin(), fold.transpose.end(), 0);
    IOTX_RETURN_IF_ERROR(CheckSpecFits(fold, *shape, ""));
    spec.shape = Dims(*reshape);
  }
  if (args.transpose.empty()) {
    spec.perm = Dims(spec.shape.size());
    std::iota(spec.perm.begin(), spec.perm.end(), 0);
  } else {
    auto perm = ParseIntList(args.transpose);
    if (!perm) {
      return usage(fmt::format("--transpose: expected comma-separated axes like 0,2,1, got \"{}\"", args.transpose));
    }
    spec.perm = Dims(*perm);
  }
  return spec;
}

std::optional<PermuteSpec> ResolvePermuteOrExit(const PermuteArgs& args, int& exit_code) {
  bool usage_error = false;
  auto spec = ResolvePermute(args, usage_error);
  if (spec) return std::move(*spec);
  if (usage_error) {
    exit_code = kExitUsage;
  } else {
    PrintError(spec.error());
    exit_code = kExitFailure;
  }
  return std::nullopt;
}

}  // namespace iotx::cli
