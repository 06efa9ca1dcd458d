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
#include "command.h"
#include "files/mapped_file.h"
#include "iotx/io_transposes.h"
#include "files/stale_temps.h"
#include "hlo/hlo_module.h"
#include "hlo/wrap.h"
#include "schema/load.h"

namespace iotx::cli {
namespace {

struct WrapOptions {
  std::string hlo;
  std::string neff;
  std::string output;
  std::string io_transposes;
  std::vector<std::string> modular;  // each value may itself hold several space-separated files
  std::string netlist = "hlo_netlist.json";
  bool netlist_given = false;
};

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

}  // namespace

void AddWrapCommand(CLI::App& app, CommandContext& ctx) {
  auto options = std::make_shared<WrapOptions>();
  CLI::App* cmd = app.add_subcommand(
      "wrap",
      "Wrap an HLO module's entry computation into one AwsNeuronNeff custom-call that carries\n"
      "the NEFF and the static IO transposes (the hlo-neff-wrapper). With no transposes and no\n"
      "zero-sized parameters it says so and writes nothing.");
  cmd->add_option("--hlo", options->hlo,
                  "Serialized xla.HloModuleProto to wrap, e.g. --hlo model.hlo_module.pb")
      ->required();
  cmd->add_option("--neff", options->neff,
                  "NEFF file stored as the custom-call's backend_config, e.g. --neff model.neff")
      ->required();
  cmd->add_option("--output", options->output,
                  "Where to write the wrapped module (atomically), e.g. --output wrapped.pb")
      ->required();
  CLI::Option_group* source = cmd->add_option_group(
      "io_transposes", "Exactly one of the single or the modular io_transposes");
  source->add_option("--io_transposes,--io-transposes", options->io_transposes,
                     "One io_transposes.json, e.g. --io_transposes io_transposes.json");
  source
      ->add_option("--modular-io-transposes", options->modular,
                   "The per-partition io_transposes.json files of the modular flow, space\n"
                   "separated, e.g. --modular-io-transposes \"sg00/io_transposes.json "
                   "sg01/io_transposes.json\"")
      ->expected(1, -1);
  source->require_option(1);
  CLI::Option* netlist =
      cmd->add_option("--netlist", options->netlist,
                      "hlo_netlist.json of the modular flow; used when present, required with\n"
                      "two or more modular files, e.g. --netlist hlo_netlist.json")
          ->capture_default_str();
  cmd->callback([options, netlist, &ctx] {
    options->netlist_given = netlist->count() > 0;
    ctx.exit_code = RunWrap(*options);
  });
}

}  // namespace iotx::cli
