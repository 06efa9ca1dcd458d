#include "schema/validate_files.h"

#include <set>
#include <utility>

#include "files/read_text_file.h"
#include "iotx/io_transposes.h"
#include "schema/io_transposes_check.h"
#include "schema/netlist_check.h"

namespace iotx::schema {
namespace {

std::string Count(size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

class Collector {
 public:
  explicit Collector(ValidateReport& report) : report_(report) {}

  void Add(std::vector<Error> errors) {
    for (Error& e : errors) report_.errors.push_back(std::move(e));
  }
  void Add(Error error) { report_.errors.push_back(std::move(error)); }
  void Warn(std::vector<Warning> warnings, const std::string& file) {
    for (Warning& w : warnings) {
      if (w.file.empty()) w.file = file;
      report_.warnings.push_back(std::move(w));
    }
  }
  void NotListed(size_t count, const std::string& file) {
    if (count == 0) return;
    report_.not_listed.push_back({file, count});
    not_listed_ += count;
  }
  size_t error_count() const { return report_.errors.size() + not_listed_; }
  void Summary(const std::string& what, size_t errors_before, const std::string& ok_detail) {
    const size_t found = error_count() - errors_before;
    report_.summaries.push_back(
        what + ": " +
        (found == 0 ? "ok, " + ok_detail
                    : std::to_string(found) + (found == 1 ? " error" : " errors")));
  }

 private:
  ValidateReport& report_;
  size_t not_listed_ = 0;
};

std::optional<Netlist> CheckNetlistFile(const std::string& path, Collector& report) {
  const size_t before = report.error_count();
  Expected<std::string> text = files::ReadTextFile(path);
  if (!text) {
    report.Add(std::move(text).error());
    report.Summary(path, before, "");
    return std::nullopt;
  }
  NetlistCheck check = CheckNetlist(*text, path);
  const bool ok = check.errors.empty();
  report.Add(std::move(check.errors));
  report.NotListed(check.errors_not_listed, path);
  report.Summary(
      path, before,
      Count(check.netlist.partitions.size(), "partition", "partitions") + ", " +
          Count(check.netlist.intermediate_ios.size(), "intermediate name", "intermediate names"));
  if (!ok) return std::nullopt;
  return std::move(check.netlist);
}

// The specs of every element that passed; problems go to the report.
SpecMap CheckIoTransposesFile(const std::string& path, Collector& report) {
  const size_t before = report.error_count();
  Expected<std::string> text = files::ReadTextFile(path);
  if (!text) {
    report.Add(std::move(text).error());
    report.Summary(path, before, "");
    return {};
  }
  ParseOptions options;
  options.duplicate_name_is_error = true;  // validate is strict where the consumer only warns
  IoTransposesCheck check = CheckIoTransposes(*text, path, options);
  report.Add(std::move(check.errors));
  report.NotListed(check.errors_not_listed, path);
  report.Warn(std::move(check.warnings), path);
  report.Summary(path, before, Count(check.specs.size(), "io_transpose", "io_transposes"));
  return std::move(check.specs);
}

void WarnAliases(const std::optional<Netlist>& netlist, SpecMap specs, const std::string& file,
                 Collector& report) {
  if (!netlist) return;
  std::vector<Warning> warnings;
  PropagateAliases(*netlist, specs, &warnings);
  report.Warn(std::move(warnings), file);
}

// The modular set as the wrapper combines it: every spec of every file, checked against the
// specs of the files before it (NCC_IIOT001) and the netlist's forbidden set (NCC_IIOT002).
void CheckModularSet(const ValidateRequest& request, const std::optional<Netlist>& netlist,
                     ValidateReport& out, Collector& report) {
  const size_t before = report.error_count();
  if (Status s = RequireNetlistFor(request.modular.size(), !request.netlist.empty()); !s) {
    report.Add(std::move(s).error());
  }
  std::vector<PartitionSpecs> partitions;
  for (const std::string& path : request.modular) {
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
    WarnAliases(netlist, std::move(accepted), partition.file, report);
  }
  report.Summary("modular set (" + Count(request.modular.size(), "file", "files") + ")", before,
                 Count(combined.specs.size(), "io_transpose", "io_transposes") + " combined");
  for (PartitionSpecs& p : partitions) out.checked.push_back(std::move(p));
  out.combined = std::move(combined.specs);
}

}  // namespace

ValidateReport ValidateFiles(const ValidateRequest& request) {
  ValidateReport out;
  Collector report(out);
  std::optional<Netlist> netlist;
  if (!request.netlist.empty()) netlist = CheckNetlistFile(request.netlist, report);
  for (const std::string& path : request.files) {
    SpecMap specs = CheckIoTransposesFile(path, report);
    WarnAliases(netlist, specs, path, report);
    out.checked.push_back({path, std::move(specs)});
  }
  if (!request.modular.empty()) CheckModularSet(request, netlist, out, report);
  return out;
}

}  // namespace iotx::schema
