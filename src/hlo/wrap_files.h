// The hlo-neff-wrapper's whole job on files, shared by `iotx wrap` and the Python module's
// iotx.wrap(): load the io_transposes (single or modular, with the netlist), read the module
// and the NEFF, wrap (wrap.h), and write the output atomically. Prints nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iotx/status.h"
#include "schema/load.h"

namespace iotx::hlo {

struct WrapFilesRequest {
  LoadRequest io_transposes;  // the specs, as LoadIoTransposes takes them
  std::string hlo;            // the module to wrap
  std::string neff;           // the NEFF, which becomes the custom-call's backend_config
  std::string output;         // written atomically; stale temporaries of killed runs removed
};

struct WrapFilesReport {
  bool produced = false;  // false: nothing to record, nothing written (kNothingToWrapMessage)
  std::vector<Warning> warnings;  // loading's (repeated names, aliasing) and the wrapper's
  size_t num_parameters = 0;
  size_t num_transposed = 0;
  size_t num_zero_sized = 0;
  uint64_t neff_bytes = 0;
};

Expected<WrapFilesReport> WrapFiles(const WrapFilesRequest& request);

}  // namespace iotx::hlo
