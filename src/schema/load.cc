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
  if (request.modular_files.size() >= 2 && !request.netlist_file) {
    return Fail(ErrorCode::kNetlistRequired,
                std::to_string(request.modular_files.size()) +
                    " modular io_transposes files need a netlist (hlo_netlist.json) to combine "
                    "them; give one");
  }
  std::optional<Netlist> netlist;
  if (request.netlist_file) {
    IOTX_ASSIGN_OR_RETURN(netlist, ReadNetlist(*request.netlist_file));
  }

  IoTransposes result;
  if (single) {
    IOTX_ASSIGN_OR_RETURN(result, ParseFile(*request.single_file));
    result.files_read.push_back(*request.single_file);
  } else {
    const auto forbidden = netlist ? ForbiddenSet(*netlist) : std::set<std::string, std::less<>>{};
    for (const std::string& path : request.modular_files) {
      result.files_read.push_back(path);
      IOTX_ASSIGN_OR_RETURN(IoTransposes local, ParseFile(path));
      if (Status combined = Combine(result.specs, local.specs, forbidden); !combined) {
        return Fail(std::move(combined).error().InFile(path));
      }
      Append(result.warnings, std::move(local.warnings));
    }
  }
  if (netlist) PropagateAliases(*netlist, result.specs, &result.warnings);
  return result;
}

}  // namespace iotx
