// The Python objects a pickle of numpy arrays builds, and the few callables it may call.
//
// Nothing here imports or runs code: each allowed global is an enum value, and "calling" it
// builds a plain C++ value the way numpy would build its object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "io/tensor.h"
#include "iotx/status.h"

namespace iotx::io::pickle {

// The allow-list (SPEC section 6), one value per callable whatever module spelling named it.
enum class Global : uint8_t {
  kReconstruct,   // numpy.core.multiarray._reconstruct (or numpy._core.multiarray)
  kFromBuffer,    // numpy.core.numeric._frombuffer (or numpy._core.numeric), protocol 5
  kNdarray,       // numpy.ndarray
  kDType,         // numpy.dtype
  kCodecsEncode,  // _codecs.encode: protocol 2's way to pickle bytes
  kBytes,         // builtins.bytes (__builtin__.bytes): protocol 2's way to pickle b''
};

struct Value;
using ValuePtr = std::shared_ptr<Value>;

struct NoneValue {};
struct Str {
  std::string_view utf8;  // points into the pickle, valid while it is parsed
};
struct Bytes {
  std::span<const std::byte> data;
  std::shared_ptr<const void> owner;  // the pickle's owner
  // `data` is the UTF-8 text of a latin-1 str standing for `size` bytes (protocol 2); it is
  // decoded only when the tensor is converted, one at a time (Tensor's StoredLayout::latin1).
  bool latin1 = false;
  size_t size = 0;  // the bytes it stands for: data.size() unless latin1
};
struct Tuple {
  std::vector<ValuePtr> items;
};
// A value read only to be refused with a clear message if it becomes a dict value: lists,
// sets (whose contents are dropped) and ints beyond 64 bits.
struct Opaque {
  std::string_view what;      // "a list", "a set", ...
  bool is_container = false;  // APPEND(S)/ADDITEMS may add to it
};
struct DTypeObj {
  DescrInfo info;
  bool has_state = false;  // BUILD ran (sets the byte order; done only once)
};
struct ArrayObj {
  std::optional<Tensor> array;  // empty between _reconstruct and its BUILD
};
struct Dict {
  std::vector<Tensor> items;  // named by their keys
  std::unordered_map<std::string, size_t> index;  // name -> position in items
};

struct Value {
  std::variant<NoneValue, bool, int64_t, double, Str, Bytes, Tuple, Dict, Opaque, Global, DTypeObj,
               ArrayObj>
      v;
  int depth = 1;  // nesting depth (tuples); bounded so nothing recurses deeply
};

// "an int", "a tuple", "a numpy dtype", ... for messages.
std::string Describe(const Value& value);

// The allow-listed callable `module.name`, or kPickleForbidden naming it.
Expected<Global> ResolveGlobal(std::string_view module, std::string_view name);

// The value of `callable(*args)`. Errors: kPickleFormat (arguments numpy would reject),
// kPickleUnsupportedValue (object, structured, datetime or zero-size dtypes).
// `owner` keeps the pickle's bytes alive: arrays point into them.
Expected<Value> Call(Global callable, const Tuple& args, const std::shared_ptr<const void>& owner);

// obj.__setstate__(state) for the arrays and dtypes that BUILD completes.
Status SetState(Value& obj, const Value& state, const std::shared_ptr<const void>& owner);

// Python's `dict[key] = value` for the result dict: only string keys and complete arrays.
// kPickleUnsupportedValue with the key otherwise.
Status SetItem(Dict& dict, const Value& key, const Value& value);

}  // namespace iotx::io::pickle
