// Read-only memory mapping of a whole file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "iotx/status.h"

namespace iotx::files {

// A regular file mapped read-only (MAP_PRIVATE). Immutable after Open and safe to share
// between threads; tensors read from it keep the shared_ptr to stay valid. Truncating the file
// while it is mapped is undefined (the kernel raises SIGBUS on pages past the new end).
class MappedFile {
 public:
  // Maps `path`. Empty files are fine (bytes() is empty). Errors: kIoOpen (missing, not a
  // regular file, no permission), kIoRead (the mapping failed); both name the path.
  static Expected<std::shared_ptr<const MappedFile>> Open(const std::filesystem::path& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  size_t size() const noexcept { return size_; }
  // The path as given to Open(), for diagnostics.
  const std::string& path() const noexcept { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace iotx::files
