// `iotx plan`: plan a permute and print what the planner decided (SPEC section 8).
#include "cmd_plan.h"

#include <iostream>

#include "cli_output.h"
#include "command.h"
#include "iotx/plan.h"

namespace iotx::cli {

int RunPlan(const PlanArgs& args) {
  int exit_code = kExitOk;
  const std::optional<PermuteSpec> spec = ResolvePermuteOrExit(args.permute, exit_code);
  if (!spec) return exit_code;
  PlanOptions options;
  options.max_threads = args.threads;
  options.stores = args.stores == "regular"     ? PlanOptions::Stores::kRegular
                   : args.stores == "streaming" ? PlanOptions::Stores::kStreaming
                                                : PlanOptions::Stores::kAuto;
  options.device = args.device == "trn1"   ? DeviceGeneration::kTrn1
                   : args.device == "trn3" ? DeviceGeneration::kTrn3
                                           : DeviceGeneration::kTrn2;
  auto plan = MakePlan(spec->shape, spec->perm, ElementSize(spec->dtype), options);
  if (!plan) {
    PrintError(plan.error());
    return kExitFailure;
  }
  std::cout << "dtype:    " << DTypeName(spec->dtype) << '\n' << Describe(**plan);
  return kExitOk;
}

}  // namespace iotx::cli
