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

}  // namespace iotx
