// Wiring the subcommands into the tool's CLI11 app (command_line.cc).
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace iotx::cli {

struct CommandContext;

// Adds every subcommand, with its options, to `app`; a subcommand's callback runs its job and
// stores the exit code in `ctx`.
void AddCommands(CLI::App& app, CommandContext& ctx);

}  // namespace iotx::cli
