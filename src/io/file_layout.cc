#include "io/file_layout.h"

#include <algorithm>
#include <numeric>

namespace iotx::io {

Status WriteLaidOut(const std::filesystem::path& path, const FileLayout& layout,
                    std::span<const Tensor> tensors, const files::AtomicFileOptions& options) {
  if (tensors.size() != layout.data_offsets.size()) {
    return Fail(Error(ErrorCode::kInternal, "layout made for " +
                                                std::to_string(layout.data_offsets.size()) +
                                                " tensors, given " + std::to_string(tensors.size()))
                    .InFile(path.string()));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].byte_size() != layout.data_sizes[i]) {
      return Fail(Error(ErrorCode::kBufferSize,
                        "tensor of " + std::to_string(tensors[i].byte_size()) +
                            " bytes where the file has room for " +
                            std::to_string(layout.data_sizes[i]))
                      .InFile(path.string())
                      .AtKey(tensors[i].name));
    }
  }
  // Everything in file order, so the file is written front to back.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&layout](size_t a, size_t b) {
    return layout.data_offsets[a] < layout.data_offsets[b];
  });
  IOTX_ASSIGN_OR_RETURN(files::AtomicFile file, files::AtomicFile::Create(path, options));
  uint64_t at = 0;
  size_t next_literal = 0;
  // Writes the literals that start before `end`, then checks that the file reached `end`.
  auto write_literals_until = [&](uint64_t end) -> Status {
    while (next_literal < layout.literals.size() && layout.literals[next_literal].offset < end) {
      const FileLayout::Literal& literal = layout.literals[next_literal++];
      if (literal.offset != at) break;
      IOTX_RETURN_IF_ERROR(file.Write(literal.bytes));
      at += literal.bytes.size();
    }
    if (at != end) {
      return Fail(Error(ErrorCode::kInternal, "file layout has a gap or overlap at byte " +
                                                  std::to_string(at))
                      .InFile(path.string()));
    }
    return Ok();
  };
  for (size_t index : order) {
    const Tensor& tensor = tensors[index];
    if (layout.data_sizes[index] == 0) continue;
    IOTX_RETURN_IF_ERROR(write_literals_until(layout.data_offsets[index]));
    if (tensor.is_c_order()) {
      IOTX_RETURN_IF_ERROR(file.Write(tensor.stored));
    } else {
      IOTX_ASSIGN_OR_RETURN(Tensor converted, ToCOrder(tensor));
      IOTX_RETURN_IF_ERROR(file.Write(converted.stored));
    }
    at += layout.data_sizes[index];
  }
  IOTX_RETURN_IF_ERROR(write_literals_until(layout.size));
  return file.Commit();
}

}  // namespace iotx::io
