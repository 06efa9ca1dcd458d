// iotx::Dims — a vector of int64 dimension sizes or axis indices with 6 inline slots.
//
// Six is the device compiler's intended rank ceiling (its in-memory map stores
// SmallVector<long, 6>), so every spec it emits fits without a heap allocation; longer
// vectors spill to the heap and behave the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

#include "iotx/export.h"

namespace iotx {

// The most dimensions a tensor, a spec or a plan may have: numpy 2's NPY_MAXDIMS (numpy 1 has
// 32). Bounds file headers, per-array bookkeeping and the kernel's loop nest.
inline constexpr size_t kMaxRank = 64;

class IOTX_API Dims {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  static constexpr size_t kInlineCapacity = 6;

  Dims() noexcept = default;
  Dims(std::initializer_list<int64_t> values) : Dims(std::span<const int64_t>(values)) {}
  explicit Dims(std::span<const int64_t> values);
  explicit Dims(size_t count, int64_t value = 0);
  Dims(const Dims& other) : Dims(other.span()) {}
  Dims(Dims&& other) noexcept;
  Dims& operator=(const Dims& other);
  Dims& operator=(Dims&& other) noexcept;
  ~Dims();

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return capacity_; }
  // True while the values live in the inline slots (no heap allocation made).
  bool is_inline() const noexcept { return data_ == inline_; }

  int64_t* data() noexcept { return data_; }
  const int64_t* data() const noexcept { return data_; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  int64_t& operator[](size_t i) noexcept { return data_[i]; }
  int64_t operator[](size_t i) const noexcept { return data_[i]; }
  int64_t& front() noexcept { return data_[0]; }
  int64_t front() const noexcept { return data_[0]; }
  int64_t& back() noexcept { return data_[size_ - 1]; }
  int64_t back() const noexcept { return data_[size_ - 1]; }

  std::span<const int64_t> span() const noexcept { return {data_, size_}; }
  operator std::span<const int64_t>() const noexcept { return span(); }  // NOLINT: a view

  void push_back(int64_t value);
  void pop_back() noexcept { --size_; }
  void resize(size_t count, int64_t value = 0);
  void reserve(size_t count);
  void clear() noexcept { size_ = 0; }
  // Removes the value at `index` (< size()), shifting the rest down.
  void erase(size_t index) noexcept;
  // Inserts `value` before position `index` (<= size()).
  void insert(size_t index, int64_t value);

  friend bool operator==(const Dims& a, const Dims& b) noexcept;

 private:
  void Grow(size_t min_capacity);
  // Takes other's values (its heap block, or a copy of its inline ones into our storage,
  // which holds at least kInlineCapacity); leaves other empty and inline.
  void TakeFrom(Dims& other) noexcept;

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInlineCapacity;
  int64_t inline_[kInlineCapacity] = {};
};

// "[3, 2048, 2, 128]" — Python's list repr, which is also how the source prints shapes.
IOTX_API std::string ToString(std::span<const int64_t> values);

// The product of `dims`, or nullopt if a value is negative or the product of the non-zero
// values overflows int64. An empty span has product 1 (a scalar has one element).
IOTX_API std::optional<int64_t> CheckedProduct(std::span<const int64_t> dims) noexcept;

}  // namespace iotx
