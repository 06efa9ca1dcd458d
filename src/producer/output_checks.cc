#include "producer/output_checks.h"

#include <system_error>

#include "files/path_safety.h"
#include "iotx/spec.h"

namespace iotx::producer {
namespace {

// NAME_MAX on Linux file systems, less the ".<name>.tmp-<pid>-<n>-<16 hex>" decoration of the
// temporary file an atomic write goes through (at most 1 + 5 + 20 + 1 + 20 + 1 + 16 = 64).
constexpr size_t kMaxOutputNameBytes = 255 - 64;

}  // namespace

std::string ValueFileName(const std::string& input_name) { return "value_" + input_name + ".npy"; }

Status CheckValueFileName(const std::string& input_name) {
  IOTX_RETURN_IF_ERROR(CheckInputName(input_name));
  if (ValueFileName(input_name).size() > kMaxOutputNameBytes) {
    return Fail(Error(ErrorCode::kUnsafeName,
                      "input name of " + std::to_string(input_name.size()) +
                          " bytes is too long for a file name (value_<name>.npy may have at "
                          "most " +
                          std::to_string(kMaxOutputNameBytes) + " bytes)")
                    .AtKey(input_name.substr(0, 64) + "..."));
  }
  return Ok();
}

Status CheckOutputFile(const std::filesystem::path& root, const std::filesystem::path& path) {
  auto resolved = files::ResolveInside(root, path);
  if (!resolved) {
    Error error = std::move(resolved).error();
    if (error.code == ErrorCode::kPathUnsafe) {
      error.message = "refusing to write through it: " + error.message;
    }
    return Fail(std::move(error));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::symlink_status(path, ec))) {
    return Fail(Error(ErrorCode::kIoWrite, "a directory is in the way of this output file")
                    .InFile(path.string()));
  }
  return Ok();
}

}  // namespace iotx::producer
