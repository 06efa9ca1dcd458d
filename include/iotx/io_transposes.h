// io_transposes.json: a JSON array of {"input_name", "reshape", "transpose"} (SPEC section 1).
// (Loading the single or modular set the wrapper consumes, sections 3 and 4, is compiler-side:
// src/schema/load.h.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/export.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx {

struct IOTX_API IoTransposes {
  SpecMap specs;
  std::vector<Warning> warnings;  // e.g. a repeated input_name (the first one is kept)
  // The io_transposes files LoadIoTransposes read, in order, so a tool can log
  // "Processing io transpose file: <f>" as the original does (the library prints nothing).
  std::vector<std::string> files_read;
};

struct IOTX_API ParseOptions {
  // A repeated input_name keeps the first element and warns (apply, materialize, wrap);
  // `iotx validate` makes it an error instead.
  bool duplicate_name_is_error = false;
};

// Parses the text of an io_transposes.json. `file_name` is only used in diagnostics. Each
// element is checked for shape (keys and JSON types), ValidateSpec and CheckInputName; the
// first problem is returned, naming the file, the element index and the key.
IOTX_API Expected<IoTransposes> ParseIoTransposes(std::string_view json_text,
                                                  const std::string& file_name,
                                                  const ParseOptions& options = {});

// Reads and parses a file. A missing or unreadable file is kIoOpen / kIoRead.
IOTX_API Expected<IoTransposes> ReadIoTransposes(const std::string& path,
                                                 const ParseOptions& options = {});

// Every problem in the text, not only the first (for `iotx validate`); a repeated name is an
// error here. Returns no errors for a valid file.
IOTX_API std::vector<Error> ValidateIoTransposes(std::string_view json_text,
                                                 const std::string& file_name);

// Byte-identical to Python's json.dumps(list_of_dicts) with default arguments: keys in the
// order input_name, reshape, transpose; ", " and ": " separators; non-ASCII as \uXXXX (a
// name that is not UTF-8 is written as Python writes bytes.decode("utf-8", "replace") of it).
IOTX_API std::string SerializeIoTransposes(const SpecMap& specs);

}  // namespace iotx
