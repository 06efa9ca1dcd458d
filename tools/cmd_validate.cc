// `iotx validate`: check io_transposes.json and hlo_netlist.json files and report every
// problem found, not just the first (SPEC sections 1, 3 and 4). The checks are the schema
// layer's ValidateFiles (shared with the Python module); this file prints them.
#include <iostream>
#include <string>
#include <vector>

#include "cli_output.h"
#include "core/text.h"
#include "cmd_validate.h"
#include "command.h"
#include "schema/validate_files.h"

namespace iotx::cli {

int RunValidate(const ValidateOptions& options) {
  const schema::ValidateReport report =
      schema::ValidateFiles({options.files, options.netlist, options.modular});
  std::vector<NotListedCount> not_listed;
  for (const auto& n : report.not_listed) not_listed.push_back({n.file, n.count});
  if (options.json) {
    std::cout << DiagnosticsToJson(report.errors, report.warnings, not_listed) << '\n';
  } else {
    for (const Warning& w : report.warnings) PrintWarning(w);
    for (const Error& e : report.errors) PrintError(e);
    for (const NotListedCount& n : not_listed) {
      std::cerr << "iotx: error: " << EscapeControl(n.file) << ": " << n.count << " more problem"
                << (n.count == 1 ? "" : "s") << " not listed\n";
    }
    // Summaries name files: escaped like every diagnostic.
    for (const std::string& line : report.summaries) std::cout << EscapeControl(line) << '\n';
  }
  return report.errors.empty() && not_listed.empty() ? kExitOk : kExitFailure;
}

}  // namespace iotx::cli
