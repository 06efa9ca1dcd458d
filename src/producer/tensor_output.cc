#include "producer/tensor_output.h"

#include "io/npy.h"
#include "files/page_hints.h"
#include "producer/permute_copy.h"

namespace iotx::producer {

bool InMapping(std::span<const std::byte> bytes, const files::MappedFile& file) {
  const std::span<const std::byte> all = file.bytes();
  return !bytes.empty() && bytes.data() >= all.data() &&
         bytes.data() + bytes.size() <= all.data() + all.size();
}

Status MoveTensor(const TensorMove& move, std::span<std::byte> dst) {
  files::WillRead(move.src);
  files::WillWrite(dst);
  IOTX_RETURN_IF_ERROR(PermuteCopy(move.spec, move.src, move.element_size, dst));
  files::ReleaseFilePages(dst);
  if (move.src_in_file_mapping) files::ReleaseFilePages(move.src);
  return Ok();
}

Status WriteTensorNpy(const std::filesystem::path& path, const std::filesystem::path& root,
                      std::string_view descr, std::span<const int64_t> shape,
                      const TensorMove& move) {
  IOTX_ASSIGN_OR_RETURN(io::NpyWriter writer,
                        io::NpyWriter::Create(path, descr, shape, {.root = root}));
  IOTX_RETURN_IF_ERROR(MoveTensor(move, writer.data()));
  return writer.Commit();
}

}  // namespace iotx::producer
