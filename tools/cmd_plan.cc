// `iotx plan`: plan a permute and print what the planner decided (SPEC section 8).
#include <iostream>

#include "cli_output.h"
#include "command.h"
#include "iotx/plan.h"
#include "permute_args.h"

namespace iotx::cli {
namespace {

struct PlanArgs {
  PermuteArgs permute;
  int threads = 0;
  std::string stores = "auto";
  std::string device = "trn2";
};

}  // namespace

void AddPlanCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Plan a permute and print the folded problem, kernel, tile, threading and SBUF mapping.\n"
      "Example: iotx plan --dtype f32 --shape 6144,256 --reshape 3,16,128,2,2,64 "
      "--transpose 0,4,5,3,1,2");
  AddPermuteOptions(cmd, args->permute);
  cmd->add_option("--threads", args->threads,
                  "Upper bound on threads (PlanOptions::max_threads), e.g. 2; 0 = the arena's")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--stores", args->stores,
                  "auto (streaming only for large outputs), regular or streaming, e.g. streaming")
      ->check(CLI::IsMember({"auto", "regular", "streaming"}))
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Device generation whose SBUF geometry is reported: trn1, trn2 or trn3")
      ->check(CLI::IsMember({"trn1", "trn2", "trn3"}))
      ->capture_default_str();
  cmd->callback([args, &ctx] {
    bool usage_error = false;
    auto spec = ResolvePermute(args->permute, usage_error);
    if (!spec) {
      if (usage_error) {
        ctx.exit_code = kExitUsage;
      } else {
        PrintError(spec.error());
        ctx.exit_code = kExitFailure;
      }
      return;
    }
    PlanOptions options;
    options.max_threads = args->threads;
    options.stores = args->stores == "regular"     ? PlanOptions::Stores::kRegular
                     : args->stores == "streaming" ? PlanOptions::Stores::kStreaming
                                                   : PlanOptions::Stores::kAuto;
    options.device = args->device == "trn1"   ? DeviceGeneration::kTrn1
                     : args->device == "trn3" ? DeviceGeneration::kTrn3
                                              : DeviceGeneration::kTrn2;
    auto plan = MakePlan(spec->shape, spec->perm, ElementSize(spec->dtype), options);
    if (!plan) {
      PrintError(plan.error());
      ctx.exit_code = kExitFailure;
      return;
    }
    std::cout << "dtype:    " << DTypeName(spec->dtype) << '\n' << Describe(**plan);
    ctx.exit_code = kExitOk;
  });
}

}  // namespace iotx::cli
