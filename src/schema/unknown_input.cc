#include "schema/unknown_input.h"

namespace iotx {

Error UnknownInputError(std::string_view input_name, std::string_view where,
                        std::string_view known) {
  std::string message = "there is a spec for input \"";
  message += input_name;
  message += "\", which is not among ";
  message += where;
  message += " (";
  message += known;
  message += ")";
  return Error(ErrorCode::kUnknownInput, std::move(message)).AtKey(std::string(input_name));
}

}  // namespace iotx
