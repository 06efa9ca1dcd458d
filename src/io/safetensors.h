// safetensors files: an 8-byte little-endian header length, a JSON header, the tensor bytes.
//
// Reading maps the file and checks the header the way the reference implementation
// (huggingface/safetensors) does: at most 100,000,000 header bytes, UTF-8 JSON without
// duplicate keys, tensors contiguous from offset 0 without gaps or overlap, each exactly
// nelements * dtype bits / 8 bytes, and the file exactly as long as the header says. Tensors
// point into the mapping (zero-copy). Writing lays the file out like the reference writer
// (tensors sorted by descending dtype alignment, then name; header padded with spaces to a
// multiple of 8) and goes through files::AtomicFile. See docs/tensor-files.md.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "io/tensor.h"
#include "iotx/dims.h"
#include "iotx/dtype.h"
#include "iotx/status.h"

namespace iotx::io {

// The reference implementation's MAX_HEADER_SIZE.
inline constexpr size_t kSafetensorsMaxHeader = 100'000'000;

// `__metadata__`: string keys to string values, in the header's order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsFile {
  // In file order (by offset, then header order), each with its dtype name, the numpy descr
  // where there is one ("BF16" is "<V2") and its bytes in the mapping.
  std::vector<Tensor> tensors;
  std::optional<SafetensorsMetadata> metadata;  // absent when the header has no __metadata__
  std::shared_ptr<const void> owner;            // keeps every tensor's data valid
};

// Bits per element of a safetensors dtype name ("F32" → 32, "F4" → 4, "F6_E2M3" → 6), or
// nullopt for a name the format does not define.
std::optional<size_t> SafetensorsDTypeBits(std::string_view dtype);

// iotx's DType for a safetensors dtype name ("F8_E4M3" is kF8E4M3FN); kUnknownDType for the
// sub-byte and FNUZ/E8M0 types iotx has no DType for.
Expected<DType> DTypeFromSafetensors(std::string_view dtype);

// The safetensors name of `dtype`; kUnknownDType for kC128, which the format lacks.
Expected<std::string_view> SafetensorsDTypeName(DType dtype);

// Parses the safetensors file held in `file` (kept alive by `owner`). kSafetensorsFormat
// names `file_name` and, for a tensor's problem, the tensor (key).
Expected<SafetensorsFile> ParseSafetensors(std::span<const std::byte> file,
                                           std::shared_ptr<const void> owner,
                                           std::string_view file_name);

// Maps `path` and parses it; kIoOpen/kIoRead when it cannot be mapped.
Expected<SafetensorsFile> ReadSafetensors(const std::filesystem::path& path);

// The dtype name a safetensors file gives `tensor`: its own (Tensor::dtype), else the one of
// its numpy descr ("<V2" is "BF16"). kUnknownDType when there is none ("<U3", "|V1").
Expected<std::string> SafetensorsDTypeOf(const Tensor& tensor);

// The layout of a safetensors file of `tensors` (names, dtypes as SafetensorsDTypeOf, shapes;
// their data is not used) and `metadata`, as the reference writer lays it out: one literal,
// the 8-byte length and the padded JSON header, then the tensors' data. Errors:
// kInvalidArgument (repeated or non-UTF-8 name, "__metadata__" as a name, unknown dtype, a
// shape whose size is not whole bytes, non-UTF-8 metadata), kNegativeDim, kDimOverflow.
Expected<FileLayout> SafetensorsLayout(std::span<const Tensor> tensors,
                                       const std::optional<SafetensorsMetadata>& metadata);

// Writes `tensors` (data streamed from each, converted one at a time where not C order) and
// `metadata` to `path` atomically. kBufferSize when a tensor's data is not nelements * bits / 8
// bytes; else as SafetensorsLayout and files::AtomicFile.
Status WriteSafetensors(const std::filesystem::path& path, std::span<const Tensor> tensors,
                        const std::optional<SafetensorsMetadata>& metadata,
                        const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
