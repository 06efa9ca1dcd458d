// `iotx apply`: put tensors into device layout on the host, per an io_transposes file.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_output.h"
#include "command.h"
#include "producer/apply.h"
#include "progress_bar.h"
#include "tensor_lines.h"

namespace iotx::cli {
namespace {

struct ApplyArgs {
  std::string io_transposes;
  std::vector<std::string> input;  // NAME=FILE.npy
  std::string inputs;              // inp-000.p or model.safetensors
  std::string out_dir;
  std::string format;  // "", "npy" or "safetensors"
  bool quiet = false;
};

// Splits every --input NAME=FILE; false (after saying why) when one is malformed or a name
// repeats.
bool ParseNpyInputs(const std::vector<std::string>& args, std::vector<producer::NpyInput>& out) {
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      std::cerr << "iotx apply: --input expects NAME=FILE.npy, got \"" << arg << "\"\n";
      return false;
    }
    producer::NpyInput input{arg.substr(0, eq), arg.substr(eq + 1)};
    for (const producer::NpyInput& earlier : out) {
      if (earlier.name == input.name) {
        std::cerr << "iotx apply: --input " << input.name << " is given twice\n";
        return false;
      }
    }
    out.push_back(std::move(input));
  }
  return true;
}

void PrintReport(const producer::ApplyReport& report, const std::string& out_dir,
                 double seconds) {
  for (const producer::TensorReport& tensor : report.tensors) {
    std::cout << "  " << DescribeTensor(tensor, out_dir) << '\n';
  }
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.3f s, %.2f GB/s", seconds,
                seconds > 0 ? static_cast<double>(report.total_bytes) / seconds / 1e9 : 0.0);
  std::cout << "wrote " << report.files.size() << " file" << (report.files.size() == 1 ? "" : "s")
            << " in " << out_dir << ": " << report.tensors.size() << " tensor"
            << (report.tensors.size() == 1 ? "" : "s") << ", " << FormatBytes(report.total_bytes)
            << " (" << rate << ")\n";
}

int RunApply(const ApplyArgs& args) {
  if (args.input.empty() == args.inputs.empty()) {
    std::cerr << "iotx apply: give either --input NAME=FILE.npy (repeatable) or --inputs FILE\n";
    return kExitUsage;
  }
  std::vector<producer::NpyInput> npy_inputs;
  if (!ParseNpyInputs(args.input, npy_inputs)) return kExitUsage;

  const auto start = std::chrono::steady_clock::now();
  auto inputs = args.inputs.empty() ? producer::LoadNpyInputs(npy_inputs)
                                    : producer::LoadTensorFile(args.inputs);
  if (!inputs) {
    PrintError(inputs.error());
    return kExitFailure;
  }
  producer::ApplyOptions options;
  options.io_transposes = args.io_transposes;
  options.out_dir = args.out_dir;
  const bool safetensors =
      args.format.empty() ? inputs->from_safetensors : args.format == "safetensors";
  options.format = safetensors ? producer::OutputFormat::kSafetensors
                               : producer::OutputFormat::kNpy;
  ProgressBar bar(!args.quiet);
  options.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); };

  auto report = producer::Apply(*inputs, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!report) {
    PrintError(report.error());
    return kExitFailure;
  }
  for (const Warning& warning : report->warnings) PrintWarning(warning);
  if (!args.quiet) PrintReport(*report, args.out_dir, seconds);
  return kExitOk;
}

}  // namespace

void AddApplyCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ApplyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "apply",
      "Put tensors into their device layout on the host, per an io_transposes file: each\n"
      "spec is simplified against its tensor and applied by the parallel kernel");
  cmd->add_option("--io-transposes", args->io_transposes,
                  "The io_transposes.json to apply, e.g. --io-transposes work/io_transposes.json")
      ->required()
      ->type_name("FILE");
  CLI::Option* input =
      cmd->add_option("--input", args->input,
                      "One tensor as NAME=FILE.npy (repeatable), e.g. --input p0=p0.npy "
                      "--input weight_7=w.npy")
          ->type_name("NAME=FILE")
          ->allow_extra_args(false);
  CLI::Option* inputs =
      cmd->add_option("--inputs", args->inputs,
                      "All tensors from one file: a pickle of {name: numpy array} or a "
                      "safetensors checkpoint (told apart by content), e.g. --inputs inp-000.p "
                      "or --inputs model.safetensors")
          ->type_name("FILE");
  input->excludes(inputs);
  cmd->add_option("--out-dir", args->out_dir,
                  "Where the outputs go (created when missing), e.g. --out-dir device/")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--format", args->format,
                  "npy: DIR/value_<NAME>.npy per tensor; safetensors: one DIR/<stem>.safetensors "
                  "(stem of --inputs, or \"inputs\"). Default: safetensors for a safetensors "
                  "input, else npy. E.g. --format safetensors")
      ->check(CLI::IsMember({"npy", "safetensors"}))
      ->type_name("FORMAT");
  cmd->add_flag("--quiet,-q", args->quiet,
                "Print nothing but warnings and errors (no progress bar, no summary)");
  cmd->footer(
      "Every spec must name a given tensor and hold its element count; tensors without a\n"
      "spec are written unchanged. dtype names carry through (.npy descr such as <V2 for\n"
      "bfloat16; safetensors dtype names and __metadata__). Each tensor moves from the\n"
      "memory-mapped input straight into the memory-mapped output, so memory stays near one\n"
      "tensor. Every file is written through a temporary and renamed into place: an error\n"
      "leaves no partial file (with npy output, files finished before an I/O failure stay).\n"
      "A progress bar shows on stderr when it is a terminal and the work is large.\n"
      "\n"
      "Examples:\n"
      "  iotx apply --io-transposes io_transposes.json --input p0=p0.npy --out-dir dev/\n"
      "  iotx apply --io-transposes io_transposes.json --inputs inp-000.p --out-dir dev/\n"
      "  iotx apply --io-transposes io_transposes.json --inputs model.safetensors "
      "--out-dir dev/\n"
      "\n"
      "Exit status: 0 written, 1 failed (diagnostic on stderr), 2 usage error.");
  cmd->callback([&ctx, args] { ctx.exit_code = RunApply(*args); });
}

}  // namespace iotx::cli
