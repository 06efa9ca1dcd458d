// `iotx apply`: put tensors into device layout on the host, per an io_transposes file.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_output.h"
#include "cmd_apply.h"
#include "command.h"
#include "producer/apply.h"
#include "progress_bar.h"
#include "tensor_lines.h"

namespace iotx::cli {
namespace {


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

void PrintReport(const producer::ApplyReport& report, const std::string& out_dir, double seconds) {
  for (const producer::TensorReport& tensor : report.tensors) {
    std::cout << "  " << DescribeTensor(tensor, out_dir) << '\n';
  }
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.3f s, %.2f GB/s", seconds,
                seconds > 0 ? static_cast<double>(report.total_bytes) / seconds / 1e9 : 0.0);
  std::cout << "wrote " << report.files.size() << " file" << (report.files.size() == 1 ? "" : "s")
            << " in " << out_dir << ": " << report.tensors.size() << " tensor"
            << (report.tensors.size() == 1 ? "" : "s") << ", " << BytesWithUnit(report.total_bytes)
            << " (" << rate << ")\n";
}

}  // namespace

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
  options.format =
      safetensors ? producer::OutputFormat::kSafetensors : producer::OutputFormat::kNpy;
  ProgressBar bar(!args.quiet);
  options.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); };

  auto report = producer::Apply(*inputs, options);
  bar.Finish();
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

}  // namespace iotx::cli
