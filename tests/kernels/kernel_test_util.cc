#include "kernels/kernel_test_util.h"

#include <sys/mman.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "iotx/dims.h"
#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

constexpr size_t kGuard = 192;  // bytes checked on each side of the output
constexpr std::byte kGuardByte{0xA5};

}  // namespace

FencedBytes::FencedBytes(const std::vector<std::byte>& data) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t inner = (data.size() + page - 1) / page * page;
  length_ = inner + 2 * page;
  void* map = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return;
  base_ = static_cast<std::byte*>(map);
  mprotect(base_, page, PROT_NONE);
  mprotect(base_ + page + inner, page, PROT_NONE);
  data_ = base_ + page + inner - data.size();
  std::copy(data.begin(), data.end(), data_);
}

FencedBytes::~FencedBytes() {
  if (base_ != nullptr) munmap(base_, length_);
}

std::string Describe(const Case& c) {
  const char* stores = c.options.stores == PlanOptions::Stores::kStreaming ? "streaming"
                       : c.options.stores == PlanOptions::Stores::kRegular ? "regular"
                                                                          : "auto";
  return "shape " + ToString(c.shape) + " perm " + ToString(c.perm) + " elem " +
         std::to_string(c.elem) + " stores " + stores + " src+" + std::to_string(c.src_offset) +
         " dst+" + std::to_string(c.dst_offset) + " threads " + std::to_string(c.threads) +
         " max_threads " + std::to_string(c.options.max_threads) +
         (c.range_bytes > 0 ? " ranges of " + std::to_string(c.range_bytes) : "");
}

namespace {

// The source and its reference of the last case checked on this thread. A test checks one
// layout's data at many destination offsets, range sizes and thread counts in a row; those
// cases compute both once. The destination's storage is kept too, so a case of tens of MB
// costs its copy and not page faults on fresh allocations (they were most of such a test's
// time: first touches fault every page in again, and this host's faults are slow).
struct SourceAndReference {
  std::vector<int64_t> shape;
  std::vector<int64_t> perm;
  size_t elem = 0;
  size_t src_offset = 0;
  uint64_t seed = 0;
  bool src_fenced = false;
  bool valid = false;
  std::vector<std::byte> storage;
  std::optional<FencedBytes> fenced;
  const std::byte* src = nullptr;
  std::vector<std::byte> expected;

  bool Matches(const Case& c) const {
    return valid && shape == c.shape && perm == c.perm && elem == c.elem &&
           src_offset == c.src_offset && seed == c.seed && src_fenced == c.src_fenced;
  }
};

// Makes `ref` the source and reference of `c`; false (a failure recorded) when the fenced
// copy could not be mapped.
bool PrepareSource(const Case& c, size_t bytes, SourceAndReference& ref) {
  if (ref.Matches(c)) return true;
  ref.valid = false;
  ref.fenced.reset();
  // 64-byte aligned storage; the offset then makes the source as misaligned as asked.
  ref.storage = RandomBytes(bytes + c.src_offset + 64, c.seed);
  auto* base = ref.storage.data();
  const size_t align = (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  ref.src = base + align + c.src_offset;
  if (c.src_fenced) {
    ref.fenced.emplace(std::vector<std::byte>(ref.src, ref.src + bytes));
    if (ref.fenced->data() == nullptr) {
      ADD_FAILURE() << "mmap failed";
      return false;
    }
    ref.src = ref.fenced->data();
  }
  ref.expected = ReferenceTranspose(ref.src, c.shape, c.perm, c.elem);
  ref.shape = c.shape;
  ref.perm = c.perm;
  ref.elem = c.elem;
  ref.src_offset = c.src_offset;
  ref.seed = c.seed;
  ref.src_fenced = c.src_fenced;
  ref.valid = true;
  return true;
}

}  // namespace

void CheckCase(const Case& c) {
  SCOPED_TRACE(Describe(c));
  size_t count = 1;
  for (int64_t n : c.shape) count *= static_cast<size_t>(n);
  const size_t bytes = count * c.elem;

  thread_local SourceAndReference ref;
  ASSERT_TRUE(PrepareSource(c, bytes, ref));
  const std::byte* src = ref.src;
  const std::vector<std::byte>& expected = ref.expected;

  thread_local std::vector<std::byte> dst_storage;
  dst_storage.assign(bytes + c.dst_offset + 2 * kGuard + 64, kGuardByte);
  auto* dst_base = dst_storage.data();
  const size_t dst_align = (64 - reinterpret_cast<uintptr_t>(dst_base) % 64) % 64;
  std::byte* guard_lo = dst_base + dst_align;
  std::byte* dst = guard_lo + kGuard + c.dst_offset;

  auto plan = MakePlan(c.shape, c.perm, c.elem, c.options);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  ASSERT_EQ(PlanBytes(**plan), bytes);

  Status status;
  tbb::task_arena arena(c.threads);
  arena.execute([&] {
    if (c.range_bytes == 0) {
      status = Execute(**plan, src, dst);
      return;
    }
    for (size_t at = 0; at < bytes && status.has_value(); at += c.range_bytes) {
      status = ExecuteRange(**plan, src, dst + at, at, std::min(c.range_bytes, bytes - at));
    }
  });
  ASSERT_TRUE(status.has_value()) << status.error().ToString();

  if (bytes > 0) {
    const auto mismatch = std::mismatch(expected.begin(), expected.end(), dst);
    ASSERT_TRUE(mismatch.first == expected.end())
        << "first wrong byte at " << (mismatch.first - expected.begin()) << " of " << bytes
        << "\n" << Describe(**plan);
  }
  for (const std::byte* p = guard_lo; p < dst; ++p) {
    ASSERT_EQ(*p, kGuardByte) << "wrote " << (dst - p) << " bytes before the output";
  }
  for (const std::byte* p = dst + bytes; p < dst + bytes + kGuard; ++p) {
    ASSERT_EQ(*p, kGuardByte) << "wrote " << (p - dst - bytes) << " bytes past the output";
  }
}

std::vector<int64_t> RandomShape(std::mt19937_64& rng, size_t rank, int64_t max_elements,
                                 bool allow_zero) {
  // Extents around the tile sizes (4..64 rows, 4..64 columns) and their remainders.
  static constexpr int64_t kExtents[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33,
                                         63, 64, 65, 100, 127, 128, 129, 200};
  std::vector<int64_t> shape(rank);
  for (;;) {
    int64_t product = 1;
    for (auto& n : shape) {
      n = kExtents[rng() % std::size(kExtents)];
      if (allow_zero && rng() % 40 == 0) n = 0;
      product *= std::max<int64_t>(n, 1);
    }
    if (product <= max_elements) return shape;
  }
}

std::vector<int64_t> RandomPerm(std::mt19937_64& rng, size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

uint64_t PropertySeed(uint64_t fixed_seed) {
  const char* env = std::getenv("IOTX_PROPERTY_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fixed_seed;
}

}  // namespace iotx::test
