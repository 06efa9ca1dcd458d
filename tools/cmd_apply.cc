// `iotx apply`: put tensors into device layout on the host, per an io_transposes file.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_output.h"
#include "core/text.h"
#include "cmd_apply.h"
#include "command.h"
#include "producer/apply.h"
#include "progress_bar.h"
#include "tensor_lines.h"

namespace iotx::cli {
namespace {

static_assert(kDefaultReadBufferMib << 20 == producer::kDefaultReadBufferMax);

// Splits every --input NAME=FILE; false (after saying why) when one is malformed or a name
// repeats.
bool ParseNpyInputs(const std::vector<std::string>& args, std::vector<producer::NpyInput>& out) {
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      std::cerr << "iotx apply: --input expects NAME=FILE.npy, got " << Excerpt(arg) << "\n";
      return false;
    }
    producer::NpyInput input{arg.substr(0, eq), arg.substr(eq + 1)};
    for (const producer::NpyInput& earlier : out) {
      if (earlier.name == input.name) {
        std::cerr << "iotx apply: --input " << Excerpt(input.name) << " is given twice\n";
        return false;
      }
    }
    out.push_back(std::move(input));
  }
  return true;
}

// "K/N" with 0 <= K < N; nullopt (after saying why) otherwise.
std::optional<producer::ShardSelection> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  producer::ShardSelection shard;
  const char* end = text.data() + text.size();
  // Whole numbers that fit: from_chars leaves the field as it was on overflow (0/1 here).
  auto whole = [](const char* from, const char* to, auto& value) {
    const auto [ptr, ec] = std::from_chars(from, to, value);
    return ec == std::errc() && ptr == to;
  };
  const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < text.size() &&
                  whole(text.data(), text.data() + slash, shard.index) &&
                  whole(text.data() + slash + 1, end, shard.count) && shard.count > 0 &&
                  shard.index < shard.count;
  if (!ok) {
    std::cerr << "iotx apply: --shard expects K/N with 0 <= K < N (this host's index and the "
                 "number of hosts), e.g. --shard 0/4; got \""
              << text << "\"\n";
    return std::nullopt;
  }
  return shard;
}

std::string Plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void PrintReport(const producer::ApplyReport& report, const std::string& out_dir, double seconds) {
  for (const producer::TensorReport& tensor : report.tensors) {
    std::cout << "  " << DescribeTensor(tensor, out_dir) << '\n';
  }
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.3f s, %.2f GB/s", seconds,
                seconds > 0 ? static_cast<double>(report.total_bytes) / seconds / 1e9 : 0.0);
  std::cout << "wrote " << Plural(report.files.size(), "file") << " in " << EscapeControl(out_dir)
            << ": " << Plural(report.tensors.size(), "tensor") << ", "
            << BytesWithUnit(report.total_bytes)
            << " (" << rate << ")\n";
  if (!report.skipped.empty()) {
    std::cout << "skipped " << Plural(report.skipped.size(), "shard")
              << " already written completely\n";
  }
  if (report.shards == 0) return;
  if (!report.index.empty()) {
    std::cout << "all " << Plural(report.shards, "shard") << " complete; wrote the index "
              << report.index.string() << '\n';
  } else {
    std::cout << report.incomplete.size() << " of " << Plural(report.shards, "shard")
              << " not complete yet, so no index written: the run that completes the last one "
                 "writes it (or run iotx apply --finish-index once all are done)\n";
  }
}

}  // namespace

int RunApply(const ApplyArgs& args) {
  if (args.input.empty() == args.inputs.empty()) {
    std::cerr << "iotx apply: give either --input NAME=FILE.npy (repeatable) or --inputs FILE\n";
    return kExitUsage;
  }
  std::vector<producer::NpyInput> npy_inputs;
  if (!ParseNpyInputs(args.input, npy_inputs)) return kExitUsage;
  const bool sharded = !args.inputs.empty() && producer::IsShardIndexName(args.inputs);
  if ((!args.shard.empty() || args.finish_index) && !sharded) {
    std::cerr << "iotx apply: --shard and --finish-index need a sharded checkpoint: --inputs "
                 "model.safetensors.index.json\n";
    return kExitUsage;
  }
  if (args.finish_index && !args.shard.empty()) {
    std::cerr << "iotx apply: --finish-index looks at every shard; it takes no --shard\n";
    return kExitUsage;
  }
  producer::ApplyOptions options;
  if (!args.shard.empty()) {
    options.shard = ParseShard(args.shard);
    if (!options.shard) return kExitUsage;
  }
  if (args.finish_index && args.format == "npy") {
    std::cerr << "iotx apply: --finish-index writes a safetensors index; it takes no "
                 "--format npy\n";
    return kExitUsage;
  }

  const auto start = std::chrono::steady_clock::now();
  auto inputs = args.inputs.empty() ? producer::LoadNpyInputs(npy_inputs)
                                    : producer::LoadTensorFile(args.inputs);
  if (!inputs) {
    PrintError(inputs.error());
    return kExitFailure;
  }
  options.io_transposes = args.io_transposes;
  options.out_dir = args.out_dir;
  const bool safetensors =
      args.format.empty() ? inputs->from_safetensors : args.format == "safetensors";
  options.format =
      safetensors ? producer::OutputFormat::kSafetensors : producer::OutputFormat::kNpy;
  options.durability = args.no_sync ? files::Durability::kNoSync : files::Durability::kDurable;
  options.direct_writes = !args.buffered_writes;
  if (args.direct_writes) options.unsynced_direct_above = 0;
  options.read_buffer_max = args.read_buffer_mib << 20;
  options.cached_reads = args.cached_reads == "map"    ? producer::CachedReads::kMapped
                         : args.cached_reads == "copy" ? producer::CachedReads::kCopied
                                                       : producer::CachedReads::kMeasured;
  ProgressBar bar(!args.quiet);
  options.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); };

  auto report = args.finish_index ? producer::FinishIndex(*inputs, options)
                                  : producer::Apply(*inputs, options);
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
