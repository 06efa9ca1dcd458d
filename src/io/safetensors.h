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
#include "iotx/dims.h"
#include "iotx/dtype.h"
#include "iotx/status.h"

namespace iotx::io {

// The reference implementation's MAX_HEADER_SIZE.
inline constexpr size_t kSafetensorsMaxHeader = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // the file's name for it: "F32", "BF16", "F8_E4M3", "F4", ...
  Dims shape;
  std::span<const std::byte> data;  // little-endian, C order
};

// `__metadata__`: string keys to string values, in the header's order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;       // in file order (by offset, then header order)
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

// A safetensors file being written: the header is in place and data(i) is a writable mapping
// of tensor i's bytes (i as passed to Create), to fill before Commit(). Move-only.
class SafetensorsWriter {
 public:
  // `tensors` gives names, dtypes and shapes (their data is not used). Errors:
  // kInvalidArgument (repeated or non-UTF-8 name, "__metadata__" as a name, unknown dtype, a
  // shape whose size is not whole bytes, non-UTF-8 metadata), kNegativeDim, kDimOverflow, and
  // those of files::AtomicFile.
  static Expected<SafetensorsWriter> Create(const std::filesystem::path& path,
                                            std::span<const SafetensorsTensor> tensors,
                                            const std::optional<SafetensorsMetadata>& metadata,
                                            const files::AtomicFileOptions& options = {});

  std::span<std::byte> data(size_t index) const { return regions_.at(index); }
  Status Commit() { return file_.Commit(); }

 private:
  SafetensorsWriter(files::AtomicFile file, std::vector<std::span<std::byte>> regions)
      : file_(std::move(file)), regions_(std::move(regions)) {}
  files::AtomicFile file_;
  std::vector<std::span<std::byte>> regions_;
};

// Writes `tensors` (data streamed from their spans) and `metadata` to `path` atomically.
// kBufferSize when a tensor's data is not nelements * bits / 8 bytes; else as Create().
Status WriteSafetensors(const std::filesystem::path& path,
                        std::span<const SafetensorsTensor> tensors,
                        const std::optional<SafetensorsMetadata>& metadata,
                        const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
