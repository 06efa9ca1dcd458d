#include "producer/output_checks.h"

#include <system_error>

#include "files/atomic_file.h"
#include "files/output_target.h"
#include "files/path_safety.h"
#include "iotx/spec.h"

namespace iotx::producer {

std::string ValueFileName(const std::string& input_name) { return "value_" + input_name + ".npy"; }

Status CheckValueFileName(const std::string& input_name) {
  // CheckInputName holds every rule, the length that fits NAME_MAX included, so `iotx
  // validate` refuses exactly what the writers would.
  return CheckInputName(input_name);
}

Status CheckOutputName(const std::filesystem::path& path) {
  const size_t bytes = path.filename().string().size();
  if (bytes <= files::kMaxAtomicFileNameBytes) return Ok();
  return Fail(Error(ErrorCode::kIoWrite,
                    "the file name is " + std::to_string(bytes) + " bytes; the temporary an " +
                        "atomic write goes through adds up to 64 (NAME_MAX is 255), so at most " +
                        std::to_string(files::kMaxAtomicFileNameBytes) +
                        " can be written; rename the input")
                  .InFile(path.string()));
}

Status CheckOutputFile(const std::filesystem::path& root, const std::filesystem::path& path,
                       std::span<const std::filesystem::path> inputs) {
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
  // A device, FIFO or socket at the name is refused now, before the first write, as the write
  // itself would refuse it.
  IOTX_RETURN_IF_ERROR(files::CheckReplaceable(path));
  return files::CheckNotAnInput(path, inputs);
}

}  // namespace iotx::producer
