// Reusable buffers for the producer's pipeline. A checkpoint of thousands of tensors would
// otherwise map, fault in and have the kernel zero fresh memory for every tensor; here a
// buffer is only ever grown, so after the first tensors of the largest size the pipeline
// touches no new page. Buffers are advised to use transparent huge pages where they fit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

namespace iotx::producer {

class BufferPool {
 public:
  class Buffer {
   public:
    std::span<std::byte> bytes(size_t size) const { return {data_, size}; }
    size_t capacity() const noexcept { return capacity_; }

   private:
    friend class BufferPool;
    std::byte* data_ = nullptr;
    size_t capacity_ = 0;
  };

  // `count` buffers, each allocated on first use.
  explicit BufferPool(size_t count);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Waits for a free buffer and returns it with room for `size` bytes (one that fits if any,
  // else the largest, grown), or nullptr once the pool is cancelled or memory runs out.
  // Thread-safe.
  Buffer* Acquire(size_t size);
  // Gives `buffer` back (nullptr is ignored). Thread-safe.
  void Release(Buffer* buffer);
  // Wakes every waiting Acquire, which returns nullptr from then on.
  void Cancel();

 private:
  static bool Grow(Buffer& buffer, size_t size);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Buffer> buffers_;
  std::vector<Buffer*> free_;
  bool cancelled_ = false;
};

}  // namespace iotx::producer
