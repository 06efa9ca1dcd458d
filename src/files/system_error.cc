#include "files/system_error.h"

#include <string>
#include <system_error>

namespace iotx::files {

Error SystemError(ErrorCode code, std::string_view what, const std::filesystem::path& file,
                  int errnum) {
  std::string message(what);
  message += ": ";
  message += std::generic_category().message(errnum);
  return Error(code, std::move(message)).InFile(file.string());
}

}  // namespace iotx::files
