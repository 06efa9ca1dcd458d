// .npy files (numpy's array format), versions 1.0, 2.0 and 3.0.
//
// Reading maps the file; the returned Tensor points into the mapping (no copy), a
// Fortran-ordered or big-endian one with its stored layout described (io/tensor.h). Writing
// produces the bytes numpy's np.save produces for the same array, atomically.
// See docs/tensor-files.md for the decisions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "io/tensor.h"
#include "iotx/status.h"

namespace iotx::io {

// What a .npy header says.
struct NpyHeader {
  int major = 1;      // format version: 1, 2 or 3 (minor is always 0)
  std::string descr;  // numpy type string, as written
  DescrInfo info;     // what `descr` means
  bool fortran_order = false;
  Dims shape;
  size_t data_offset = 0;  // where the array's bytes start in the file
  size_t data_size = 0;    // product(shape) * itemsize
};

// Parses and checks the header of the .npy file held in `file` (its magic, version, header
// dict with exactly the keys descr/fortran_order/shape in any order, and that the file holds
// exactly data_size bytes after the header). Errors: kNpyFormat (malformed, truncated,
// trailing bytes) and kNpyUnsupported (object, structured or unknown descr; other versions;
// headers over 1 MiB), all naming `file_name`.
Expected<NpyHeader> ParseNpyHeader(std::span<const std::byte> file, std::string_view file_name);

// Parses the .npy file held in `file`; the Tensor (without a name) references `file`, kept
// alive by `owner`.
Expected<Tensor> ParseNpy(std::span<const std::byte> file, std::shared_ptr<const void> owner,
                          std::string_view file_name);

// Maps `path` and parses it (ParseNpy); kIoOpen/kIoRead when the file cannot be mapped.
Expected<Tensor> ReadNpy(const std::filesystem::path& path);

// The bytes before the data that np.save writes for an array of `descr` and `shape`: magic,
// version 1.0 (numpy's choice for every header this can produce), header length, the header
// dict with numpy's spare space and padding to a multiple of 64 bytes ending in '\n'.
// kNpyUnsupported for a descr numpy would not read back or a rank over kMaxRank.
Expected<std::string> MakeNpyHeader(std::string_view descr, std::span<const int64_t> shape);

// The layout of a .npy file of `descr` and `shape`: MakeNpyHeader, then the data. Errors:
// those of MakeNpyHeader, kDimOverflow for a byte size that overflows.
Expected<FileLayout> NpyLayout(std::string_view descr, std::span<const int64_t> shape);

// Writes `tensor` to `path` as np.save would (atomically), under its descr (kInvalidArgument
// when it has none, such as safetensors' F4). kBufferSize when its stored bytes do not hold
// its shape; otherwise the errors of NpyLayout and files::AtomicFile.
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor,
                const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
