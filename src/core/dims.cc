#include "iotx/dims.h"
#include "core/check.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace iotx {

Dims::Dims(std::span<const int64_t> values) {
  reserve(values.size());
  if (!values.empty()) std::memcpy(data_, values.data(), values.size() * sizeof(int64_t));
  size_ = values.size();
}

Dims::Dims(size_t count, int64_t value) { resize(count, value); }

void Dims::TakeFrom(Dims& other) noexcept {
  if (other.is_inline()) {
    std::memcpy(data_, other.inline_, other.size_ * sizeof(int64_t));
  } else {
    if (!is_inline()) delete[] data_;
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = other.inline_;
    other.capacity_ = kInlineCapacity;
  }
  size_ = other.size_;
  other.size_ = 0;
}

Dims::Dims(Dims&& other) noexcept { TakeFrom(other); }

Dims& Dims::operator=(const Dims& other) {
  if (this != &other) {
    reserve(other.size_);
    if (other.size_ != 0) std::memcpy(data_, other.data_, other.size_ * sizeof(int64_t));
    size_ = other.size_;
  }
  return *this;
}

Dims& Dims::operator=(Dims&& other) noexcept {
  if (this != &other) TakeFrom(other);
  return *this;
}

Dims::~Dims() {
  if (!is_inline()) delete[] data_;
}

void Dims::Grow(size_t min_capacity) {
  const size_t new_capacity = std::max(min_capacity, capacity_ * 2);
  auto* heap = new int64_t[new_capacity];
  if (size_ != 0) std::memcpy(heap, data_, size_ * sizeof(int64_t));
  if (!is_inline()) delete[] data_;
  data_ = heap;
  capacity_ = new_capacity;
}

void Dims::reserve(size_t count) {
  if (count > capacity_) Grow(count);
}

void Dims::push_back(int64_t value) {
  if (size_ == capacity_) Grow(size_ + 1);
  data_[size_++] = value;
}

void Dims::resize(size_t count, int64_t value) {
  reserve(count);
  for (size_t i = size_; i < count; ++i) data_[i] = value;
  size_ = count;
}

void Dims::erase(size_t index) noexcept {
  IOTX_DCHECK(index < size_);
  std::memmove(data_ + index, data_ + index + 1, (size_ - index - 1) * sizeof(int64_t));
  --size_;
}

void Dims::insert(size_t index, int64_t value) {
  IOTX_DCHECK(index <= size_);
  if (size_ == capacity_) Grow(size_ + 1);
  std::memmove(data_ + index + 1, data_ + index, (size_ - index) * sizeof(int64_t));
  data_[index] = value;
  ++size_;
}

bool operator==(const Dims& a, const Dims& b) noexcept {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

std::string ToString(std::span<const int64_t> values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
  return out;
}

std::optional<int64_t> CheckedProduct(std::span<const int64_t> dims) noexcept {
  // Zero-sized dims are multiplied in last: [0, 2^40, 2^40] is refused too, because strides
  // computed from such a shape would overflow even though it holds no elements.
  int64_t nonzero_product = 1;
  bool has_zero = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero_product, d, &nonzero_product)) return std::nullopt;
  }
  return has_zero ? 0 : nonzero_product;
}

}  // namespace iotx
