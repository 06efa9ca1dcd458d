#include "bench_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "measure.h"

namespace iotx::cli {
namespace {

// out[o] = in[i] with i[perm[k]] = o[k]: an odometer over the output's indices, the source
// offset stepping by the permuted dim's stride. kElem: the element's bytes where the compiler
// should know them (0: `elem`), so that each element is one move rather than a call.
template <size_t kElem>
void NaivePermute(const uint8_t* src, uint8_t* dst, const Dims& shape, const Dims& perm,
                  size_t elem) {
  if constexpr (kElem != 0) elem = kElem;
  const size_t rank = shape.size();
  std::vector<int64_t> src_stride(rank, static_cast<int64_t>(elem));
  for (size_t k = rank; k-- > 1;) src_stride[k - 1] = src_stride[k] * shape[k];
  std::vector<int64_t> out_shape(rank), step(rank), index(rank, 0);
  int64_t total = 1;
  for (size_t k = 0; k < rank; ++k) {
    out_shape[k] = shape[static_cast<size_t>(perm[k])];
    step[k] = src_stride[static_cast<size_t>(perm[k])];
    total *= out_shape[k];
  }
  int64_t offset = 0;
  for (int64_t n = 0; n < total; ++n) {
    std::memcpy(dst + n * static_cast<int64_t>(elem), src + offset, kElem != 0 ? kElem : elem);
    for (size_t k = rank; k-- > 0;) {
      offset += step[k];
      if (++index[k] < out_shape[k]) break;
      offset -= step[k] * out_shape[k];
      index[k] = 0;
    }
  }
}

// The output index of element n of a row-major output of `perm`'s shape.
std::vector<int64_t> OutputIndex(int64_t n, const Dims& shape, const Dims& perm) {
  std::vector<int64_t> index(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t extent = shape[static_cast<size_t>(perm[k])];
    index[k] = n % extent;
    n /= extent;
  }
  return index;
}

std::string Hex(const uint8_t* p, size_t n) {
  std::string s = "0x";
  for (size_t i = n; i-- > 0;) s += fmt::format("{:02x}", p[i]);  // little-endian value
  return s;
}

}  // namespace

Status CheckAgainstNaive(const Plan& plan, const PermuteSpec& spec, size_t elem_bytes,
                         std::byte* src_bytes, std::byte* dst_bytes) {
  const size_t bytes = PlanBytes(plan);
  // On huge pages as the timed buffers: the naive permute reads one element from each of
  // pages far apart (a 16^7 reversal: 268 MB, 16 MiB between neighbours), and on 4 KiB pages
  // each read would also miss the TLB.
  measure::Buffer want_buffer(bytes, /*huge_pages=*/true, 0);
  auto* src = reinterpret_cast<uint8_t*>(src_bytes);
  auto* got = reinterpret_cast<uint8_t*>(dst_bytes);
  auto* want = reinterpret_cast<uint8_t*>(want_buffer.data());
  // Every byte from a 64-bit linear congruential sequence: no two neighbouring elements alike.
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < bytes; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    src[i] = static_cast<uint8_t>(state >> 56);
  }
  IOTX_RETURN_IF_ERROR(Execute(plan, src, got));
  const auto naive = elem_bytes == 1   ? NaivePermute<1>
                     : elem_bytes == 2 ? NaivePermute<2>
                     : elem_bytes == 4 ? NaivePermute<4>
                     : elem_bytes == 8 ? NaivePermute<8>
                                       : NaivePermute<0>;
  naive(src, want, spec.shape, spec.perm, elem_bytes);
  if (std::memcmp(got, want, bytes) == 0) return Ok();
  size_t at = 0;
  while (got[at] == want[at]) ++at;
  const size_t element = at / elem_bytes;
  const uint8_t* g = got + element * elem_bytes;
  const uint8_t* w = want + element * elem_bytes;
  return Fail(
      ErrorCode::kInternal,
      fmt::format(
          "--check: output element {} (index [{}]) is {} where the naive "
          "element-by-element permute gives {}: the kernel is wrong for this case",
          element,
          fmt::join(OutputIndex(static_cast<int64_t>(element), spec.shape, spec.perm), ", "),
          Hex(g, elem_bytes), Hex(w, elem_bytes)));
}

}  // namespace iotx::cli
