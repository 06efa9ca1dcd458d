// `iotx validate`: check io_transposes.json and hlo_netlist.json files and report every
// problem found, not just the first (SPEC sections 1, 3 and 4).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_output.h"
#include "cmd_validate.h"
#include "command.h"
#include "iotx/io_transposes.h"
#include "schema/netlist.h"
#include "schema/io_transposes_check.h"
#include "schema/netlist_check.h"
#include "files/read_text_file.h"

namespace iotx::cli {
namespace {


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
  if (Status s = RequireNetlistFor(options.modular.size(), !options.netlist.empty()); !s) {
    report.Add(std::move(s).error());
  }
  std::vector<PartitionSpecs> partitions;
  for (const std::string& path : options.modular) {
    partitions.push_back({path, CheckIoTransposesFile(path, report)});
  }
  const auto forbidden = netlist ? ForbiddenSet(*netlist) : std::set<std::string, std::less<>>{};
  CombinedSpecs combined = CombinePartitions(partitions, forbidden);
  report.Add(std::move(combined.errors));
  // Aliases are checked per file, on the specs of that file that combined.
  for (const PartitionSpecs& partition : partitions) {
    SpecMap accepted;
    for (const NamedSpec& entry : partition.specs) {
      const TransposeSpec* kept = combined.specs.Find(entry.input_name);
      if (kept != nullptr && *kept == entry.spec) accepted.TryEmplace(entry.input_name, entry.spec);
    }
    WarnAliases(netlist, accepted, partition.file, report);
  }
  report.Summary("modular set (" + Count(options.modular.size(), "file", "files") + ")", before,
                 Count(combined.specs.size(), "io_transpose", "io_transposes") + " combined");
}

}  // namespace

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

}  // namespace iotx::cli
