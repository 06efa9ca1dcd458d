// A numpy array as the .npy and pickle readers hand it out, and the layout fixes they apply.
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


// A dense array in C order whose bytes live elsewhere: in a file mapping (zero-copy reads) or
// in a heap buffer, which `owner` keeps alive. Copying an Array copies the view, not the bytes.
struct Array {
  std::string descr;    // numpy type string as the file had it ("<f4", "|u1", "<V2"); big-endian
                        // input was swapped to little-endian and its '>' turned into '<'
  size_t itemsize = 0;  // bytes per element (> 0)
  Dims shape;
  std::span<const std::byte> data;    // product(shape) * itemsize bytes
  std::shared_ptr<const void> owner;  // keeps `data` valid; may be null for borrowed data

  int64_t num_elements() const { return CheckedProduct(shape).value_or(0); }
};

// An entry of a pickled dict, in the dict's order.
struct NamedArray {
  std::string name;
  Array array;
};

// How the source bytes of an array are laid out.
struct SourceLayout {
  // The bytes are C order of this shape...
  Dims memory_shape;
  // ...and the array is transpose(memory, axes): its axis k is memory axis axes[k]. Empty for
  // plain C order. Fortran order is memory_shape = reversed(shape), axes = (n-1, ..., 0).
  Dims axes;
};

// The layout of a Fortran-ordered array of `shape`.
SourceLayout FortranLayout(std::span<const int64_t> shape);

// Builds the Array for `data`, which holds an array of `info`'s elements laid out as
// `layout` says. Plain little-endian C-order data is referenced (zero-copy, `owner` kept);
// otherwise it is copied once into a new buffer: transposed to C order (by the permute kernel)
// and byte-swapped to little-endian, with the descr's '>' changed to '<'. `data` must hold
// exactly product(memory_shape) * itemsize bytes and `axes` must be a permutation (callers
// check); the kernel's errors pass through.
Expected<Array> MakeArray(std::string descr, const DescrInfo& info, const SourceLayout& layout,
                          std::span<const std::byte> data, std::shared_ptr<const void> owner);

// Reverses the bytes of every `unit`-byte group of `data` (unit 1: nothing to do).
void ByteSwap(std::span<std::byte> data, size_t unit);

// A heap buffer of `size` bytes (uninitialized) owned by a shared_ptr, for Array::owner.
std::shared_ptr<std::byte[]> AllocateBuffer(size_t size);

}  // namespace iotx::io
