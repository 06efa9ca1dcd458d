// Writing one tensor, transposed or copied, into an output mapping with the kernel.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

#include "files/mapped_file.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx::producer {

// One tensor's trip from its source bytes to its device layout.
struct TensorMove {
  const TransposeSpec* spec = nullptr;  // simplified spec; null: the bytes are copied unchanged
  std::span<const std::byte> src;
  size_t element_size = 1;           // bytes per element (1 for a copy of packed sub-byte data)
  bool src_in_file_mapping = false;  // src lies in a read-only file mapping
};

// True when `bytes` lies inside `file`'s mapping (a zero-copy view), so its pages may be
// released after use; false for data a reader converted into a heap copy.
bool InMapping(std::span<const std::byte> bytes, const files::MappedFile& file);

// dst = the device layout of move.src (PermuteCopy on the parallel kernel), where `dst` is a
// writable file mapping. Asks for both ranges to be paged in up front and releases both from
// the process afterwards (the source only when it is a file mapping), so a run over a whole
// checkpoint keeps its resident set near one tensor.
Status MoveTensor(const TensorMove& move, std::span<std::byte> dst);

// Writes `path` as an .npy of `descr` and `shape` (the device shape) filled by MoveTensor,
// atomically, refusing a path that resolves outside `root`.
Status WriteTensorNpy(const std::filesystem::path& path, const std::filesystem::path& root,
                      std::string_view descr, std::span<const int64_t> shape,
                      const TensorMove& move);

}  // namespace iotx::producer
