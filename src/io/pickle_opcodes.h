// Python pickle opcodes (Lib/pickletools.py), the ones iotx reads, writes or names in errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace iotx::io::pickle {

enum Opcode : uint8_t {
#define IOTX_PICKLE_OPCODE(enumerator, byte, name, arg_kind, arg_size) enumerator = byte,
#include "io/pickle_opcodes.inc"
#undef IOTX_PICKLE_OPCODE
};

// pickletools' name of an opcode ("BINUNICODE"), or "unknown".
std::string_view OpcodeName(uint8_t opcode);

// How an opcode's argument is laid out, to step over it without interpreting it.
enum class ArgKind { kNone, kFixed, kLength, kLine, kTwoLines, kUnknown };
struct ArgFormat {
  ArgKind kind;
  size_t size;  // kFixed: the argument's bytes; kLength: the length field's bytes
};
// kUnknown for a byte that is no opcode iotx knows.
ArgFormat ArgFormatOf(uint8_t opcode);

}  // namespace iotx::io::pickle
