#include "io/array.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "iotx/plan.h"

namespace iotx::io {
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

SourceLayout FortranLayout(std::span<const int64_t> shape) {
  SourceLayout layout;
  for (size_t k = 0; k < shape.size(); ++k) {
    layout.memory_shape.push_back(shape[shape.size() - 1 - k]);
    layout.axes.push_back(static_cast<int64_t>(shape.size() - 1 - k));
  }
  return layout;
}

Expected<Array> MakeArray(std::string descr, const DescrInfo& info, const SourceLayout& layout,
                          std::span<const std::byte> data, std::shared_ptr<const void> owner) {
  // The readers checked both before building the array.
  IOTX_DCHECK(CheckedProduct(layout.memory_shape).value_or(-1) * static_cast<int64_t>(info.itemsize) ==
              static_cast<int64_t>(data.size()));
  IOTX_DCHECK(layout.axes.empty() || layout.axes.size() == layout.memory_shape.size());
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
    // C order of transpose(memory, axes) is exactly the permute the kernel exists for.
    IOTX_ASSIGN_OR_RETURN(PlanPtr plan, MakePlan(layout.memory_shape, layout.axes, info.itemsize));
    IOTX_RETURN_IF_ERROR(Execute(*plan, data.data(), buffer.get()));
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
