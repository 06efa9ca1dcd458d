#include "io/tensor.h"

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

bool IsIdentity(std::span<const int64_t> axes) {
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

// Decodes latin-1 text (checked by Latin1Size when the tensor was read) into `dst`.
void DecodeLatin1(std::span<const std::byte> utf8, std::span<std::byte> dst) {
  size_t n = 0;
  for (size_t i = 0; i < utf8.size() && n < dst.size(); ++i) {
    const auto c = static_cast<uint8_t>(utf8[i]);
    if (c < 0x80) {
      dst[n++] = std::byte{c};
    } else if (i + 1 < utf8.size()) {
      // U+0080..U+00FF is C2 80..C3 BF.
      dst[n++] = std::byte(
          static_cast<uint8_t>(((c & 0x03) << 6) | (static_cast<uint8_t>(utf8[++i]) & 0x3F)));
    }
  }
}

}  // namespace

uint64_t Tensor::byte_size() const {
  const uint64_t count = static_cast<uint64_t>(CheckedProduct(shape).value_or(0));
  return count * element_bits / 8;
}

bool Tensor::is_c_order() const {
  return !layout.latin1 && layout.swap_unit <= 1 && IsIdentity(layout.axes);
}

StoredLayout FortranLayout(std::span<const int64_t> shape) {
  StoredLayout layout;
  for (size_t k = 0; k < shape.size(); ++k) {
    layout.memory_shape.push_back(shape[shape.size() - 1 - k]);
    layout.axes.push_back(static_cast<int64_t>(shape.size() - 1 - k));
  }
  return layout;
}

Tensor DescribeStored(std::string name, std::string descr, const DescrInfo& info,
                      StoredLayout layout, std::span<const std::byte> data,
                      std::shared_ptr<const void> owner, bool latin1) {
  IOTX_DCHECK(layout.axes.empty() || layout.axes.size() == layout.memory_shape.size());
  Tensor tensor;
  tensor.name = std::move(name);
  tensor.element_bits = info.itemsize * 8;
  if (layout.axes.empty()) {
    tensor.shape = layout.memory_shape;
  } else {
    for (int64_t axis : layout.axes) tensor.shape.push_back(layout.memory_shape[axis]);
  }
  if (IsBigEndian(info)) {
    layout.swap_unit = ByteSwapUnit(info);
    descr[descr.find('>')] = '<';
  } else {
    layout.swap_unit = 1;
  }
  layout.latin1 = latin1;
  if (IsIdentity(layout.axes)) layout.axes.clear();
  tensor.descr = std::move(descr);
  tensor.stored = data;
  tensor.layout = std::move(layout);
  tensor.owner = std::move(owner);
  IOTX_DCHECK(latin1 || tensor.byte_size() == data.size());
  return tensor;
}

Expected<size_t> Latin1Size(std::span<const std::byte> utf8) {
  size_t n = 0;
  for (size_t i = 0; i < utf8.size(); ++i, ++n) {
    const auto c = static_cast<uint8_t>(utf8[i]);
    if (c < 0x80) continue;
    if ((c != 0xC2 && c != 0xC3) || i + 1 >= utf8.size() ||
        (static_cast<uint8_t>(utf8[i + 1]) & 0xC0) != 0x80) {
      return Fail(ErrorCode::kPickleFormat,
                  "a str that should hold latin-1 bytes has a character above U+00FF");
    }
    ++i;
  }
  return n;
}

Status CopyCOrder(const Tensor& tensor, std::span<std::byte> dst) {
  const uint64_t size = tensor.byte_size();
  if (dst.size() != size || (!tensor.layout.latin1 && tensor.stored.size() != size)) {
    return Fail(Error(ErrorCode::kBufferSize,
                      "tensor of " + std::to_string(size) + " bytes, stored in " +
                          std::to_string(tensor.stored.size()) + ", cannot fill " +
                          std::to_string(dst.size()) + " bytes")
                    .InFile(tensor.file)
                    .AtKey(tensor.name));
  }
  if (size == 0) return Ok();
  const StoredLayout& layout = tensor.layout;
  std::span<const std::byte> src = tensor.stored;
  std::shared_ptr<std::byte[]> decoded;
  if (layout.latin1) {
    if (layout.axes.empty()) {
      DecodeLatin1(src, dst);
      src = {};
    } else {
      decoded = AllocateBuffer(size);
      DecodeLatin1(src, {decoded.get(), size});
      src = {decoded.get(), size};
    }
  }
  if (!layout.axes.empty()) {
    // C order of transpose(memory, axes) is exactly the permute the kernel exists for.
    IOTX_ASSIGN_OR_RETURN(PlanPtr plan,
                          MakePlan(layout.memory_shape, layout.axes, tensor.element_size()));
    IOTX_RETURN_IF_ERROR(Execute(*plan, src.data(), dst.data()));
  } else if (!src.empty()) {
    std::memcpy(dst.data(), src.data(), size);
  }
  ByteSwap(dst, layout.swap_unit);
  return Ok();
}

Expected<Tensor> ToCOrder(const Tensor& tensor) {
  if (tensor.is_c_order()) return tensor;
  const uint64_t size = tensor.byte_size();
  std::shared_ptr<std::byte[]> buffer = AllocateBuffer(size);
  IOTX_RETURN_IF_ERROR(CopyCOrder(tensor, {buffer.get(), size}));
  Tensor copy = tensor;
  copy.stored = {buffer.get(), size};
  copy.layout = {};
  copy.owner = std::move(buffer);
  return copy;
}

void ByteSwap(std::span<std::byte> data, size_t unit) {
  switch (unit) {
    case 0:
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

}  // namespace iotx::io
