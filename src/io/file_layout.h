// Where every byte of a tensor file comes from, decided before any is written: the bytes the
// format itself needs (a .npy header, a safetensors header, pickle opcodes) and the offset of
// each tensor's data. The writers of every format fill a layout the same way, and so does the
// producer's pipeline, which writes tensors in pieces from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "files/atomic_file.h"
#include "io/tensor.h"
#include "iotx/status.h"

namespace iotx::io {

struct FileLayout {
  struct Literal {
    uint64_t offset = 0;
    std::string bytes;
  };
  uint64_t size = 0;              // the whole file
  std::vector<Literal> literals;  // in file order
  // Per tensor, in the order the layout function was given them: where its C-order bytes go
  // and how many there are. Literals and data together cover [0, size) without overlap.
  std::vector<uint64_t> data_offsets;
  std::vector<uint64_t> data_sizes;
};

// Writes `layout` to `path` atomically (files::AtomicFile), each tensor's C-order bytes at
// its offset: straight from its stored bytes when they are C order, else converted into a
// buffer one tensor at a time (CopyCOrder). `tensors` are those the layout was made for, in
// the same order. kBufferSize when a tensor's size differs from the layout's; otherwise the
// errors of AtomicFile.
Status WriteLaidOut(const std::filesystem::path& path, const FileLayout& layout,
                    std::span<const Tensor> tensors, const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
