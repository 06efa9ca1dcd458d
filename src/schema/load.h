// Loading the io_transposes the wrapper consumes (SPEC sections 3 and 4): one file, or one per
// partition combined through the netlist. Compiler-side: not part of the public API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "iotx/io_transposes.h"
#include "iotx/status.h"

namespace iotx {

// What the wrapper loads: exactly one of `single_file` or `modular_files`, plus the netlist.
struct LoadRequest {
  std::optional<std::string> single_file;
  std::vector<std::string> modular_files;
  // Read when set (so it must exist then; a tool with a default path checks presence first);
  // required (NCC_IHNW001) with two or more modular files.
  std::optional<std::string> netlist_file;
};

// Single: parse, then propagate aliases if a netlist is given. Modular: forbidden set from the
// netlist, each file parsed and combined (NCC_IIOT001 / NCC_IIOT002), then aliases propagated.
// An io_transposes file that cannot be opened is NCC_IHNW002; neither or both of single and
// modular is kInvalidArgument. Warnings (repeated names, aliasing) are collected, not printed.
Expected<IoTransposes> LoadIoTransposes(const LoadRequest& request);

}  // namespace iotx
