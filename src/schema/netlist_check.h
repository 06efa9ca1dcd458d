// The one walk over an hlo_netlist.json document that both ParseNetlist (first problem) and
// ValidateNetlist (every problem) use.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "schema/netlist.h"

namespace iotx::schema {

struct NetlistCheck {
  Netlist netlist;               // every name that was a string
  std::vector<Error> errors;     // the problems in SPEC order (kMaxListedErrors at most)
  size_t errors_not_listed = 0;  // problems found beyond those listed
};

// One walk over the text, no JSON document built; at most 65,536 partitions (kJsonTooLarge).
// Out of memory is one kOutOfMemory error, never an exception.
NetlistCheck CheckNetlist(std::string_view json_text, const std::string& file);

}  // namespace iotx::schema
