// DeviceTransform::slice_bytes and ApplySlices: a tensor whose spec keeps its leading dims in
// place is transformed a piece of whole slices at a time, each piece from its own bytes alone,
// and the pieces make the tensor's device layout (checked against the naive reference,
// support/reference_transpose.h).
#include "producer/device_transform.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "support/reference_transpose.h"

namespace iotx::producer {
namespace {

io::Tensor TensorOf(const std::vector<std::byte>& bytes, Dims shape, size_t element) {
  io::Tensor tensor;
  tensor.name = "t";
  tensor.element_bits = 8 * element;
  tensor.shape = std::move(shape);
  tensor.stored = bytes;
  return tensor;
}

struct Case {
  Dims reshape, transpose;
  size_t element;
  size_t slice_bytes;  // expected
};

TEST(DeviceTransformTest, PiecesOfWholeSlicesMakeTheDeviceLayout) {
  const Case cases[] = {
      {{12, 6, 5, 7}, {0, 2, 1, 3}, 4, 6 * 5 * 7 * 4},  // one kept dim
      {{4, 3, 10, 9}, {0, 1, 3, 2}, 2, 10 * 9 * 2},     // two kept dims: slices of the last two
      {{9, 8, 17}, {0, 2, 1}, 1, 8 * 17},
      {{7, 3, 4, 5, 2}, {0, 4, 3, 2, 1}, 8, 3 * 4 * 5 * 2 * 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.reshape.size()) + "-d, element " +
                 std::to_string(c.element));
    const int64_t elements =
        std::accumulate(c.reshape.begin(), c.reshape.end(), int64_t{1}, std::multiplies<>());
    const std::vector<std::byte> src =
        test::RandomBytes(static_cast<size_t>(elements) * c.element, 7);
    const io::Tensor tensor = TensorOf(src, Dims{elements}, c.element);
    const io::Tensor* tensors[] = {&tensor};
    const std::optional<TransposeSpec> specs[] = {TransposeSpec{c.reshape, c.transpose}};
    auto transform = DeviceTransform::Build(tensors, specs);
    ASSERT_TRUE(transform) << transform.error().ToString();
    ASSERT_EQ(transform->slice_bytes(0), c.slice_bytes);
    const std::vector<std::byte> want =
        test::ReferenceTranspose(src.data(), c.reshape.span(), c.transpose.span(), c.element);
    // Pieces of 1, 2 and 3 slices, the last one shorter where they do not divide the tensor.
    for (size_t per_piece : {size_t{1}, size_t{2}, size_t{3}}) {
      std::vector<std::byte> got(src.size(), std::byte{0xee});
      const size_t piece = per_piece * c.slice_bytes;
      for (size_t at = 0; at < src.size(); at += piece) {
        const size_t length = std::min(piece, src.size() - at);
        // Each piece from a buffer of its own: nothing outside it is there to read.
        const std::vector<std::byte> own(src.begin() + static_cast<ptrdiff_t>(at),
                                         src.begin() + static_cast<ptrdiff_t>(at + length));
        Status applied = transform->ApplySlices(0, own, at, std::span(got).subspan(at, length));
        ASSERT_TRUE(applied) << applied.error().ToString();
      }
      EXPECT_EQ(got, want) << per_piece << " slices a piece";
    }
    // Not whole slices: refused, nothing written.
    if (c.slice_bytes > c.element) {
      std::vector<std::byte> out(c.slice_bytes, std::byte{0});
      const std::span<const std::byte> part = std::span(src).subspan(c.element, c.slice_bytes);
      EXPECT_FALSE(transform->ApplySlices(0, part, c.element, out));
      EXPECT_EQ(out, std::vector<std::byte>(c.slice_bytes, std::byte{0}));
    }
  }
}

TEST(DeviceTransformTest, ASpecThatMovesTheFirstDimHasOneSliceTheTensor) {
  std::vector<std::byte> src(6 * 4 * 4);
  const io::Tensor tensor = TensorOf(src, Dims{6, 4}, 4);
  const io::Tensor* tensors[] = {&tensor, &tensor, &tensor};
  const std::optional<TransposeSpec> specs[] = {TransposeSpec{{6, 4}, {1, 0}},
                                                TransposeSpec{{6, 4}, {0, 1}}, std::nullopt};
  auto transform = DeviceTransform::Build(tensors, specs);
  ASSERT_TRUE(transform) << transform.error().ToString();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(transform->slice_bytes(i), src.size()) << i;
}

TEST(DeviceTransformTest, AnEmptyStackedTensorIsOnePieceOfNothing) {
  const std::vector<std::byte> none;
  const io::Tensor stacked = TensorOf(none, Dims{0, 3, 4}, 4);
  const io::Tensor moved = TensorOf(none, Dims{4, 0}, 4);
  const io::Tensor* tensors[] = {&stacked, &moved};
  const std::optional<TransposeSpec> specs[] = {TransposeSpec{{0, 3, 4}, {0, 2, 1}},
                                                TransposeSpec{{4, 0}, {1, 0}}};
  auto transform = DeviceTransform::Build(tensors, specs);
  ASSERT_TRUE(transform) << transform.error().ToString();
  EXPECT_EQ(transform->slice_bytes(0), 3u * 4 * 4);  // a slice, of which there are none
  EXPECT_EQ(transform->slice_bytes(1), 0u);          // the whole tensor
  std::vector<std::byte> out;
  EXPECT_TRUE(transform->ApplySlices(0, none, 0, out));
  EXPECT_TRUE(transform->ApplySlices(1, none, 0, out));
  const std::vector<std::byte> one(4);
  std::vector<std::byte> out_one(4);
  EXPECT_FALSE(transform->ApplySlices(0, one, 0, out_one));  // past the end: refused
}

}  // namespace
}  // namespace iotx::producer
