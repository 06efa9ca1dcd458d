// `iotx materialize`: the compiler's producer job (SPEC section 6) on a work directory.
#include <iostream>
#include <string>

#include "cli_output.h"
#include "core/text.h"
#include "cmd_materialize.h"
#include "command.h"
#include "producer/materialize.h"
#include "tensor_lines.h"

namespace iotx::cli {
namespace {


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
  std::cout << "materialize " << EscapeControl(report.root.string()) << (verify ? " (verify)" : "")
            << '\n';
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
    std::cout << "  " << EscapeControl(link.link.string()) << " -> "
              << EscapeControl(link.target.string()) << " (" << OutcomeName(link.outcome) << ")\n";
  }
}

}  // namespace

int RunMaterialize(const MaterializeArgs& args) {
  auto report = producer::Materialize({.workdir = args.workdir, .verify = args.verify});
  if (!report) {
    PrintError(report.error());
    return kExitFailure;
  }
  for (const Warning& warning : report->warnings) PrintWarning(warning);
  if (!report->nothing_to_do.empty()) {
    if (!args.quiet) {
      std::cout << "materialize: " << EscapeControl(report->nothing_to_do) << "; nothing to do\n";
    }
    return kExitOk;
  }
  if (!args.quiet) PrintReport(*report, args.verify);
  return kExitOk;
}

}  // namespace iotx::cli
