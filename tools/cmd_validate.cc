// `iotx validate`: check io_transposes.json and hlo_netlist.json files and report every
// problem found, not just the first (SPEC sections 1, 3 and 4).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_output.h"
#include "command.h"
#include "iotx/io_transposes.h"
#include "schema/netlist.h"
#include "schema/io_transposes_check.h"
#include "schema/netlist_check.h"
#include "files/read_text_file.h"

namespace iotx::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> files;
  std::string netlist;
  std::vector<std::string> modular;
  bool json = false;
};

// Everything found, plus one summary line per file checked.
class Report {
 public:
  void Add(std::vector<Error> errors) {
    for (Error& e : errors) errors_.push_back(std::move(e));
  }
  void Add(Error error) { errors_.push_back(std::move(error)); }
  void Warn(std::vector<Warning> warnings, const std::string& file) {
    for (Warning& w : warnings) {
      if (w.file.empty()) w.file = file;
      warnings_.push_back(std::move(w));
    }
  }
  size_t error_count() const { return errors_.size(); }
  void Summary(const std::string& what, size_t errors_before, const std::string& ok_detail) {
    const size_t found = errors_.size() - errors_before;
    summaries_.push_back(what + ": " +
                         (found == 0
                              ? "ok, " + ok_detail
                              : std::to_string(found) + (found == 1 ? " error" : " errors")));
  }

  int Print(bool json) const {
    if (json) {
      std::cout << DiagnosticsToJson(errors_, warnings_) << '\n';
    } else {
      for (const Warning& w : warnings_) PrintWarning(w);
      for (const Error& e : errors_) PrintError(e);
      for (const std::string& line : summaries_) std::cout << line << '\n';
    }
    return errors_.empty() ? kExitOk : kExitFailure;
  }

 private:
  std::vector<Error> errors_;
  std::vector<Warning> warnings_;
  std::vector<std::string> summaries_;
};

std::string Count(size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::optional<Netlist> CheckNetlistFile(const std::string& path, Report& report) {
  const size_t before = report.error_count();
  Expected<std::string> text = files::ReadTextFile(path);
  if (!text) {
    report.Add(std::move(text).error());
    report.Summary(path, before, "");
    return std::nullopt;
  }
  schema::NetlistCheck check = schema::CheckNetlist(*text, path);
  const bool ok = check.errors.empty();
  report.Add(std::move(check.errors));
  report.Summary(
      path, before,
      Count(check.netlist.partitions.size(), "partition", "partitions") + ", " +
          Count(check.netlist.intermediate_ios.size(), "intermediate name", "intermediate names"));
  if (!ok) return std::nullopt;
  return std::move(check.netlist);
}

// The specs of every element that passed; problems go to the report.
SpecMap CheckIoTransposesFile(const std::string& path, Report& report) {
  const size_t before = report.error_count();
  Expected<std::string> text = files::ReadTextFile(path);
  if (!text) {
    report.Add(std::move(text).error());
    report.Summary(path, before, "");
    return {};
  }
  ParseOptions options;
  options.duplicate_name_is_error = true;  // validate is strict where the consumer only warns
  schema::IoTransposesCheck check = schema::CheckIoTransposes(*text, path, options);
  report.Add(std::move(check.errors));
  report.Warn(std::move(check.warnings), path);
  report.Summary(path, before, Count(check.specs.size(), "io_transpose", "io_transposes"));
  return std::move(check.specs);
}

void WarnAliases(const std::optional<Netlist>& netlist, SpecMap& specs, const std::string& file,
                 Report& report) {
  if (!netlist) return;
  std::vector<Warning> warnings;
  PropagateAliases(*netlist, specs, &warnings);
  report.Warn(std::move(warnings), file);
}

// The modular set as the wrapper combines it: every spec of every file, checked against the
// specs of the files before it (NCC_IIOT001) and the netlist's forbidden set (NCC_IIOT002).
void CheckModularSet(const ValidateOptions& options, const std::optional<Netlist>& netlist,
                     Report& report) {
  const size_t before = report.error_count();
  if (options.modular.size() >= 2 && options.netlist.empty()) {
    report.Add(Error(
        ErrorCode::kNetlistRequired,
        Count(options.modular.size(), "modular io_transposes file", "modular io_transposes files") +
            " need a netlist to be combined; give --netlist hlo_netlist.json"));
  }
  const auto forbidden = netlist ? ForbiddenSet(*netlist) : std::set<std::string, std::less<>>{};
  SpecMap combined;
  for (const std::string& path : options.modular) {
    const SpecMap local = CheckIoTransposesFile(path, report);
    SpecMap accepted;
    for (const NamedSpec& entry : local) {
      // One spec at a time, so every clash is reported, not only the first of a file.
      SpecMap one;
      one.TryEmplace(entry.input_name, entry.spec);
      if (Status s = Combine(combined, one, forbidden); !s) {
        report.Add(std::move(s).error().InFile(path));
      } else {
        accepted.TryEmplace(entry.input_name, entry.spec);
      }
    }
    WarnAliases(netlist, accepted, path, report);
  }
  report.Summary("modular set (" + Count(options.modular.size(), "file", "files") + ")", before,
                 Count(combined.size(), "io_transpose", "io_transposes") + " combined");
}

int RunValidate(const ValidateOptions& options) {
  Report report;
  std::optional<Netlist> netlist;
  if (!options.netlist.empty()) netlist = CheckNetlistFile(options.netlist, report);
  for (const std::string& path : options.files) {
    SpecMap specs = CheckIoTransposesFile(path, report);
    WarnAliases(netlist, specs, path, report);
  }
  if (!options.modular.empty()) CheckModularSet(options, netlist, report);
  return report.Print(options.json);
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check io_transposes.json and hlo_netlist.json files; report every problem found");
  auto options = std::make_shared<ValidateOptions>();
  cmd->add_option("FILE", options->files,
                  "io_transposes.json files, each checked on its own, e.g. io_transposes.json");
  cmd->add_option("--netlist", options->netlist,
                  "hlo_netlist.json to check; also gives the forbidden set and the partition\n"
                  "inputs for the other files, e.g. --netlist hlo_netlist.json");
  cmd->add_option("--modular", options->modular,
                  "Per-partition io_transposes files, checked and then combined as the wrapper\n"
                  "does (repeated names across files, forbidden intermediates), e.g.\n"
                  "--modular sg00/io_transposes.json sg01/io_transposes.json")
      ->expected(1, -1);
  cmd->add_flag("--json", options->json,
                "Print the diagnostics as a JSON array on stdout instead of text on stderr");
  cmd->footer(
      "Every element is checked: keys and JSON types, transpose a permutation, dims >= 0,\n"
      "product within int64, input_name usable in a file name, no input_name repeated in a file.\n"
      "Put FILE arguments before --modular (which takes every file after it).\n"
      "\n"
      "Examples:\n"
      "  iotx validate examples/io_transposes.json\n"
      "  iotx validate --netlist hlo_netlist.json --modular sg00/io_transposes.json "
      "sg01/io_transposes.json\n"
      "  iotx validate --json io_transposes.json\n"
      "\n"
      "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 usage error.");
  cmd->callback([&ctx, options] {
    if (options->files.empty() && options->netlist.empty() && options->modular.empty()) {
      throw CLI::ValidationError(
          "validate", "nothing to check: give FILE, --netlist FILE or --modular FILE...");
    }
    ctx.exit_code = RunValidate(*options);
  });
}

}  // namespace iotx::cli
