// The one diagnostic for a spec that names an input which is not there (IOTX_E117), shared by
// every command that matches specs to tensors.
#pragma once

#include <string>
#include <string_view>

#include "iotx/status.h"

namespace iotx {

// kUnknownInput: "there is a spec for input \"<name>\", which is not among <where> (<known>)",
// at key <name>. `known` lists what there is (ListFirstNames), "none" when empty.
Error UnknownInputError(std::string_view input_name, std::string_view where,
                        std::string_view known);

}  // namespace iotx
