// What the wrapper loads: the single or modular io_transposes files plus the netlist
// (SPEC sections 3 and 4, the original's parseIoTranspose / parseModularIoTransposes).
#include <utility>

#include "schema/load.h"
#include "files/read_text_file.h"
#include "schema/netlist.h"

namespace iotx {
namespace {

Expected<IoTransposes> ParseFile(const std::string& path) {
  Expected<std::string> text = files::ReadTextFile(path);
  if (!text) {
    Error error = std::move(text).error();
    if (error.code == ErrorCode::kIoOpen) {
      error.code = ErrorCode::kIoTransposeOpenFailed;
      error.message = "cannot open io_transposes file (" + error.message + ")";
    }
    return Fail(std::move(error));
  }
  return ParseIoTransposes(*text, path);
}

void Append(std::vector<Warning>& to, std::vector<Warning>&& from) {
  for (Warning& w : from) to.push_back(std::move(w));
}

}  // namespace

Expected<IoTransposes> LoadIoTransposes(const LoadRequest& request) {
  const bool single = request.single_file.has_value();
  const bool modular = !request.modular_files.empty();
  if (single == modular) {
    return Fail(ErrorCode::kInvalidArgument,
                single ? "give either a single io_transposes file or modular ones, not both"
                       : "give a single io_transposes file or a list of modular ones");
  }
  // Checked before anything is read: without the topology the partitions' specs cannot be
  // told apart, whatever the files hold.
  IOTX_RETURN_IF_ERROR(
      RequireNetlistFor(request.modular_files.size(), request.netlist_file.has_value()));
  std::optional<Netlist> netlist;
  if (request.netlist_file) {
    IOTX_ASSIGN_OR_RETURN(netlist, ReadNetlist(*request.netlist_file));
  }

  IoTransposes result;
  if (single) {
    IOTX_ASSIGN_OR_RETURN(result, ParseFile(*request.single_file));
    result.files_read.push_back(*request.single_file);
  } else {
    std::vector<PartitionSpecs> partitions;
    for (const std::string& path : request.modular_files) {
      result.files_read.push_back(path);
      IOTX_ASSIGN_OR_RETURN(IoTransposes local, ParseFile(path));
      partitions.push_back({path, std::move(local.specs)});
      Append(result.warnings, std::move(local.warnings));
    }
    const auto forbidden = netlist ? ForbiddenSet(*netlist) : std::set<std::string, std::less<>>{};
    CombinedSpecs combined = CombinePartitions(partitions, forbidden);
    if (!combined.errors.empty()) return Fail(std::move(combined.errors.front()));
    result.specs = std::move(combined.specs);
  }
  if (netlist) PropagateAliases(*netlist, result.specs, &result.warnings);
  return result;
}

}  // namespace iotx
