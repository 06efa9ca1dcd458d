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
#include "core/text.h"
#include "cmd_wrap.h"
#include "command.h"
#include "files/output_target.h"
#include "iotx/io_transposes.h"
#include "hlo/wrap.h"
#include "hlo/wrap_files.h"
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

}  // namespace
// The whole job; returns the exit code.
int RunWrap(const WrapOptions& options) {
  auto fail = [](const Error& error) {
    PrintError(error);
    return kExitFailure;
  };
  auto request = MakeLoadRequest(options);
  if (!request) return fail(request.error());
  // The module may be going to stdout (--output /dev/stdout, a FIFO): then what the command
  // says goes to stderr, so the bytes that follow are the module alone.
  const bool stream_output =
      files::ClassifyTarget(options.output) == files::TargetKind::kStream;
  std::ostream& info = stream_output ? std::cerr : std::cout;
  // The original wrapper logs each partition file as it reads it; scripts grep for this line.
  for (const std::string& file : request->modular_files) {
    info << "Processing io transpose file: " << EscapeControl(file) << '\n';
  }
  auto report = hlo::WrapFiles({*request, options.hlo, options.neff, options.output});
  if (!report) return fail(report.error());
  for (const Warning& warning : report->warnings) PrintWarning(warning);
  if (!report->produced) {
    info << hlo::kNothingToWrapMessage << '\n';
    return kExitOk;
  }
  info << "wrote " << EscapeControl(options.output) << ": AwsNeuronNeff over "
       << report->num_parameters << " parameters, " << report->num_transposed
       << " with a transpose, " << report->num_zero_sized << " zero-sized; NEFF "
       << report->neff_bytes << " bytes\n";
  return kExitOk;
}

}  // namespace iotx::cli
