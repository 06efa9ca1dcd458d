// .npy files (numpy's array format), versions 1.0, 2.0 and 3.0.
//
// Reading maps the file; the returned Array points into the mapping (no copy) unless the file
// is Fortran-ordered or big-endian, which are converted to C order, little-endian (one copy).
// Writing produces the bytes numpy's np.save produces for the same array, atomically.
// See docs/tensor-files.md for the decisions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "io/array.h"
#include "files/atomic_file.h"
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

// Parses the .npy file held in `file`; the Array references `file` (kept alive by `owner`)
// unless it had to be converted (Fortran order, big-endian).
Expected<Array> ParseNpy(std::span<const std::byte> file, std::shared_ptr<const void> owner,
                         std::string_view file_name);

// Maps `path` and parses it (ParseNpy); kIoOpen/kIoRead when the file cannot be mapped.
Expected<Array> ReadNpy(const std::filesystem::path& path);

// The bytes before the data that np.save writes for an array of `descr` and `shape`: magic,
// version 1.0 (numpy's choice for every header this can produce), header length, the header
// dict with numpy's spare space and padding to a multiple of 64 bytes ending in '\n'.
// kNpyUnsupported for a descr numpy would not read back or a rank over kMaxRank.
Expected<std::string> MakeNpyHeader(std::string_view descr, std::span<const int64_t> shape);

// A .npy file being written: the header is in place and data() is a writable mapping of the
// array's bytes, to be filled in C order before Commit(). Nothing appears under the final name
// before Commit(); abandoning the writer removes everything. Move-only.
class NpyWriter {
 public:
  // Errors: those of MakeNpyHeader, kDimOverflow for a byte size that overflows, and those of
  // files::AtomicFile::Create / Map (kIoWrite, kPathUnsafe).
  static Expected<NpyWriter> Create(const std::filesystem::path& path, std::string_view descr,
                                    std::span<const int64_t> shape,
                                    const files::AtomicFileOptions& options = {});

  // product(shape) * itemsize bytes, C order.
  std::span<std::byte> data() const noexcept { return data_; }
  // Publishes the file (files::AtomicFile::Commit).
  Status Commit() { return file_.Commit(); }

 private:
  NpyWriter(files::AtomicFile file, std::span<std::byte> data) : file_(std::move(file)), data_(data) {}
  files::AtomicFile file_;
  std::span<std::byte> data_;
};

// Writes `array` to `path` as np.save would (atomically). kBufferSize when array.data does not
// hold product(shape) * itemsize bytes; otherwise the errors of NpyWriter::Create.
Status WriteNpy(const std::filesystem::path& path, const Array& array,
                const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
