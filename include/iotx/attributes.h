// The frontend attributes the wrapper stamps on the AwsNeuronNeff custom-call (SPEC section 5)
// and the runtime reads back (section 7):
//   valid_inputs       "1,1,0,1"                          one flag per entry parameter
//   required_transpose "3,2048,2,128|0,3,2,1;;768,768|1,0" one entry per entry parameter
//   neff_input_names   "input0,input1,..."                 one name per entry parameter
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/export.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx {

inline constexpr std::string_view kValidInputsAttr = "valid_inputs";
inline constexpr std::string_view kRequiredTransposeAttr = "required_transpose";
inline constexpr std::string_view kNeffInputNamesAttr = "neff_input_names";
inline constexpr std::string_view kAwsNeuronNeffTarget = "AwsNeuronNeff";

// "1,1,0,1": '1' for a parameter fed to the device, '0' for a zero-sized one; "" for none.
IOTX_API std::string FormatValidInputs(const std::vector<bool>& valid);
// Exactly `num_parameters` flags, each "0" or "1", joined by ','. `num_parameters`
// disambiguates "" (zero parameters) from a malformed string. Errors are kAttributeSyntax.
IOTX_API Expected<std::vector<bool>> ParseValidInputs(std::string_view text, size_t num_parameters);

// Entries joined by ';', each empty (no transpose) or "<reshape>|<transpose>" with the
// integers joined by ',': "3,2048,2,128|0,3,2,1;;768,768|1,0".
IOTX_API std::string FormatRequiredTranspose(
    std::span<const std::optional<TransposeSpec>> per_parameter);
// Exactly `num_parameters` entries (one parameter without a transpose is ""). Integers are
// plain decimal (no sign, no spaces); every spec must pass ValidateSpec. Errors name the entry
// and have key "required_transpose"; syntax errors are kAttributeSyntax, a spec that is not
// valid keeps ValidateSpec's code.
IOTX_API Expected<std::vector<std::optional<TransposeSpec>>> ParseRequiredTranspose(
    std::string_view text, size_t num_parameters);

// Names joined by ','. A name must be non-empty and hold no ',' to read back (the wrapper
// refuses other names before formatting).
IOTX_API std::string FormatNeffInputNames(std::span<const std::string> names);
// Exactly `num_parameters` non-empty names joined by ','. Errors are kAttributeSyntax.
IOTX_API Expected<std::vector<std::string>> ParseNeffInputNames(std::string_view text,
                                                                size_t num_parameters);

}  // namespace iotx
