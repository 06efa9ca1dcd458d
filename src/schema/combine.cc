// SPEC section 4: adding one partition's specs to the accumulated map.
#include "schema/netlist.h"

namespace iotx {

Status Combine(SpecMap& acc, const SpecMap& local,
               const std::set<std::string, std::less<>>& forbidden) {
  // Check everything before inserting anything, so a failed combine leaves `acc` as it was.
  // Within `local` names are unique (SpecMap keeps the first), so only `acc` can collide.
  for (const NamedSpec& entry : local) {
    // The original checks for a duplicate before the forbidden set; so does this.
    if (acc.Contains(entry.input_name)) {
      return Fail(ErrorCode::kDuplicateIoTranspose,
                  "Duplicate io_transpose found for input: " + entry.input_name);
    }
    if (forbidden.contains(entry.input_name)) {
      return Fail(ErrorCode::kForbiddenIoTranspose,
                  "Forbidden io_transpose found for input: " + entry.input_name);
    }
  }
  for (const NamedSpec& entry : local) acc.TryEmplace(entry.input_name, entry.spec);
  return Ok();
}

CombinedSpecs CombinePartitions(std::span<const PartitionSpecs> partitions,
                                const std::set<std::string, std::less<>>& forbidden) {
  CombinedSpecs combined;
  for (const PartitionSpecs& partition : partitions) {
    for (const NamedSpec& entry : partition.specs) {
      // One spec at a time, so every clash is found, not only the first of a file.
      SpecMap one;
      one.TryEmplace(entry.input_name, entry.spec);
      if (Status s = Combine(combined.specs, one, forbidden); !s) {
        combined.errors.push_back(std::move(s).error().InFile(partition.file));
      }
    }
  }
  return combined;
}

Status RequireNetlistFor(size_t modular_files, bool netlist_given) {
  if (modular_files < 2 || netlist_given) return Ok();
  return Fail(ErrorCode::kNetlistRequired,
              std::to_string(modular_files) +
                  " modular io_transposes files need a netlist (hlo_netlist.json) to combine "
                  "them; give one");
}

}  // namespace iotx
