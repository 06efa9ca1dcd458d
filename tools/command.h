// What every subcommand shares: the exit codes, and where a parsed command leaves its own.
#pragma once

namespace iotx::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed; diagnostic on stderr
inline constexpr int kExitUsage = 2;    // the command line itself was wrong

struct CommandContext {
  int exit_code = kExitOk;
};

}  // namespace iotx::cli
