// `iotx validate`: check io_transposes.json and hlo_netlist.json files and report every
// problem found, not just the first (SPEC sections 1, 3 and 4). The checks are the schema
// layer's ValidateFiles (shared with the Python module); this file prints them.
#include <iostream>
#include <string>
#include <vector>

#include "cli_output.h"
#include "cmd_validate.h"
#include "command.h"
#include "schema/validate_files.h"

namespace iotx::cli {

int RunValidate(const ValidateOptions& options) {
  const schema::ValidateReport report =
      schema::ValidateFiles({options.files, options.netlist, options.modular});
  if (options.json) {
    std::cout << DiagnosticsToJson(report.errors, report.warnings) << '\n';
  } else {
    for (const Warning& w : report.warnings) PrintWarning(w);
    for (const Error& e : report.errors) PrintError(e);
    for (const std::string& line : report.summaries) std::cout << line << '\n';
  }
  return report.errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace iotx::cli
