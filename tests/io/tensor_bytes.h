// The C-order bytes of a tensor as a string, for comparing in tests (io::CopyCOrder does the
// conversion; a test that fails to convert fails).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "io/safetensors.h"
#include "io/tensor.h"

namespace iotx::test {

inline std::string COrderBytes(const io::Tensor& tensor) {
  std::string bytes(tensor.byte_size(), '\0');
  const Status converted =
      io::CopyCOrder(tensor, std::as_writable_bytes(std::span<char>(bytes.data(), bytes.size())));
  EXPECT_TRUE(converted) << converted.error().ToString();
  return bytes;
}

// A tensor of `descr` elements and `shape` viewing `bytes` (which must outlive it).
inline io::Tensor ViewTensor(std::string name, std::string descr, size_t itemsize, Dims shape,
                             std::span<const std::byte> bytes) {
  io::Tensor tensor;
  tensor.name = std::move(name);
  tensor.descr = std::move(descr);
  tensor.element_bits = itemsize * 8;
  tensor.shape = std::move(shape);
  tensor.stored = bytes;
  return tensor;
}

// A tensor of safetensors dtype `dtype` viewing `bytes` (element size 8 bits when the dtype
// is unknown, so a writer gets to refuse it).
inline io::Tensor SafetensorsView(std::string name, std::string dtype, Dims shape,
                                  std::span<const std::byte> bytes) {
  io::Tensor tensor;
  tensor.name = std::move(name);
  tensor.element_bits = io::SafetensorsDTypeBits(dtype).value_or(8);
  tensor.dtype = std::move(dtype);
  tensor.shape = std::move(shape);
  tensor.stored = bytes;
  return tensor;
}

}  // namespace iotx::test
