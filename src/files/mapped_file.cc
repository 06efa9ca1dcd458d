#include "files/mapped_file.h"
#include "files/system_error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace iotx::files {

Expected<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::filesystem::path& path) {
  auto fail = [&path](ErrorCode code, const std::string& what, int errnum) {
    return Fail(SystemError(code, what, path, errnum));
  };
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused
  // below as not a regular file.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(ErrorCode::kIoOpen, "cannot open", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int errnum = errno;
    close(fd);
    return fail(ErrorCode::kIoOpen, "cannot stat", errnum);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Fail(Error(ErrorCode::kIoOpen, "not a regular file").InFile(path.string()));
  }
  size_t size = static_cast<size_t>(st.st_size);
  const std::byte* data = nullptr;
  if (size > 0) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int errnum = errno;
      close(fd);
      return fail(ErrorCode::kIoRead, "cannot map " + std::to_string(size) + " bytes", errnum);
    }
    data = static_cast<const std::byte*>(map);
  }
  close(fd);  // the mapping stays valid without the descriptor
  return std::shared_ptr<const MappedFile>(new MappedFile(path.string(), data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace iotx::files
