#include "io/pickle_opcodes.h"

namespace iotx::io::pickle {

std::string_view OpcodeName(uint8_t opcode) {
  switch (opcode) {
#define IOTX_PICKLE_OPCODE(enumerator, byte, name, arg_kind, arg_size) \
  case enumerator:                                                     \
    return name;
#include "io/pickle_opcodes.inc"
#undef IOTX_PICKLE_OPCODE
    default:
      return "unknown";
  }
}

ArgFormat ArgFormatOf(uint8_t opcode) {
  switch (opcode) {
#define IOTX_PICKLE_OPCODE(enumerator, byte, name, arg_kind, arg_size) \
  case enumerator:                                                     \
    return {ArgKind::arg_kind, arg_size};
#include "io/pickle_opcodes.inc"
#undef IOTX_PICKLE_OPCODE
    default:
      return {ArgKind::kUnknown, 0};
  }
}

}  // namespace iotx::io::pickle
