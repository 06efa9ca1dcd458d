#include "hlo/wrap_files.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

#include "files/mapped_file.h"
#include "files/output_target.h"
#include "files/page_hints.h"
#include "files/stale_temps.h"
#include "hlo/hlo_module.h"
#include "hlo/wrap.h"
#include "iotx/io_transposes.h"

namespace iotx::hlo {
namespace {

// Bytes copied from the NEFF's mapping before its pages are dropped again, so the copy is
// the only NEFF-sized thing in memory.
constexpr size_t kNeffCopyChunk = size_t{64} << 20;

// The NEFF's bytes, which become the custom-call's backend_config. Its size is checked
// against what the module can carry before a byte is copied (issue 18: a 2.2 GB NEFF was
// read and copied first, 4.5 GB of memory).
Expected<std::string> ReadNeff(const std::string& path, const xla::HloModuleProto& module) {
  IOTX_ASSIGN_OR_RETURN(auto file, files::MappedFile::Open(path));
  if (file->size() == 0) {
    return Fail(Error(ErrorCode::kIoRead, "the NEFF file is empty").InFile(path));
  }
  IOTX_RETURN_IF_ERROR(CheckNeffSize(module, file->size(), path));
  std::string neff(file->size(), '\0');
  const std::span<const std::byte> bytes = file->bytes();
  for (size_t at = 0; at < bytes.size(); at += kNeffCopyChunk) {
    const std::span<const std::byte> chunk =
        bytes.subspan(at, std::min(kNeffCopyChunk, bytes.size() - at));
    std::memcpy(neff.data() + at, chunk.data(), chunk.size());
    files::ReleaseFilePages(chunk);
  }
  return neff;
}

}  // namespace

Expected<WrapFilesReport> WrapFiles(const WrapFilesRequest& request) {
  WrapFilesReport report;
  // --output over the NEFF or a spec file would replace an input with the module (and a
  // second run would wrap the module as its NEFF). Over --hlo it is a wrap in place, which a
  // second run repeats byte for byte: allowed.
  std::vector<std::filesystem::path> read{request.neff};
  if (request.io_transposes.single_file) read.push_back(*request.io_transposes.single_file);
  for (const std::string& file : request.io_transposes.modular_files) read.push_back(file);
  if (request.io_transposes.netlist_file) read.push_back(*request.io_transposes.netlist_file);
  IOTX_RETURN_IF_ERROR(files::CheckNotAnInput(request.output, read));
  IOTX_ASSIGN_OR_RETURN(IoTransposes io_transposes, LoadIoTransposes(request.io_transposes));
  report.warnings = std::move(io_transposes.warnings);
  IOTX_ASSIGN_OR_RETURN(xla::HloModuleProto module, ReadModule(request.hlo));
  IOTX_ASSIGN_OR_RETURN(std::string neff, ReadNeff(request.neff, module));
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
  // Not beside a FIFO or /dev/stdout, which are written into (WriteModule), not replaced.
  const std::filesystem::path output(request.output);
  if (files::ClassifyTarget(output) != files::TargetKind::kStream) {
    // Never an input, however its name spells a temporary of the output.
    read.push_back(request.hlo);
    files::RemoveStaleTemps(output.has_parent_path() ? output.parent_path() : ".",
                            std::vector<std::string>{output.filename().string()}, read);
  }
  IOTX_RETURN_IF_ERROR(WriteModule(wrapped.module, request.output));
  report.produced = true;
  return report;
}

}  // namespace iotx::hlo
