#include "io/array.h"

#include <algorithm>
#include <cstring>

namespace iotx::io {
namespace {

// The odometer loop with the element size known at compile time for the common sizes, so the
// per-element copy is one load and one store.
template <size_t kSize>
void CopyStrided(const std::byte* src, std::span<const int64_t> out_shape,
                 std::span<const int64_t> src_strides, size_t itemsize, std::byte* dst) {
  const size_t rank = out_shape.size();
  const size_t size = kSize != 0 ? kSize : itemsize;
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_stride = src_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;  // bytes into src of out[index]
  for (;;) {
    const std::byte* s = src + offset;
    for (int64_t i = 0; i < inner; ++i, s += inner_stride, dst += size) {
      std::memcpy(dst, s, size);
    }
    // Advance the outer dims like an odometer.
    size_t d = rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      offset += src_strides[d];
      if (++index[d] < out_shape[d]) break;
      offset -= src_strides[d] * out_shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

SourceLayout FortranLayout(std::span<const int64_t> shape) {
  SourceLayout layout;
  for (size_t k = 0; k < shape.size(); ++k) {
    layout.memory_shape.push_back(shape[shape.size() - 1 - k]);
    layout.axes.push_back(static_cast<int64_t>(shape.size() - 1 - k));
  }
  return layout;
}

void TransposeToCOrder(const std::byte* src, std::span<const int64_t> src_shape,
                       std::span<const int64_t> axes, size_t itemsize, std::byte* dst) {
  const size_t rank = src_shape.size();
  if (rank == 0 || std::find(src_shape.begin(), src_shape.end(), 0) != src_shape.end()) {
    if (rank == 0) std::memcpy(dst, src, itemsize);
    return;
  }
  std::vector<int64_t> src_strides(rank);  // in bytes, C order
  int64_t stride = static_cast<int64_t>(itemsize);
  for (size_t d = rank; d-- > 0;) {
    src_strides[d] = stride;
    stride *= src_shape[d];
  }
  std::vector<int64_t> out_shape(rank), out_src_strides(rank);
  for (size_t k = 0; k < rank; ++k) {
    out_shape[k] = src_shape[axes[k]];
    out_src_strides[k] = src_strides[axes[k]];
  }
  switch (itemsize) {
    case 1:
      return CopyStrided<1>(src, out_shape, out_src_strides, itemsize, dst);
    case 2:
      return CopyStrided<2>(src, out_shape, out_src_strides, itemsize, dst);
    case 4:
      return CopyStrided<4>(src, out_shape, out_src_strides, itemsize, dst);
    case 8:
      return CopyStrided<8>(src, out_shape, out_src_strides, itemsize, dst);
    case 16:
      return CopyStrided<16>(src, out_shape, out_src_strides, itemsize, dst);
    default:
      return CopyStrided<0>(src, out_shape, out_src_strides, itemsize, dst);
  }
}

namespace {

// Swaps fixed-size words in place with the bswap builtins, which the compiler vectorizes
// (BM_ByteSwap4: 3.6 GB/s in place on 64 MiB, about half of memcpy's rate on that machine).
uint16_t Swap(uint16_t w) { return __builtin_bswap16(w); }
uint32_t Swap(uint32_t w) { return __builtin_bswap32(w); }
uint64_t Swap(uint64_t w) { return __builtin_bswap64(w); }

template <class Word>
void SwapWords(std::span<std::byte> data) {
  for (size_t i = 0; i + sizeof(Word) <= data.size(); i += sizeof(Word)) {
    Word word;
    std::memcpy(&word, data.data() + i, sizeof(Word));
    word = Swap(word);
    std::memcpy(data.data() + i, &word, sizeof(Word));
  }
}

}  // namespace

void ByteSwap(std::span<std::byte> data, size_t unit) {
  switch (unit) {
    case 1:
      return;
    case 2:
      return SwapWords<uint16_t>(data);
    case 4:
      return SwapWords<uint32_t>(data);
    case 8:
      return SwapWords<uint64_t>(data);
    default:
      for (size_t i = 0; i + unit <= data.size(); i += unit) {
        std::reverse(data.begin() + i, data.begin() + i + unit);
      }
  }
}

std::shared_ptr<std::byte[]> AllocateBuffer(size_t size) {
  return std::make_shared_for_overwrite<std::byte[]>(size);
}

Array MakeArray(std::string descr, const DescrInfo& info, const SourceLayout& layout,
                std::span<const std::byte> data, std::shared_ptr<const void> owner) {
  Array array;
  array.itemsize = info.itemsize;
  if (layout.axes.empty()) {
    array.shape = layout.memory_shape;
  } else {
    for (int64_t axis : layout.axes) array.shape.push_back(layout.memory_shape[axis]);
  }
  const bool swap = IsBigEndian(info);
  bool transpose = false;
  for (size_t k = 0; k < layout.axes.size(); ++k) {
    transpose = transpose || layout.axes[k] != static_cast<int64_t>(k);
  }
  if (!swap && !transpose) {
    array.descr = std::move(descr);
    array.data = data;
    array.owner = std::move(owner);
    return array;
  }
  std::shared_ptr<std::byte[]> buffer = AllocateBuffer(data.size());
  if (transpose) {
    TransposeToCOrder(data.data(), layout.memory_shape, layout.axes, info.itemsize, buffer.get());
  } else if (!data.empty()) {
    std::memcpy(buffer.get(), data.data(), data.size());
  }
  if (swap) {
    ByteSwap({buffer.get(), data.size()}, ByteSwapUnit(info));
    descr[descr.find('>')] = '<';
  }
  array.descr = std::move(descr);
  array.data = {buffer.get(), data.size()};
  array.owner = std::move(buffer);
  return array;
}

}  // namespace iotx::io
