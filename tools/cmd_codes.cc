// `iotx codes`: list every diagnostic code with its meaning.
#include "cmd_codes.h"

#include <iostream>

#include "command.h"
#include "iotx/status.h"

namespace iotx::cli {

int RunCodes() {
  for (ErrorCode code : AllErrorCodes()) {
    std::cout << CodeName(code) << "  " << CodeSummary(code) << '\n';
  }
  return kExitOk;
}

}  // namespace iotx::cli
