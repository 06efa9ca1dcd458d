// The tool's command line (command_line.cc): CLI11 stays behind this one call.
#pragma once

namespace iotx::cli {

// Parses argv and runs the command it names. Returns the exit status (command.h): a usage
// error, --help and --version are handled here; the job's own exceptions (out of memory, a bug)
// propagate to main().
int RunCommandLine(int argc, char** argv);

}  // namespace iotx::cli
