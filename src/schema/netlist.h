// hlo_netlist.json (SPEC section 3) and combining per-partition specs (section 4).
#pragma once

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx {

struct Partition {
  std::string id;  // the object key when PartMap is an object, else the array index
  std::vector<std::string> inputs;
  std::vector<std::string> intermediate_ios;
};

struct Netlist {
  std::vector<Partition> partitions;          // PartMap, in array or key order
  std::vector<std::string> intermediate_ios;  // root IntermediateIOs: the forbidden set
};

// PartMap may be an array or an object; a missing list is empty; a non-string name is
// "type must be string, but is <type>"; other sibling keys are ignored. The first problem is
// returned, naming the file and the JSON path as key ("PartMap[1].PartIOs.Inputs[0]").
Expected<Netlist> ParseNetlist(std::string_view json_text, const std::string& file_name);
// Reads and parses a file; a missing or unreadable file is kIoOpen / kIoRead.
Expected<Netlist> ReadNetlist(const std::string& path);
// Every problem in the text, not only the first (for `iotx validate`); none for a valid file.
std::vector<Error> ValidateNetlist(std::string_view json_text,
                                            const std::string& file_name);

// The names that may not carry a transpose: the netlist's root IntermediateIOs.
std::set<std::string, std::less<>> ForbiddenSet(const Netlist& netlist);

// Adds each spec of `local` to `acc`: a name already in `acc` is NCC_IIOT001, a name in
// `forbidden` is NCC_IIOT002. On error `acc` is left unchanged.
Status Combine(SpecMap& acc, const SpecMap& local,
                        const std::set<std::string, std::less<>>& forbidden);

// One partition's io_transposes, as read from its file.
struct PartitionSpecs {
  std::string file;
  SpecMap specs;
};

// The modular set as the wrapper combines it: the partitions' specs in order, each checked
// against the specs of the partitions before it (NCC_IIOT001) and the forbidden set
// (NCC_IIOT002). Every clash is an error in its partition's file and its spec is left out, so
// `specs` holds what did combine; the loader stops at the first error, `iotx validate` reports
// them all.
struct CombinedSpecs {
  SpecMap specs;
  std::vector<Error> errors;
};
CombinedSpecs CombinePartitions(std::span<const PartitionSpecs> partitions,
                                const std::set<std::string, std::less<>>& forbidden);

// Two or more modular files cannot be told apart without the topology: NCC_IHNW001 unless a
// netlist is given.
Status RequireNetlistFor(size_t modular_files, bool netlist_given);

// A transpose declared on a partition's input applies to the user-facing input of that name
// (identity aliasing). A transposed name that is in no partition's Inputs gets a warning.
// The one place a better alias rule would change.
void PropagateAliases(const Netlist& netlist, SpecMap& specs,
                               std::vector<Warning>* warnings);

}  // namespace iotx
