// `iotx wrap`: the hlo-neff-wrapper. Loads io_transposes (single or modular, with the
// netlist), wraps the HLO module's entry computation into one AwsNeuronNeff custom-call
// carrying the NEFF and the transposes, and writes the module atomically (SPEC section 5).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli_output.h"
#include "cmd_wrap.h"
#include "command.h"
#include "files/mapped_file.h"
#include "iotx/io_transposes.h"
#include "files/stale_temps.h"
#include "hlo/hlo_module.h"
#include "hlo/wrap.h"
#include "schema/load.h"

namespace iotx::cli {
namespace {


std::vector<std::string> SplitOnWhitespace(const std::vector<std::string>& values) {
  std::vector<std::string> files;
  for (const std::string& value : values) {
    std::istringstream words(value);
    for (std::string file; words >> file;) files.push_back(file);
  }
  return files;
}

Expected<LoadRequest> MakeLoadRequest(const WrapOptions& options) {
  LoadRequest request;
  if (!options.io_transposes.empty()) {
    request.single_file = options.io_transposes;
  } else {
    request.modular_files = SplitOnWhitespace(options.modular);
  }
  // The netlist is used when present; a missing default is fine unless it is required, which
  // LoadIoTransposes reports as NCC_IHNW001.
  std::error_code ec;  // an unreadable default location counts as absent, never throws
  if (options.netlist_given || std::filesystem::exists(options.netlist, ec)) {
    request.netlist_file = options.netlist;
  }
  return request;
}

// The NEFF's bytes, which become the custom-call's backend_config.
Expected<std::string> ReadNeff(const std::string& path) {
  IOTX_ASSIGN_OR_RETURN(auto file, files::MappedFile::Open(path));
  if (file->size() == 0) {
    return Fail(Error(ErrorCode::kIoRead, "the NEFF file is empty").InFile(path));
  }
  return std::string(reinterpret_cast<const char*>(file->bytes().data()), file->size());
}

}  // namespace
// The whole job; returns the exit code.
int RunWrap(const WrapOptions& options) {
  auto fail = [](const Error& error) {
    PrintError(error);
    return kExitFailure;
  };
  auto request = MakeLoadRequest(options);
  if (!request) return fail(request.error());
  // The original wrapper logs each partition file as it reads it; scripts grep for this line.
  for (const std::string& file : request->modular_files) {
    std::cout << "Processing io transpose file: " << file << '\n';
  }
  auto io_transposes = LoadIoTransposes(*request);
  if (!io_transposes) return fail(io_transposes.error());
  for (const Warning& warning : io_transposes->warnings) PrintWarning(warning);

  auto module = hlo::ReadModule(options.hlo);
  if (!module) return fail(module.error());
  auto neff = ReadNeff(options.neff);
  if (!neff) return fail(neff.error());
  const size_t neff_bytes = neff->size();

  auto wrapped =
      hlo::WrapModule(std::move(*module), std::move(*neff), io_transposes->specs, options.hlo);
  if (!wrapped) return fail(wrapped.error());
  for (const Warning& note : wrapped->notes) PrintWarning(note);
  if (!wrapped->produced) {
    std::cout << hlo::kNothingToWrapMessage << '\n';
    return kExitOk;
  }

  // A run killed while writing leaves its hidden temporary beside the output; a re-run
  // removes those whose writer is gone, so repeated kills do not pile up NEFF-sized files.
  const std::filesystem::path output(options.output);
  files::RemoveStaleTemps(output.has_parent_path() ? output.parent_path() : ".",
                             std::vector<std::string>{output.filename().string()});
  if (Status written = hlo::WriteModule(wrapped->module, options.output); !written) {
    return fail(written.error());
  }
  std::cout << "wrote " << options.output << ": AwsNeuronNeff over " << wrapped->num_parameters
            << " parameters, " << wrapped->num_transposed << " with a transpose, "
            << wrapped->num_zero_sized << " zero-sized; NEFF " << neff_bytes << " bytes\n";
  return kExitOk;
}

}  // namespace iotx::cli
