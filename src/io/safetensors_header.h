// The JSON header of a safetensors file, read with a SAX handler straight into what it
// describes: no JSON DOM, shapes capped at kMaxRank dimensions, nesting capped, duplicate keys
// refused. Memory stays proportional to the number of tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/safetensors.h"
#include "iotx/status.h"

namespace iotx::io {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  Dims shape;
  uint64_t begin = 0;  // data_offsets, relative to the end of the header
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> tensors;  // in header order
  std::optional<SafetensorsMetadata> metadata;
};

// Parses the header JSON (already checked to be UTF-8). Errors are kSafetensorsFormat with a
// message (and key, for a tensor's problem); the caller adds the file.
Expected<SafetensorsHeader> ParseSafetensorsHeader(std::string_view json);

}  // namespace iotx::io
