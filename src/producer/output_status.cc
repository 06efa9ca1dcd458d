#include "producer/output_status.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace iotx::producer {

bool OutputComplete(const std::filesystem::path& path, const io::FileLayout& layout) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool complete = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                  static_cast<uint64_t>(st.st_size) == layout.size;
  if (complete && !layout.literals.empty() && layout.literals.front().offset == 0) {
    const std::string& header = layout.literals.front().bytes;
    std::string found(header.size(), '\0');
    size_t got = 0;
    while (got < found.size()) {
      const ssize_t n = pread(fd, found.data() + got, found.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    complete = got == found.size() && found == header;
  }
  close(fd);
  return complete;
}

Status WriteWhole(const std::filesystem::path& path, std::string_view text,
                  const std::filesystem::path& root, files::Durability durability) {
  IOTX_ASSIGN_OR_RETURN(files::AtomicFile file, files::AtomicFile::Create(path, {.root = root}));
  IOTX_RETURN_IF_ERROR(file.Write(text));
  return file.Commit(durability);
}

}  // namespace iotx::producer
