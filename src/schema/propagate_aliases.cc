// SPEC section 3: how a transpose declared on a partition's input reaches the user-facing
// input. The source leaves the exact alias rule unresolved; this is the one place it lives.
#include <unordered_set>

#include "schema/netlist.h"

namespace iotx {

void PropagateAliases(const Netlist& netlist, SpecMap& specs, std::vector<Warning>* warnings) {
  // Identity aliasing: a partition input named X is the user-facing input X, so every spec
  // already sits under the right name and `specs` is unchanged. A name in no partition's
  // Inputs is kept too, but it is what a better alias rule would have to map, so say so.
  if (warnings == nullptr) return;
  std::unordered_set<std::string_view> inputs;
  for (const Partition& partition : netlist.partitions) {
    inputs.insert(partition.inputs.begin(), partition.inputs.end());
  }
  for (const NamedSpec& entry : specs) {
    if (!inputs.contains(entry.input_name)) {
      warnings->push_back(
          Warning(ErrorCode::kUnknownInput,
                  "io_transpose for \"" + entry.input_name +
                      "\" names no partition input of the netlist; kept under its own name"));
    }
  }
}

}  // namespace iotx
