#include "io/npy.h"

#include <cstring>
#include <set>

#include "files/mapped_file.h"
#include "io/py_literal.h"
#include "core/utf8.h"

namespace iotx::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy aligns the data to 64 bytes (ARRAY_ALIGN in numpy/lib/format.py).
constexpr size_t kArrayAlign = 64;
// numpy leaves room in the header for the growing axis to reach 21 digits
// (GROWTH_AXIS_MAX_DIGITS: len(str(8 * 2**64 - 1))).
constexpr size_t kGrowthAxisMaxDigits = 21;
// Real headers are well under 1 KiB (a 64-d shape is ~1.5 KiB); numpy itself refuses headers
// over 10000 characters by default. A larger one is not worth parsing.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

Error NpyError(ErrorCode code, std::string message, std::string_view file_name) {
  return Error(code, std::move(message)).InFile(std::string(file_name));
}

uint32_t ReadLittleEndian(const std::byte* p, size_t n) {
  uint32_t value = 0;
  for (size_t i = n; i-- > 0;) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

// Checks the header dict and fills descr, fortran_order and shape.
Status ReadHeaderDict(const PyLiteral& dict, std::string_view file_name, NpyHeader& header) {
  if (dict.kind != PyLiteral::Kind::kDict) {
    return Fail(NpyError(ErrorCode::kNpyFormat,
                         "header is " + std::string(PyKindName(dict.kind)) + ", expected a dict",
                         file_name));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    const PyLiteral& key = dict.items[i];
    const PyLiteral& value = dict.items[i + 1];
    if (key.kind != PyLiteral::Kind::kStr) {
      return Fail(NpyError(
          ErrorCode::kNpyFormat,
          "header dict key is " + std::string(PyKindName(key.kind)) + ", expected a string",
          file_name));
    }
    auto key_error = [&](ErrorCode code, const std::string& message) {
      return Fail(NpyError(code, message, file_name).AtKey(key.str));
    };
    if (!seen.insert(key.str).second) return key_error(ErrorCode::kNpyFormat, "key repeated");
    if (key.str == "descr") {
      if (value.kind == PyLiteral::Kind::kList) {
        return key_error(ErrorCode::kNpyUnsupported,
                         "structured dtypes (a list of fields) are not supported");
      }
      if (value.kind != PyLiteral::Kind::kStr) {
        return key_error(ErrorCode::kNpyFormat,
                         "is " + std::string(PyKindName(value.kind)) + ", expected a string");
      }
      std::optional<DescrInfo> info = ParseDescr(value.str);
      if (!info || info->itemsize == 0) {
        return key_error(ErrorCode::kNpyUnsupported,
                         "type '" + value.str +
                             "' is not supported: expected a numpy type string with a nonzero "
                             "size like '<f4', '|u1' or '<V2' (object and structured dtypes are "
                             "not)");
      }
      header.descr = value.str;
      header.info = *info;
    } else if (key.str == "fortran_order") {
      if (value.kind != PyLiteral::Kind::kBool) {
        return key_error(ErrorCode::kNpyFormat,
                         "is " + std::string(PyKindName(value.kind)) + ", expected True or False");
      }
      header.fortran_order = value.boolean;
    } else if (key.str == "shape") {
      if (value.kind != PyLiteral::Kind::kTuple) {
        return key_error(ErrorCode::kNpyFormat,
                         "is " + std::string(PyKindName(value.kind)) + ", expected a tuple");
      }
      if (value.items.size() > kMaxRank) {
        return key_error(ErrorCode::kNpyUnsupported, std::to_string(value.items.size()) +
                                                         " dimensions, at most " +
                                                         std::to_string(kMaxRank) + " supported");
      }
      header.shape.clear();
      for (const PyLiteral& dim : value.items) {
        if (dim.kind != PyLiteral::Kind::kInt || dim.integer < 0) {
          return key_error(ErrorCode::kNpyFormat, "dimensions must be non-negative integers");
        }
        header.shape.push_back(dim.integer);
      }
    } else {
      return key_error(ErrorCode::kNpyFormat,
                       "unexpected key; a .npy header has exactly descr, fortran_order, shape");
    }
  }
  for (const char* required : {"descr", "fortran_order", "shape"}) {
    if (!seen.count(required)) {
      return Fail(
          NpyError(ErrorCode::kNpyFormat, "header lacks the key", file_name).AtKey(required));
    }
  }
  return Ok();
}

// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
std::string ShapeRepr(std::span<const int64_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  return out + ")";
}

}  // namespace

Expected<NpyHeader> ParseNpyHeader(std::span<const std::byte> file, std::string_view file_name) {
  const size_t size = file.size();
  if (size < kMagic.size() + 2 || std::memcmp(file.data(), kMagic.data(), kMagic.size()) != 0) {
    return Fail(NpyError(ErrorCode::kNpyFormat,
                         "not a .npy file: it does not start with \"\\x93NUMPY\"", file_name));
  }
  NpyHeader header;
  header.major = static_cast<uint8_t>(file[6]);
  const int minor = static_cast<uint8_t>(file[7]);
  if (header.major < 1 || header.major > 3 || minor != 0) {
    return Fail(NpyError(ErrorCode::kNpyUnsupported,
                         "format version " + std::to_string(header.major) + "." +
                             std::to_string(minor) + "; expected 1.0, 2.0 or 3.0",
                         file_name));
  }
  const size_t length_bytes = header.major == 1 ? 2 : 4;
  const size_t prefix = kMagic.size() + 2 + length_bytes;
  if (size < prefix) {
    return Fail(NpyError(ErrorCode::kNpyFormat,
                         "file of " + std::to_string(size) + " bytes ends inside the header",
                         file_name));
  }
  const size_t header_length = ReadLittleEndian(file.data() + 8, length_bytes);
  if (header_length > kMaxHeaderBytes) {
    return Fail(NpyError(
        ErrorCode::kNpyUnsupported,
        "header of " + std::to_string(header_length) + " bytes; at most 1 MiB is supported",
        file_name));
  }
  if (header_length > size - prefix) {
    return Fail(NpyError(ErrorCode::kNpyFormat,
                         "header of " + std::to_string(header_length) +
                             " bytes runs past the end of the file (" + std::to_string(size) +
                             " bytes): truncated",
                         file_name));
  }
  // Versions 1 and 2 store latin-1 text, version 3 UTF-8; the syntax is ASCII either way.
  std::string_view text(reinterpret_cast<const char*>(file.data() + prefix), header_length);
  if (header.major == 3 && !IsValidUtf8(text)) {
    return Fail(
        NpyError(ErrorCode::kNpyFormat, "version 3.0 header is not valid UTF-8", file_name));
  }
  auto dict = ParsePyLiteral(text);
  if (!dict) return Fail(std::move(dict.error()).InFile(std::string(file_name)));
  IOTX_RETURN_IF_ERROR(ReadHeaderDict(*dict, file_name, header));

  header.data_offset = prefix + header_length;
  std::optional<int64_t> count = CheckedProduct(header.shape);
  if (!count || static_cast<uint64_t>(*count) > SIZE_MAX / header.info.itemsize) {
    return Fail(NpyError(ErrorCode::kDimOverflow,
                         "shape " + ToString(header.shape) + " of '" + header.descr +
                             "' elements overflows the byte count",
                         file_name));
  }
  header.data_size = static_cast<size_t>(*count) * header.info.itemsize;
  const size_t available = size - header.data_offset;
  if (available != header.data_size) {
    std::string what = available < header.data_size ? "truncated: " : "trailing bytes: ";
    return Fail(NpyError(ErrorCode::kNpyFormat,
                         what + "shape " + ToString(header.shape) + " of '" + header.descr +
                             "' needs " + std::to_string(header.data_size) +
                             " data bytes, the file has " + std::to_string(available),
                         file_name));
  }
  return header;
}

Expected<Tensor> ParseNpy(std::span<const std::byte> file, std::shared_ptr<const void> owner,
                          std::string_view file_name) {
  IOTX_ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(file, file_name));
  StoredLayout layout;
  if (header.fortran_order) {
    layout = FortranLayout(header.shape);
  } else {
    layout.memory_shape = header.shape;
  }
  Tensor tensor =
      DescribeStored("", std::move(header.descr), header.info, std::move(layout),
                     file.subspan(header.data_offset, header.data_size), std::move(owner));
  tensor.file = std::string(file_name);
  return tensor;
}

Expected<Tensor> ReadNpy(const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file,
                        files::MappedFile::Open(path));
  return ParseNpy(file->bytes(), file, path.string());
}

Expected<std::string> MakeNpyHeader(std::string_view descr, std::span<const int64_t> shape) {
  std::optional<DescrInfo> info = ParseDescr(descr);
  if (!info || info->itemsize == 0) {
    return Fail(Error(ErrorCode::kNpyUnsupported,
                      "cannot write type '" + std::string(descr) +
                          "': expected a numpy type string with a nonzero size like '<f4'")
                    .AtKey("descr"));
  }
  if (shape.size() > kMaxRank) {
    return Fail(Error(ErrorCode::kNpyUnsupported, std::to_string(shape.size()) +
                                                      " dimensions, at most " +
                                                      std::to_string(kMaxRank) + " supported")
                    .AtKey("shape"));
  }
  for (int64_t dim : shape) {
    if (dim < 0) {
      return Fail(
          Error(ErrorCode::kNegativeDim, "shape " + ToString(shape) + " has a negative dimension")
              .AtKey("shape"));
    }
  }
  // The dict exactly as numpy's _write_array_header prints it: sorted keys, repr values,
  // each followed by ", ". ParseDescr admitted no quote or backslash, so '...' is its repr.
  std::string dict = "{'descr': '" + std::string(descr) +
                     "', 'fortran_order': False, 'shape': " + ShapeRepr(shape) + ", }";
  if (!shape.empty()) {
    dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  }
  // Version 1.0 it is: numpy moves to 2.0 only when the header exceeds 64 KiB and to 3.0
  // only for non-latin-1 text, and with an ASCII descr of at most ~30 characters and at most
  // kMaxRank dimensions of at most 19 digits the header stays under 2 KiB.
  const size_t prefix = kMagic.size() + 4;
  const size_t text = dict.size() + 1;                             // + the final '\n'
  const size_t pad = kArrayAlign - (prefix + text) % kArrayAlign;  // 64, not 0, when aligned
  const size_t header_length = text + pad;
  std::string out(kMagic);
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header_length & 0xFF);
  out += static_cast<char>(header_length >> 8);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

Expected<FileLayout> NpyLayout(std::string_view descr, std::span<const int64_t> shape) {
  IOTX_ASSIGN_OR_RETURN(std::string header, MakeNpyHeader(descr, shape));
  const size_t itemsize = ParseDescr(descr)->itemsize;  // MakeNpyHeader checked it
  std::optional<int64_t> count = CheckedProduct(shape);
  if (!count || static_cast<uint64_t>(*count) > (UINT64_MAX - header.size()) / itemsize) {
    return Fail(ErrorCode::kDimOverflow, "shape " + ToString(shape) + " of '" +
                                             std::string(descr) +
                                             "' elements overflows the byte count");
  }
  FileLayout layout;
  layout.data_offsets = {header.size()};
  layout.data_sizes = {static_cast<uint64_t>(*count) * itemsize};
  layout.size = header.size() + layout.data_sizes[0];
  layout.literals.push_back({0, std::move(header)});
  return layout;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor,
                const files::AtomicFileOptions& options) {
  if (tensor.descr.empty()) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "dtype " + tensor.dtype + " has no numpy type string for a .npy file")
                    .InFile(path.string())
                    .AtKey(tensor.name));
  }
  auto layout = NpyLayout(tensor.descr, tensor.shape);
  if (!layout) return Fail(std::move(layout).error().InFile(path.string()));
  const size_t itemsize = ParseDescr(tensor.descr)->itemsize;
  if (itemsize * 8 != tensor.element_bits ||
      (!tensor.layout.latin1 && tensor.stored.size() != layout->data_sizes[0])) {
    return Fail(Error(ErrorCode::kBufferSize,
                      "tensor data of " + std::to_string(tensor.stored.size()) +
                          " bytes does not match shape " + ToString(tensor.shape) + " of '" +
                          tensor.descr + "' (" + std::to_string(tensor.element_bits) +
                          "-bit elements)")
                    .InFile(path.string()));
  }
  return WriteLaidOut(path, *layout, std::span(&tensor, 1), options);
}

}  // namespace iotx::io
