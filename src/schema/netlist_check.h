// The one walk over an hlo_netlist.json document that both ParseNetlist (first problem) and
// ValidateNetlist (every problem) use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/netlist.h"

namespace iotx::schema {

struct NetlistCheck {
  Netlist netlist;            // every name that was a string
  std::vector<Error> errors;  // every problem, in document order
};

NetlistCheck CheckNetlist(std::string_view json_text, const std::string& file);

}  // namespace iotx::schema
