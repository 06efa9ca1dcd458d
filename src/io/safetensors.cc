#include "io/safetensors.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_set>

#include "io/descr.h"
#include "files/mapped_file.h"
#include "io/safetensors_header.h"
#include "core/utf8.h"

namespace iotx::io {
namespace {

struct DTypeEntry {
  std::string_view name;
  size_t bits;
  std::optional<DType> dtype;
};

// The reference's Dtype enum in declaration order, which is increasing alignment: the writer
// sorts by it. (huggingface/safetensors safetensors/src/tensor.rs)
constexpr std::array<DTypeEntry, 22> kDTypes = {{
    {"BOOL", 8, DType::kBool},
    {"F4", 4, std::nullopt},
    {"F6_E2M3", 6, std::nullopt},
    {"F6_E3M2", 6, std::nullopt},
    {"U8", 8, DType::kU8},
    {"I8", 8, DType::kI8},
    {"F8_E5M2", 8, DType::kF8E5M2},
    {"F8_E4M3", 8, DType::kF8E4M3FN},
    {"F8_E8M0", 8, std::nullopt},
    {"F8_E4M3FNUZ", 8, std::nullopt},
    {"F8_E5M2FNUZ", 8, std::nullopt},
    {"I16", 16, DType::kI16},
    {"U16", 16, DType::kU16},
    {"F16", 16, DType::kF16},
    {"BF16", 16, DType::kBF16},
    {"I32", 32, DType::kI32},
    {"U32", 32, DType::kU32},
    {"F32", 32, DType::kF32},
    {"C64", 64, DType::kC64},
    {"F64", 64, DType::kF64},
    {"I64", 64, DType::kI64},
    {"U64", 64, DType::kU64},
}};

const DTypeEntry* FindDType(std::string_view name) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

size_t AlignmentRank(std::string_view name) {
  return static_cast<size_t>(FindDType(name) - kDTypes.data());
}

std::string KnownDTypes() {
  std::string out;
  for (const DTypeEntry& entry : kDTypes) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

// The byte size of `shape` elements of `bits` bits, or an error saying why there is none.
Expected<uint64_t> ByteSize(std::span<const int64_t> shape, size_t bits, std::string_view dtype) {
  std::optional<int64_t> count = CheckedProduct(shape);
  if (!count || static_cast<uint64_t>(*count) > UINT64_MAX / bits) {
    return Fail(ErrorCode::kDimOverflow, "shape " + ToString(shape) + " of " + std::string(dtype) +
                                             " overflows the byte count");
  }
  const uint64_t total_bits = static_cast<uint64_t>(*count) * bits;
  if (total_bits % 8 != 0) {
    return Fail(ErrorCode::kSafetensorsFormat,
                "shape " + ToString(shape) + " of " + std::string(dtype) + " (" +
                    std::to_string(bits) + " bits each) is not a whole number of bytes");
  }
  return total_bits / 8;
}

Error FileError(Error error, std::string_view file_name) {
  error.file = std::string(file_name);
  return error;
}

}  // namespace

std::optional<size_t> SafetensorsDTypeBits(std::string_view dtype) {
  const DTypeEntry* entry = FindDType(dtype);
  if (entry == nullptr) return std::nullopt;
  return entry->bits;
}

Expected<DType> DTypeFromSafetensors(std::string_view dtype) {
  const DTypeEntry* entry = FindDType(dtype);
  if (entry != nullptr && entry->dtype) return *entry->dtype;
  return Fail(ErrorCode::kUnknownDType,
              "safetensors dtype '" + std::string(dtype) + "' has no iotx element type");
}

Expected<std::string_view> SafetensorsDTypeName(DType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry.name;
  }
  return Fail(ErrorCode::kUnknownDType,
              "safetensors has no dtype for " + std::string(DTypeName(dtype)));
}

Expected<SafetensorsFile> ParseSafetensors(std::span<const std::byte> file,
                                           std::shared_ptr<const void> owner,
                                           std::string_view file_name) {
  auto fail = [file_name](std::string message, std::string key = {}) {
    return Fail(
        FileError(Error(ErrorCode::kSafetensorsFormat, std::move(message)).AtKey(key), file_name));
  };
  if (file.size() < 8) {
    return fail("file of " + std::to_string(file.size()) +
                " bytes is too short for the 8-byte header length");
  }
  uint64_t header_size = 0;
  for (size_t i = 8; i-- > 0;) header_size = (header_size << 8) | static_cast<uint8_t>(file[i]);
  if (header_size > kSafetensorsMaxHeader) {
    return fail("header length " + std::to_string(header_size) + " exceeds the limit of " +
                std::to_string(kSafetensorsMaxHeader) + " bytes");
  }
  if (header_size > file.size() - 8) {
    return fail("header length " + std::to_string(header_size) + " runs past the end of the " +
                std::to_string(file.size()) + "-byte file: truncated");
  }
  std::string_view json(reinterpret_cast<const char*>(file.data() + 8), header_size);
  if (!IsValidUtf8(json)) return fail("header is not valid UTF-8");
  auto header = ParseSafetensorsHeader(json);
  if (!header) return Fail(FileError(std::move(header).error(), file_name));

  // Check in offset order, as the reference does: contiguous from 0, each exactly its size.
  // Empty tensors share offsets; they keep their header order.
  std::vector<SafetensorsEntry>& entries = header->tensors;
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&entries](size_t a, size_t b) {
    return std::pair(entries[a].begin, entries[a].end) <
           std::pair(entries[b].begin, entries[b].end);
  });
  const std::span<const std::byte> buffer = file.subspan(8 + header_size);
  SafetensorsFile result;
  uint64_t offset = 0;
  for (size_t index : order) {
    SafetensorsEntry& entry = entries[index];
    const DTypeEntry* dtype = FindDType(entry.dtype);
    if (dtype == nullptr) {
      return fail("unknown dtype \"" + entry.dtype + "\"; expected one of " + KnownDTypes(),
                  entry.name);
    }
    if (entry.begin != offset || entry.end < entry.begin) {
      return fail("data_offsets [" + std::to_string(entry.begin) + ", " +
                      std::to_string(entry.end) + "] should start at " + std::to_string(offset) +
                      ": tensors must follow each other without gaps or overlap",
                  entry.name);
    }
    auto size = ByteSize(entry.shape, dtype->bits, entry.dtype);
    if (!size) return fail(size.error().message, entry.name);
    if (entry.end - entry.begin != *size) {
      return fail(
          "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
              "] hold " + std::to_string(entry.end - entry.begin) + " bytes, but shape " +
              ToString(entry.shape) + " of " + entry.dtype + " needs " + std::to_string(*size),
          entry.name);
    }
    if (entry.end > buffer.size()) {
      return fail("data_offsets end " + std::to_string(entry.end) + " is past the " +
                      std::to_string(buffer.size()) + " data bytes in the file: truncated",
                  entry.name);
    }
    offset = entry.end;
    Tensor tensor;
    tensor.name = std::move(entry.name);
    tensor.element_bits = dtype->bits;
    if (dtype->dtype) tensor.descr = std::string(DescrForDType(*dtype->dtype));
    tensor.dtype = std::move(entry.dtype);
    tensor.shape = std::move(entry.shape);
    tensor.stored = buffer.subspan(static_cast<size_t>(entry.begin),
                                   static_cast<size_t>(entry.end - entry.begin));
    tensor.owner = owner;
    tensor.file = std::string(file_name);
    result.tensors.push_back(std::move(tensor));
  }
  if (offset != buffer.size()) {
    return fail("tensors end at data byte " + std::to_string(offset) + ", but the file has " +
                std::to_string(buffer.size()) + " data bytes");
  }
  result.metadata = std::move(header->metadata);
  result.owner = std::move(owner);
  return result;
}

Expected<SafetensorsFile> ReadSafetensors(const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file, files::MappedFile::Open(path));
  return ParseSafetensors(file->bytes(), file, path.string());
}

Expected<std::string> SafetensorsDTypeOf(const Tensor& tensor) {
  if (!tensor.dtype.empty()) return tensor.dtype;
  Expected<DType> dtype = DTypeFromDescr(tensor.descr);
  if (dtype) {
    Expected<std::string_view> name = SafetensorsDTypeName(*dtype);
    if (name) return std::string(*name);
  }
  return Fail(Error(ErrorCode::kUnknownDType,
                    "numpy type " + tensor.descr + " has no safetensors dtype")
                  .AtKey(tensor.name));
}

namespace {

// Where everything goes in a file the reference writer would produce.
struct Layout {
  std::string prefix;              // 8-byte length + padded JSON header
  std::vector<size_t> file_order;  // tensor indices in data order
  std::vector<uint64_t> begin;     // per tensor index, relative to the data start
  std::vector<uint64_t> size;
  std::vector<std::string> dtypes;  // per tensor index
  uint64_t data_size = 0;
};

std::string JsonString(std::string_view text) {
  // nlohmann escapes like serde_json: \" \\ \b \f \n \r \t, other controls as \u00xx.
  return nlohmann::json(std::string(text)).dump();
}

Expected<Layout> PlanLayout(std::span<const Tensor> tensors,
                            const std::optional<SafetensorsMetadata>& metadata) {
  auto invalid = [](std::string message, std::string key = {}) {
    return Fail(Error(ErrorCode::kInvalidArgument, std::move(message)).AtKey(std::move(key)));
  };
  Layout layout;
  std::unordered_set<std::string_view> names;
  layout.size.resize(tensors.size());
  layout.begin.resize(tensors.size());
  layout.dtypes.resize(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!IsValidUtf8(t.name)) return invalid("tensor name is not valid UTF-8");
    if (t.name == "__metadata__") return invalid("\"__metadata__\" cannot name a tensor");
    if (!names.insert(t.name).second) return invalid("name repeated", t.name);
    auto dtype_name = SafetensorsDTypeOf(t);
    if (!dtype_name) return invalid(dtype_name.error().message, t.name);
    layout.dtypes[i] = std::move(*dtype_name);
    const DTypeEntry* dtype = FindDType(layout.dtypes[i]);
    if (dtype == nullptr) {
      return invalid("unknown dtype \"" + layout.dtypes[i] + "\"; expected one of " + KnownDTypes(),
                     t.name);
    }
    for (int64_t dim : t.shape) {
      if (dim < 0) {
        return Fail(Error(ErrorCode::kNegativeDim,
                          "shape " + ToString(t.shape) + " has a negative dimension")
                        .AtKey(t.name));
      }
    }
    auto size = ByteSize(t.shape, dtype->bits, layout.dtypes[i]);
    if (!size) {
      Error error = std::move(size).error();
      if (error.code == ErrorCode::kSafetensorsFormat) error.code = ErrorCode::kInvalidArgument;
      return Fail(std::move(error).AtKey(t.name));
    }
    layout.size[i] = *size;
  }
  if (metadata) {
    for (const auto& [key, value] : *metadata) {
      if (!IsValidUtf8(key) || !IsValidUtf8(value)) {
        return invalid("__metadata__ entry is not valid UTF-8");
      }
    }
  }
  // The reference writer's order: descending dtype alignment, then name (bytewise).
  layout.file_order.resize(tensors.size());
  std::iota(layout.file_order.begin(), layout.file_order.end(), 0);
  std::sort(layout.file_order.begin(), layout.file_order.end(), [&](size_t a, size_t b) {
    const size_t rank_a = AlignmentRank(layout.dtypes[a]);
    const size_t rank_b = AlignmentRank(layout.dtypes[b]);
    if (rank_a != rank_b) return rank_a > rank_b;
    return tensors[a].name < tensors[b].name;
  });
  std::string json = "{";
  if (metadata) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata->size(); ++i) {
      if (i > 0) json += ',';
      json += JsonString((*metadata)[i].first) + ':' + JsonString((*metadata)[i].second);
    }
    json += '}';
  }
  for (size_t index : layout.file_order) {
    const Tensor& t = tensors[index];
    if (json.size() > 1) json += ',';
    layout.begin[index] = layout.data_size;
    layout.data_size += layout.size[index];
    std::string shape = "[";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (d > 0) shape += ',';
      shape += std::to_string(t.shape[d]);
    }
    json += JsonString(t.name) + ":{\"dtype\":" + JsonString(layout.dtypes[index]) +
            ",\"shape\":" + shape +
            "],\"data_offsets\":[" + std::to_string(layout.begin[index]) + ',' +
            std::to_string(layout.data_size) + "]}";
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  for (size_t i = 0; i < 8; ++i)
    layout.prefix += static_cast<char>((json.size() >> (8 * i)) & 0xFF);
  layout.prefix += json;
  return layout;
}

}  // namespace

Expected<FileLayout> SafetensorsLayout(std::span<const Tensor> tensors,
                                       const std::optional<SafetensorsMetadata>& metadata) {
  IOTX_ASSIGN_OR_RETURN(Layout planned, PlanLayout(tensors, metadata));
  FileLayout layout;
  const uint64_t prefix = planned.prefix.size();
  layout.size = prefix + planned.data_size;
  layout.literals.push_back({0, std::move(planned.prefix)});
  for (size_t i = 0; i < tensors.size(); ++i) {
    layout.data_offsets.push_back(prefix + planned.begin[i]);
    layout.data_sizes.push_back(planned.size[i]);
  }
  return layout;
}

Status WriteSafetensors(const std::filesystem::path& path, std::span<const Tensor> tensors,
                        const std::optional<SafetensorsMetadata>& metadata,
                        const files::AtomicFileOptions& options) {
  auto layout = SafetensorsLayout(tensors, metadata);
  if (!layout) return Fail(FileError(std::move(layout).error(), path.string()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const uint64_t stored =
        tensors[i].layout.latin1 ? layout->data_sizes[i] : tensors[i].stored.size();
    if (stored != layout->data_sizes[i] || tensors[i].byte_size() != layout->data_sizes[i]) {
      return Fail(Error(ErrorCode::kBufferSize,
                        "data of " + std::to_string(tensors[i].stored.size()) +
                            " bytes does not match shape " + ToString(tensors[i].shape) +
                            " (" + std::to_string(layout->data_sizes[i]) + " bytes)")
                      .InFile(path.string())
                      .AtKey(tensors[i].name));
    }
  }
  return WriteLaidOut(path, *layout, tensors, options);
}

}  // namespace iotx::io
