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

IOTX_API std::string FormatValidInputs(const std::vector<bool>& valid);
// `num_parameters` disambiguates "" (zero parameters) from a malformed string.
IOTX_API Expected<std::vector<bool>> ParseValidInputs(std::string_view text,
                                                      size_t num_parameters);

IOTX_API std::string FormatRequiredTranspose(
    std::span<const std::optional<TransposeSpec>> per_parameter);
// Each entry is empty or "<reshape>|<transpose>"; every spec passes ValidateSpec.
IOTX_API Expected<std::vector<std::optional<TransposeSpec>>> ParseRequiredTranspose(
    std::string_view text, size_t num_parameters);

IOTX_API std::string FormatNeffInputNames(std::span<const std::string> names);
IOTX_API Expected<std::vector<std::string>> ParseNeffInputNames(std::string_view text,
                                                                size_t num_parameters);

}  // namespace iotx
