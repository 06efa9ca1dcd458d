// The one tensor type of iotx's file code: what the .npy, pickle and safetensors readers hand
// out, what the writers take, and what the producer moves into device layout.
//
// A tensor is a view of its bytes as the file stores them plus how they map to C order,
// little-endian: readers never convert (a big-endian, Fortran-ordered or protocol 2 array is
// described, not copied), so reading a file costs no memory beyond its mapping, and a
// consumer converts one tensor at a time into a buffer of its own (CopyCOrder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/descr.h"
#include "iotx/dims.h"
#include "iotx/status.h"

namespace iotx::io {

// How a tensor's stored bytes relate to its C-order, little-endian bytes. The default says
// they are the same.
struct StoredLayout {
  // The stored elements are C order of memory_shape and the tensor is
  // transpose(memory, axes): its axis k is memory axis axes[k]. Both empty for plain C order;
  // Fortran order is memory_shape = reversed(shape), axes = (n-1, ..., 0).
  Dims memory_shape;
  Dims axes;
  // Big-endian elements: every group of this many bytes is reversed (ByteSwapUnit); 1: none.
  size_t swap_unit = 1;
  // The bytes are the UTF-8 text of a str whose characters are the bytes (U+0000..U+00FF),
  // as pickle protocol 2 stores bytes.
  bool latin1 = false;
};

struct Tensor {
  std::string name;
  // numpy type string, spelled little-endian ("<f4", "|u1", "<V2"): a big-endian input's '>'
  // is turned into '<' since CopyCOrder swaps its bytes. Empty for a type numpy lacks ("F4").
  std::string descr;
  // safetensors dtype name ("F32", "BF16"); empty unless read from a safetensors file.
  std::string dtype;
  size_t element_bits = 0;  // 8 * bytes per element, or 4 / 6 for safetensors' packed types
  Dims shape;
  std::span<const std::byte> stored;  // the bytes as stored, described by `layout`
  StoredLayout layout;
  std::shared_ptr<const void> owner;  // keeps `stored` valid; may be null for borrowed bytes
  std::string file;                   // the file it was read from, for diagnostics

  // Bytes of the C-order data: product(shape) * element_bits / 8.
  uint64_t byte_size() const;
  // Bytes per element for the kernel (1 for packed sub-byte types, which are only copied).
  size_t element_size() const { return element_bits % 8 == 0 ? element_bits / 8 : 1; }
  // The stored bytes already are the C-order, little-endian bytes (no conversion needed).
  bool is_c_order() const;
};

// The Fortran-order layout of a tensor of `shape`.
StoredLayout FortranLayout(std::span<const int64_t> shape);

// Describes `data`, which holds elements of `info` laid out as `layout` says (memory_shape
// and axes; swap_unit and latin1 are set here from `info` and `latin1`), as a tensor of the
// C-order shape. The readers call it once they have checked that `data` holds exactly the
// elements' bytes (decoded bytes for latin1) and that axes is a permutation. A big-endian
// descr is spelled little-endian in the result.
Tensor DescribeStored(std::string name, std::string descr, const DescrInfo& info,
                      StoredLayout layout, std::span<const std::byte> data,
                      std::shared_ptr<const void> owner, bool latin1 = false);

// The number of bytes a latin-1 str's UTF-8 text decodes to; kPickleFormat when a character
// is above U+00FF (or the text is not UTF-8).
Expected<size_t> Latin1Size(std::span<const std::byte> utf8);

// Writes the tensor's C-order, little-endian bytes into `dst`, which must hold exactly
// byte_size() bytes (kBufferSize otherwise): a copy for a C-order tensor; else the stored
// bytes decoded (latin1), permuted to C order by the kernel and byte-swapped, in one pass
// each. Only a latin-1 tensor that also needs a transpose takes a temporary buffer of its
// size. `dst` must not overlap the stored bytes.
Status CopyCOrder(const Tensor& tensor, std::span<std::byte> dst);

// A C-order copy of `tensor` in a heap buffer it owns (the tensor itself when it already is
// C order). For writers and tests; the producer converts into buffers it reuses.
Expected<Tensor> ToCOrder(const Tensor& tensor);

// Reverses the bytes of every `unit`-byte group of `data` (unit 1: nothing to do).
void ByteSwap(std::span<std::byte> data, size_t unit);

// A heap buffer of `size` bytes (uninitialized) owned by a shared_ptr, for Tensor::owner.
std::shared_ptr<std::byte[]> AllocateBuffer(size_t size);

}  // namespace iotx::io
