// A parser for the small subset of Python literal syntax a .npy header uses:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// It builds values only, never evaluates anything, and bounds nesting depth, so any header
// text is safe to feed it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iotx/status.h"

namespace iotx::io {

struct PyLiteral {
  enum class Kind { kStr, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string str;               // kStr (escapes decoded; bytes as in the header)
  int64_t integer = 0;           // kInt
  bool boolean = false;          // kBool
  std::vector<PyLiteral> items;  // kTuple, kList; kDict: key, value, key, value, ...
};

// What a literal is, for messages: "a string", "a tuple", ...
std::string_view PyKindName(PyLiteral::Kind kind);

// Parses `text` as one Python literal surrounded by optional whitespace. Supports strings
// ('...' or "...", optional u/b prefix, the common backslash escapes), decimal integers that
// fit in int64 (a Python 2 'L' suffix allowed), True, False, None, tuples (including "(n,)"
// and "()"), lists and dicts, with trailing commas. Errors are kNpyFormat with the offset.
Expected<PyLiteral> ParsePyLiteral(std::string_view text);

}  // namespace iotx::io
