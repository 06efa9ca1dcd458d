// `iotx materialize`: the compiler's producer job (SPEC section 6) on a work directory.
#include <iostream>
#include <string>

#include "cli_output.h"
#include "command.h"
#include "producer/materialize.h"
#include "tensor_lines.h"

namespace iotx::cli {
namespace {

struct MaterializeArgs {
  std::string workdir;
  bool verify = false;
  bool quiet = false;
};

const char* OutcomeName(files::LinkOutcome outcome) {
  switch (outcome) {
    case files::LinkOutcome::kCreated:
      return "created";
    case files::LinkOutcome::kReplaced:
      return "replaced";
    case files::LinkOutcome::kUnchanged:
      return "unchanged";
  }
  return "?";
}

void PrintReport(const producer::MaterializeReport& report, bool verify) {
  std::cout << "materialize " << report.root.string() << (verify ? " (verify)" : "") << '\n';
  for (const producer::TensorReport& tensor : report.inputs) {
    std::cout << "  " << DescribeTensor(tensor, report.root) << '\n';
  }
  std::cout << producer::kIoTransposesFile << ": " << report.spec_count << " spec"
            << (report.spec_count == 1 ? "" : "s") << ", "
            << (report.json_rewritten ? "rewritten simplified" : "already simplified, unchanged")
            << '\n';
  if (report.pickle_written) {
    std::cout << producer::kTransposedDir << '/' << producer::kTensorsFile << ": "
              << report.inputs.size() << " tensor" << (report.inputs.size() == 1 ? "" : "s")
              << " (transposed ones substituted)\n";
  }
  if (report.stale_temps_removed > 0) {
    std::cout << "removed " << report.stale_temps_removed
              << " temporary file(s) left by an interrupted run\n";
  }
  size_t counts[3] = {0, 0, 0};
  for (const producer::LinkMade& link : report.links) ++counts[static_cast<int>(link.outcome)];
  std::cout << "links: " << report.links.size() << " (" << counts[0] << " created, " << counts[1]
            << " replaced, " << counts[2] << " unchanged)\n";
  for (const producer::LinkMade& link : report.links) {
    if (link.outcome == files::LinkOutcome::kUnchanged) continue;
    std::cout << "  " << link.link.string() << " -> " << link.target.string() << " ("
              << OutcomeName(link.outcome) << ")\n";
  }
}

int RunMaterialize(const MaterializeArgs& args) {
  auto report = producer::Materialize({.workdir = args.workdir, .verify = args.verify});
  if (!report) {
    PrintError(report.error());
    return kExitFailure;
  }
  for (const Warning& warning : report->warnings) PrintWarning(warning);
  if (!report->nothing_to_do.empty()) {
    if (!args.quiet) std::cout << "materialize: " << report->nothing_to_do << "; nothing to do\n";
    return kExitOk;
  }
  if (!args.quiet) PrintReport(*report, args.verify);
  return kExitOk;
}

}  // namespace

void AddMaterializeCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<MaterializeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "materialize",
      "Run the compiler's producer job on a work directory (SPEC section 6): simplify its\n"
      "io_transposes.json against the tensors of inp-000.p, and link transposed inputs into\n"
      "the partition dirs");
  cmd->add_option("WORKDIR", args->workdir,
                  "Compiler work directory holding io_transposes.json, inp-000.p and sg*/, "
                  "nc*/sg*/ partition dirs, e.g. build/workdir")
      ->required();
  cmd->add_flag("--verify", args->verify,
                "Verify pipeline: also write transposed_inputs/value_<name>.npy for every input "
                "(device layout, or unchanged without a spec) and transposed_inputs/inp-000.p");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but warnings and errors");
  cmd->footer(
      "Steps: every spec must name a tensor of inp-000.p and is simplified against its shape;\n"
      "io_transposes.json is replaced (atomically) by the simplified list when that changes\n"
      "its bytes; with --verify transposed_inputs/ is filled; then every *.npy and *.npy.meta\n"
      "of transposed_inputs/ is symlinked, to its real path, into every sg*/ and nc*/sg*/ dir\n"
      "(an existing link is replaced atomically). Everything is checked before the first\n"
      "write; nothing is written outside WORKDIR (a symlink leading out is an error).\n"
      "Without io_transposes.json or inp-000.p it says so and changes nothing. Re-running is\n"
      "safe and gives the same bytes; a run killed midway leaves no truncated file.\n"
      "\n"
      "Example:\n"
      "  iotx materialize build/workdir --verify\n"
      "\n"
      "Exit status: 0 done (or nothing to do), 1 failed (diagnostic on stderr), 2 usage error.");
  cmd->callback([&ctx, args] { ctx.exit_code = RunMaterialize(*args); });
}

}  // namespace iotx::cli
