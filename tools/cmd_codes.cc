// `iotx codes`: list every diagnostic code with its meaning.
#include <iostream>

#include "command.h"
#include "iotx/status.h"

namespace iotx::cli {

void AddCodesCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand("codes", "List the stable diagnostic codes and what they mean");
  cmd->callback([&ctx] {
    for (ErrorCode code : AllErrorCodes()) {
      std::cout << CodeName(code) << "  " << CodeSummary(code) << '\n';
    }
    ctx.exit_code = kExitOk;
  });
}

}  // namespace iotx::cli
