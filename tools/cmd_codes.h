// `iotx codes`: list every diagnostic code with its meaning. No CLI11 here.
#pragma once

namespace iotx::cli {

// Prints "CODE  summary" per code; returns the process exit code (command.h).
int RunCodes();

}  // namespace iotx::cli
