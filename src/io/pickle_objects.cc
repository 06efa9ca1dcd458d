#include "io/pickle_objects.h"

#include <array>

namespace iotx::io::pickle {
namespace {

struct AllowedGlobal {
  std::string_view module;
  std::string_view name;
  Global global;
};

// What numpy 1.x and 2.x write for arrays (ndarray and dtype pickle as "numpy ndarray" and
// "numpy dtype", their __module__), plus the multiarray spellings SPEC section 6 lists.
constexpr std::array<AllowedGlobal, 13> kAllowList = {{
    {"numpy.core.multiarray", "_reconstruct", Global::kReconstruct},
    {"numpy._core.multiarray", "_reconstruct", Global::kReconstruct},
    {"numpy.core.numeric", "_frombuffer", Global::kFromBuffer},
    {"numpy._core.numeric", "_frombuffer", Global::kFromBuffer},
    {"numpy", "ndarray", Global::kNdarray},
    {"numpy.core.multiarray", "ndarray", Global::kNdarray},
    {"numpy._core.multiarray", "ndarray", Global::kNdarray},
    {"numpy", "dtype", Global::kDType},
    {"numpy.core.multiarray", "dtype", Global::kDType},
    {"numpy._core.multiarray", "dtype", Global::kDType},
    {"_codecs", "encode", Global::kCodecsEncode},
    {"__builtin__", "bytes", Global::kBytes},
    {"builtins", "bytes", Global::kBytes},
}};

std::string_view GlobalName(Global global) {
  switch (global) {
    case Global::kReconstruct:
      return "numpy.core.multiarray._reconstruct";
    case Global::kFromBuffer:
      return "numpy.core.numeric._frombuffer";
    case Global::kNdarray:
      return "numpy.ndarray";
    case Global::kDType:
      return "numpy.dtype";
    case Global::kCodecsEncode:
      return "_codecs.encode";
    case Global::kBytes:
      return "builtins.bytes";
  }
  return "a global";
}

// Names from a hostile file go into messages: printable ASCII only, and not too long.
std::string Printable(std::string_view text) {
  constexpr size_t kMaxShown = 80;
  std::string out;
  for (char c : text.substr(0, kMaxShown)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > kMaxShown) out += "...";
  return out;
}

Unexpected Format(const std::string& message) {
  return Fail(ErrorCode::kPickleFormat, message);
}
Unexpected Unsupported(const std::string& message) {
  return Fail(ErrorCode::kPickleUnsupportedValue, message);
}

template <class T>
const T* As(const Value& value) {
  return std::get_if<T>(&value.v);
}

// numpy's spelling of a dtype: "<f4", "|u1", "|V2", "<U3".
std::string DescrString(const DescrInfo& info) {
  size_t count = info.kind == 'U' ? info.itemsize / 4 : info.itemsize;
  return info.byteorder + std::string(1, info.kind) + std::to_string(count);
}

Expected<Dims> ReadShape(const Value& value, std::string_view what) {
  const Tuple* tuple = As<Tuple>(value);
  if (tuple == nullptr)
    return Format(std::string(what) + " is " + Describe(value) + ", expected a tuple");
  if (tuple->items.size() > kMaxRank) {
    return Unsupported(std::string(what) + " has " + std::to_string(tuple->items.size()) +
                       " dimensions, at most " + std::to_string(kMaxRank) + " supported");
  }
  Dims shape;
  for (const ValuePtr& item : tuple->items) {
    const int64_t* dim = As<int64_t>(*item);
    if (dim == nullptr || *dim < 0) {
      return Format(std::string(what) + " must hold non-negative integers");
    }
    shape.push_back(*dim);
  }
  return shape;
}

// The bytes a str whose characters are all below U+0100 stands for: how protocol 2 carries
// bytes (`_codecs.encode(data.decode('latin1'), 'latin1')`). Checked and measured here, but
// not decoded: many arrays may share one memoized str, and each is converted on its own when
// it is used.
Expected<Bytes> Latin1Bytes(std::string_view utf8, const std::shared_ptr<const void>& owner) {
  const auto data = std::as_bytes(std::span<const char>(utf8.data(), utf8.size()));
  auto size = Latin1Size(data);
  if (!size) return Format(size.error().message);
  return Bytes{data, owner, /*latin1=*/true, *size};
}

Expected<Bytes> BytesOf(const Value& value, std::string_view what,
                        const std::shared_ptr<const void>& owner) {
  if (const Bytes* bytes = As<Bytes>(value)) return *bytes;
  // numpy's __setstate__ also takes a str and encodes it as latin-1 (Python 2 pickles).
  if (const Str* str = As<Str>(value)) return Latin1Bytes(str->utf8, owner);
  return Format(std::string(what) + " is " + Describe(value) + ", expected bytes");
}

// Checks that `data` holds exactly the array's bytes and describes the tensor.
Expected<Tensor> BuildArray(const DescrInfo& info, StoredLayout layout, const Bytes& data) {
  if (info.itemsize == 0) return Unsupported("arrays of zero-size elements are not supported");
  std::optional<int64_t> count = CheckedProduct(layout.memory_shape);
  if (!count || static_cast<uint64_t>(*count) > SIZE_MAX / info.itemsize ||
      static_cast<size_t>(*count) * info.itemsize != data.size) {
    return Format("array data has " + std::to_string(data.size) + " bytes, but shape " +
                  ToString(layout.memory_shape) + " of '" + DescrString(info) + "' needs " +
                  (count && static_cast<uint64_t>(*count) <= SIZE_MAX / info.itemsize
                       ? std::to_string(static_cast<size_t>(*count) * info.itemsize)
                       : std::string("more than fits in memory")));
  }
  return DescribeStored("", DescrString(info), info, std::move(layout), data.data, data.owner,
                        data.latin1);
}

Expected<Value> CallDType(const Tuple& args) {
  const Str* spec = args.items.empty() ? nullptr : As<Str>(*args.items[0]);
  if (spec == nullptr || args.items.size() > 3) {
    return Format("numpy.dtype expects a type string like 'f4' as its first argument");
  }
  std::string_view text = spec->utf8;
  if (!text.empty() && (text[0] == 'O')) return Unsupported("object arrays are not supported");
  if (!text.empty() && (text[0] == 'M' || text[0] == 'm')) {
    return Unsupported("datetime and timedelta arrays are not supported in pickles");
  }
  std::string descr = "|";
  descr.append(text);
  std::optional<DescrInfo> info = ParseDescr(descr);
  if (!info || info->kind == 'x') {
    return Format("numpy.dtype('" + Printable(text) + "'): not a numpy type string");
  }
  info->byteorder = ByteSwapUnit(*info) > 1 ? '<' : '|';
  return Value{DTypeObj{*info, false}};
}

Expected<Value> CallFromBuffer(const Tuple& args, const std::shared_ptr<const void>& owner) {
  if (args.items.size() != 4 && args.items.size() != 5) {
    return Format("_frombuffer expects (buffer, dtype, shape, order[, axes])");
  }
  const DTypeObj* dtype = As<DTypeObj>(*args.items[1]);
  if (dtype == nullptr) return Format("_frombuffer's dtype is " + Describe(*args.items[1]));
  IOTX_ASSIGN_OR_RETURN(Bytes data, BytesOf(*args.items[0], "_frombuffer's buffer", owner));
  IOTX_ASSIGN_OR_RETURN(Dims shape, ReadShape(*args.items[2], "_frombuffer's shape"));
  const Str* order = As<Str>(*args.items[3]);
  StoredLayout layout;
  if (order != nullptr && order->utf8 == "C" && args.items.size() == 4) {
    layout.memory_shape = shape;
  } else if (order != nullptr && order->utf8 == "F" && args.items.size() == 4) {
    layout = FortranLayout(shape);
  } else if (order != nullptr && order->utf8 == "K" && args.items.size() == 5) {
    // numpy: frombuffer(buf).reshape(shape, order='C').transpose(axes)
    IOTX_ASSIGN_OR_RETURN(layout.axes, ReadShape(*args.items[4], "_frombuffer's axes"));
    std::vector<bool> seen(shape.size(), false);
    bool valid = layout.axes.size() == shape.size();
    for (int64_t axis : layout.axes) {
      valid = valid && axis < static_cast<int64_t>(shape.size()) && !seen[axis];
      if (valid) seen[axis] = true;
    }
    if (!valid)
      return Format("_frombuffer's axes " + ToString(layout.axes) +
                    " are not a permutation of the " + std::to_string(shape.size()) +
                    " dimensions");
    layout.memory_shape = shape;
  } else {
    return Format("_frombuffer's order must be 'C' or 'F', or 'K' with axes");
  }
  IOTX_ASSIGN_OR_RETURN(Tensor array, BuildArray(dtype->info, std::move(layout), data));
  return Value{ArrayObj{std::move(array)}};
}

Status SetDTypeState(DTypeObj& dtype, const Tuple& state) {
  // (version, byteorder, subarray, names, fields, elsize, alignment, flags[, metadata]):
  // version 3 has 8 items, version 4 adds metadata.
  const size_t n = state.items.size();
  const int64_t* version = n > 0 ? As<int64_t>(*state.items[0]) : nullptr;
  if ((n != 8 && n != 9) || version == nullptr || *version != static_cast<int64_t>(n) - 5) {
    return Format("numpy dtype state must be a version 3 or 4 tuple of 8 or 9 items");
  }
  const Str* order = As<Str>(*state.items[1]);
  if (order == nullptr || order->utf8.size() != 1 ||
      std::string_view("<>|=").find(order->utf8[0]) == std::string_view::npos) {
    return Format("numpy dtype byte order must be one of '<', '>', '|', '='");
  }
  for (size_t i : {2, 3, 4}) {
    if (!As<NoneValue>(*state.items[i])) {
      return Unsupported("structured and subarray dtypes are not supported");
    }
  }
  const int64_t* elsize = As<int64_t>(*state.items[5]);
  if (elsize == nullptr) return Format("numpy dtype element size is not an integer");
  if (std::string_view("VSU").find(dtype.info.kind) != std::string_view::npos && *elsize >= 0) {
    dtype.info.itemsize = static_cast<size_t>(*elsize);
  }
  if (ByteSwapUnit(dtype.info) > 1) dtype.info.byteorder = order->utf8[0] == '>' ? '>' : '<';
  dtype.has_state = true;
  return Ok();
}

Status SetArrayState(ArrayObj& array, const Tuple& state,
                     const std::shared_ptr<const void>& owner) {
  // (version, shape, dtype, is_fortran, data), or version 0's (shape, dtype, is_fortran, data).
  const size_t n = state.items.size();
  if (n != 4 && n != 5) return Format("numpy array state must be a tuple of 4 or 5 items");
  const size_t first = n - 4;
  IOTX_ASSIGN_OR_RETURN(Dims shape, ReadShape(*state.items[first], "array shape"));
  const DTypeObj* dtype = As<DTypeObj>(*state.items[first + 1]);
  if (dtype == nullptr) return Format("array dtype is " + Describe(*state.items[first + 1]));
  const bool* fortran = As<bool>(*state.items[first + 2]);
  if (fortran == nullptr) return Format("array is_fortran flag is not a bool");
  IOTX_ASSIGN_OR_RETURN(Bytes data, BytesOf(*state.items[first + 3], "array data", owner));
  StoredLayout layout;
  if (*fortran) {
    layout = FortranLayout(shape);
  } else {
    layout.memory_shape = shape;
  }
  IOTX_ASSIGN_OR_RETURN(array.array, BuildArray(dtype->info, std::move(layout), data));
  return Ok();
}

}  // namespace

std::string Describe(const Value& value) {
  struct Visitor {
    std::string operator()(const NoneValue&) const { return "None"; }
    std::string operator()(bool) const { return "a bool"; }
    std::string operator()(int64_t) const { return "an int"; }
    std::string operator()(double) const { return "a float"; }
    std::string operator()(const Str&) const { return "a str"; }
    std::string operator()(const Bytes&) const { return "bytes"; }
    std::string operator()(const Tuple&) const { return "a tuple"; }
    std::string operator()(const Dict&) const { return "a dict"; }
    std::string operator()(const Opaque& o) const { return std::string(o.what); }
    std::string operator()(Global g) const { return std::string(GlobalName(g)); }
    std::string operator()(const DTypeObj&) const { return "a numpy dtype"; }
    std::string operator()(const ArrayObj& a) const {
      return a.array ? "a numpy array" : "a numpy array without its state";
    }
  };
  return std::visit(Visitor{}, value.v);
}

Expected<Global> ResolveGlobal(std::string_view module, std::string_view name) {
  for (const AllowedGlobal& allowed : kAllowList) {
    if (module == allowed.module && name == allowed.name) return allowed.global;
  }
  std::string hint;
  if (name == "scalar" &&
      (module == "numpy.core.multiarray" || module == "numpy._core.multiarray")) {
    hint = " (a numpy scalar: only numpy arrays are supported as values)";
  }
  return Fail(ErrorCode::kPickleForbidden,
              "global '" + Printable(module) + "." + Printable(name) +
                  "' is not on the allow-list for pickled numpy arrays" + hint +
                  "; refused without running anything");
}

Expected<Value> Call(Global callable, const Tuple& args,
                     const std::shared_ptr<const void>& owner) {
  switch (callable) {
    case Global::kReconstruct:
      // _reconstruct(ndarray, (0,), b'b') makes an empty array; BUILD fills it in.
      if (args.items.size() != 3 || As<Global>(*args.items[0]) == nullptr ||
          *As<Global>(*args.items[0]) != Global::kNdarray) {
        return Format("_reconstruct expects (numpy.ndarray, shape, typecode)");
      }
      return Value{ArrayObj{}};
    case Global::kFromBuffer:
      return CallFromBuffer(args, owner);
    case Global::kDType:
      return CallDType(args);
    case Global::kCodecsEncode: {
      const Str* text = args.items.size() == 2 ? As<Str>(*args.items[0]) : nullptr;
      const Str* encoding = args.items.size() == 2 ? As<Str>(*args.items[1]) : nullptr;
      if (text == nullptr || encoding == nullptr ||
          (encoding->utf8 != "latin1" && encoding->utf8 != "latin-1")) {
        return Format("_codecs.encode expects (str, 'latin1')");
      }
      IOTX_ASSIGN_OR_RETURN(Bytes bytes, Latin1Bytes(text->utf8, owner));
      return Value{std::move(bytes)};
    }
    case Global::kBytes:
      if (!args.items.empty()) return Format("bytes() is only expected without arguments");
      return Value{Bytes{}};
    case Global::kNdarray:
      break;
  }
  return Format("numpy.ndarray is called directly; numpy pickles call _reconstruct");
}

Status SetState(Value& obj, const Value& state, const std::shared_ptr<const void>& owner) {
  const Tuple* tuple = As<Tuple>(state);
  if (DTypeObj* dtype = std::get_if<DTypeObj>(&obj.v)) {
    if (dtype->has_state) return Format("BUILD applied twice to one dtype");
    if (tuple == nullptr) return Format("numpy dtype state is " + Describe(state));
    return SetDTypeState(*dtype, *tuple);
  }
  if (ArrayObj* array = std::get_if<ArrayObj>(&obj.v)) {
    if (array->array) return Format("BUILD applied to an array that already has its data");
    if (tuple == nullptr) return Format("numpy array state is " + Describe(state));
    return SetArrayState(*array, *tuple, owner);
  }
  return Format("BUILD on " + Describe(obj) + "; only numpy arrays and dtypes are expected");
}

Status SetItem(Dict& dict, const Value& key, const Value& value) {
  const Str* name = As<Str>(key);
  if (name == nullptr) {
    return Unsupported("dict key is " + Describe(key) + ", expected a str (the input name)");
  }
  const ArrayObj* array = As<ArrayObj>(value);
  if (array == nullptr || !array->array) {
    return Fail(Error(ErrorCode::kPickleUnsupportedValue,
                      "value is " + Describe(value) + ", expected a numpy array")
                    .AtKey(std::string(name->utf8)));
  }
  std::string key_text(name->utf8);
  auto [it, inserted] = dict.index.try_emplace(key_text, dict.items.size());
  Tensor tensor = *array->array;
  tensor.name = key_text;
  if (inserted) {
    dict.items.push_back(std::move(tensor));
  } else {
    dict.items[it->second] = std::move(tensor);  // Python: a repeated key keeps its place
  }
  return Ok();
}

}  // namespace iotx::io::pickle
