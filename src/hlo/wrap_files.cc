#include "hlo/wrap_files.h"

#include <filesystem>
#include <utility>

#include "files/mapped_file.h"
#include "files/stale_temps.h"
#include "hlo/hlo_module.h"
#include "hlo/wrap.h"
#include "iotx/io_transposes.h"

namespace iotx::hlo {
namespace {

// The NEFF's bytes, which become the custom-call's backend_config.
Expected<std::string> ReadNeff(const std::string& path) {
  IOTX_ASSIGN_OR_RETURN(auto file, files::MappedFile::Open(path));
  if (file->size() == 0) {
    return Fail(Error(ErrorCode::kIoRead, "the NEFF file is empty").InFile(path));
  }
  return std::string(reinterpret_cast<const char*>(file->bytes().data()), file->size());
}

}  // namespace

Expected<WrapFilesReport> WrapFiles(const WrapFilesRequest& request) {
  WrapFilesReport report;
  IOTX_ASSIGN_OR_RETURN(IoTransposes io_transposes, LoadIoTransposes(request.io_transposes));
  report.warnings = std::move(io_transposes.warnings);
  IOTX_ASSIGN_OR_RETURN(xla::HloModuleProto module, ReadModule(request.hlo));
  IOTX_ASSIGN_OR_RETURN(std::string neff, ReadNeff(request.neff));
  report.neff_bytes = neff.size();
  IOTX_ASSIGN_OR_RETURN(WrapResult wrapped, WrapModule(std::move(module), std::move(neff),
                                                       io_transposes.specs, request.hlo));
  for (Warning& note : wrapped.notes) report.warnings.push_back(std::move(note));
  report.num_parameters = wrapped.num_parameters;
  report.num_transposed = wrapped.num_transposed;
  report.num_zero_sized = wrapped.num_zero_sized;
  if (!wrapped.produced) return report;

  // A run killed while writing leaves its hidden temporary beside the output; a re-run
  // removes those whose writer is gone, so repeated kills do not pile up NEFF-sized files.
  const std::filesystem::path output(request.output);
  files::RemoveStaleTemps(output.has_parent_path() ? output.parent_path() : ".",
                          std::vector<std::string>{output.filename().string()});
  IOTX_RETURN_IF_ERROR(WriteModule(wrapped.module, request.output));
  report.produced = true;
  return report;
}

}  // namespace iotx::hlo
