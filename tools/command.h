// How a subcommand plugs into the `iotx` tool.
//
// Each cmd_<name>.cc defines `void Add<Name>Command(CLI::App& app, CommandContext& ctx)`,
// which adds a subcommand with its options and sets its callback. The callback does the work
// and stores the process exit code in ctx.exit_code. commands.inc lists every command once.
#pragma once

#include <CLI/CLI.hpp>

namespace iotx::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed; diagnostic on stderr
inline constexpr int kExitUsage = 2;    // the command line itself was wrong

struct CommandContext {
  int exit_code = kExitOk;
};

#define IOTX_COMMAND(Name) void Add##Name##Command(CLI::App& app, CommandContext& ctx);
#include "commands.inc"
#undef IOTX_COMMAND

}  // namespace iotx::cli
