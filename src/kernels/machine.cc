#include "kernels/machine.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/calibration_cache.h"
#include "kernels/dispatch.h"
#include "kernels/walk_calibration.h"

namespace iotx::kernels {
namespace {

struct Caches {
  int64_t l1d = 0, l1d_ways = 0, l2 = 0, llc = 0;
  const char* source = "";
};

// The C library reads these from CPUID on x86 (leaf 4 on Intel, 0x8000000x on AMD) and from
// sysfs elsewhere; a value it cannot find is 0 and the fallback says so.
Caches ReadCaches() {
  Caches c;
  c.l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  c.l1d_ways = sysconf(_SC_LEVEL1_DCACHE_ASSOC);
  c.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  c.llc = std::max<int64_t>(sysconf(_SC_LEVEL3_CACHE_SIZE), 0);
  c.source = "CPUID via sysconf";
  if (c.l1d <= 0 || c.l1d_ways <= 0 || c.l2 <= 0) {
    // Conservative values every x86-64 and Arm core of the last decade meets or exceeds.
    c.l1d = c.l1d > 0 ? c.l1d : 32 * 1024;
    c.l1d_ways = c.l1d_ways > 0 ? c.l1d_ways : 8;
    c.l2 = c.l2 > 0 ? c.l2 : 256 * 1024;
    c.source = "defaults (the C library reported no cache sizes)";
  }
  return c;
}

struct FreeBuffer {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeBuffer>;

Buffer Allocate(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge));
  if (p == nullptr) return Buffer();
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  std::memset(p, 1, bytes);  // fault every page in before timing
  return Buffer(p);
}

// Best of `reps` timed runs, in GB/s of `bytes`.
template <class Fn>
double BestGbps(size_t bytes, int reps, const Fn& fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return static_cast<double>(bytes) / best / 1e9;
}

// Timed runs of one thread's copy of `size` bytes: small ones more often (they are quicker and
// noisier).
int CopyReps(size_t size) { return size <= (size_t{8} << 20) ? 5 : 3; }

double RegularCopyGbps(const Buffer& src, const Buffer& dst, size_t size, int reps) {
  return BestGbps(size, reps, [&] { std::memcpy(dst.get(), src.get(), size); });
}

// The kernels' own cache-bypassing copy (kCopy with streaming), as plans that stream run it.
double StreamedCopyGbps(const Buffer& src, const Buffer& dst, size_t size, int reps) {
  Nest stream;
  stream.strategy = Strategy::kCopy;
  stream.streaming = true;
  stream.copy_bytes = static_cast<int64_t>(size);
  const RunItemsFn copy = ChooseCopyRun();
  return BestGbps(size, reps, [&] { copy(stream, src.get(), dst.get(), 0, 1); });
}

StreamingThreshold MeasureThreshold(const Caches& caches, const Buffer& src, const Buffer& dst,
                                    size_t largest) {
  StreamingThreshold t;
  const double streamed = StreamedCopyGbps(src, dst, largest, 3);
  std::string measured;
  for (auto size = static_cast<size_t>(2 * caches.l2); size <= largest; size *= 2) {
    const double regular = RegularCopyGbps(src, dst, size, CopyReps(size));
    measured += fmt::format("{}{} MiB {:.0f}", measured.empty() ? "" : ", ",
                            static_cast<double>(size) / (1 << 20), regular);
    // Half the regular copy is the slower first (or together with the whole copy).
    if (t.staged_bytes == 0 && regular / 2 < streamed) t.staged_bytes = static_cast<int64_t>(size);
    if (regular < streamed) {
      t.bytes = static_cast<int64_t>(size);
      t.why = fmt::format(
          "calibrated: regular-store copy GB/s at {} vs cache-bypassing {:.0f} "
          "at {} MiB; streaming from the first size where the regular copy is the "
          "slower, for plans that would stage from the first where half of it is",
          measured, streamed, largest >> 20);
      return t;
    }
  }
  t.bytes = static_cast<int64_t>(2 * largest);
  if (t.staged_bytes == 0) t.staged_bytes = t.bytes;
  t.why = fmt::format(
      "calibrated: regular-store copy GB/s at {} vs cache-bypassing {:.0f} at "
      "{} MiB; regular stores won at every size tried, streaming from twice the "
      "largest (staged plans from the first size where half the regular copy is "
      "slower)",
      measured, streamed, largest >> 20);
  return t;
}

// The first size from the L2's where one thread's regular copy is the slower of the two kinds
// of the same size, 0 when none is up to `largest`. On an Intel Xeon VM (2 MiB L2, a 480 MiB
// last-level cache reported) one thread's memcpy of 2 MiB ran at 14.7 GB/s and the
// cache-bypassing copy at 20: what lies past its L2 serves it at memory speed. On an AMD EPYC
// (Zen 5, 1 MiB L2, 32 MiB L3) the regular copy stays ahead to 8 MiB (43 / 43 there).
int64_t MeasureOneThreadCrossover(const Caches& caches, const Buffer& src, const Buffer& dst,
                                  size_t largest, std::string& measured) {
  for (auto size = static_cast<size_t>(caches.l2); size <= largest; size *= 2) {
    const double regular = RegularCopyGbps(src, dst, size, CopyReps(size));
    const double streamed = StreamedCopyGbps(src, dst, size, CopyReps(size));
    measured += fmt::format("{}{} MiB {:.0f} / {:.0f}", measured.empty() ? "" : ", ",
                            static_cast<double>(size) / (1 << 20), regular, streamed);
    if (regular < streamed) return static_cast<int64_t>(size);
  }
  return 0;
}

Machine MachineOf(const Caches& c) {
  Machine m;
  m.l1d_bytes = c.l1d;
  m.l1d_ways = c.l1d_ways;
  m.l2_bytes = c.l2;
  m.llc_bytes = c.llc;
  m.cache_source = c.source;
  m.vector_bytes = static_cast<int64_t>(ChosenVectorBytes());
  m.target = ChosenTargetName();
  m.prefetch_ahead_bytes = std::max<int64_t>(1, c.l2 / 2);
  return m;
}

// The calibration's buffers: sizes 2, 4, ... x L2 are timed, up to 16 x L2 clamped to 8-32 MiB:
// each doubling of the buffers costs page faults (2 x 64 MiB made the first plan of a process
// take 30-150 ms; 2 x 16 MiB about 10 ms), and the outputs the threshold separates are the
// cache-resident ones (a few MiB) from the DRAM-sized ones.
size_t CalibrationBufferBytes(const Caches& caches) {
  return static_cast<size_t>(
      std::clamp<int64_t>(16 * caches.l2, int64_t{8} << 20, int64_t{32} << 20));
}

StreamingThreshold Calibrate(const Caches& caches) {
  const size_t largest = CalibrationBufferBytes(caches);
  Buffer src = Allocate(largest), dst = Allocate(largest);
  if (!src || !dst) {
    StreamingThreshold t;
    t.bytes = static_cast<int64_t>(largest);
    t.staged_bytes = t.bytes;
    t.why = "calibration could not allocate its buffers; streaming from the largest size tried";
    t.measured = false;
    return t;
  }
  StreamingThreshold t = MeasureThreshold(caches, src, dst, largest);
  std::string crossover;
  t.one_thread_bytes = MeasureOneThreadCrossover(caches, src, dst, largest, crossover);
  t.why += fmt::format(
      "; one thread's copies of the same size, regular / cache-bypassing GB/s: {} ({})", crossover,
      t.one_thread_bytes > 0 ? fmt::format("regular the slower from {:.3g} MiB",
                                           static_cast<double>(t.one_thread_bytes) / (1 << 20))
                             : "regular never the slower");
  const WalkChoice walk = CalibrateDramWalk(MachineOf(caches), src.get(), dst.get(), largest);
  t.short_strips = walk.short_strips;
  t.why += "; " + walk.why;
  return t;
}

std::optional<bool>& ShortStripsOverride() {
  static std::optional<bool> value;
  return value;
}

std::optional<bool>& PrefetchAheadOverride() {
  static std::optional<bool> value;
  return value;
}

std::optional<bool>& RealignRowsOverride() {
  static std::optional<bool> value;
  return value;
}

const Caches& CachedCaches() {
  static const Caches caches = ReadCaches();
  return caches;
}

}  // namespace

const StreamingThreshold& CalibrateStreaming() {
  static const StreamingThreshold threshold =
      LoadOrCalibrate(CalibrationCacheDir(), MachineSignature(CurrentMachine(false)),
                      [] { return Calibrate(CachedCaches()); });
  return threshold;
}

Machine CurrentMachine(bool with_streaming_threshold) {
  Machine m = MachineOf(CachedCaches());
  if (with_streaming_threshold) {
    const StreamingThreshold& t = CalibrateStreaming();
    m.streaming_bytes = t.bytes;
    m.staged_streaming_bytes = t.staged_bytes;
    m.one_thread_streaming_bytes = t.one_thread_bytes;
    m.streaming_why = t.why;
    m.realign_rows_bytes = t.bytes;
    // Short strips from where they were measured to win, not below: the walk was timed on
    // planes as large as the calibration's buffers, and in cache tall strips are the faster.
    m.short_strips_bytes =
        t.short_strips
            ? std::max(t.bytes, static_cast<int64_t>(CalibrationBufferBytes(CachedCaches())))
            : 0;
  }
  if (const std::optional<bool> forced = ShortStripsOverride())
    m.short_strips_bytes = *forced ? 1 : 0;
  if (const std::optional<bool> forced = PrefetchAheadOverride())
    m.prefetch_ahead_bytes = *forced ? 1 : 0;
  if (const std::optional<bool> forced = RealignRowsOverride())
    m.realign_rows_bytes = *forced ? 1 : 0;
  return m;
}

void SetShortStripsForTest(std::optional<bool> short_strips) {
  ShortStripsOverride() = short_strips;
}

void SetPrefetchAheadForTest(std::optional<bool> prefetch_ahead) {
  PrefetchAheadOverride() = prefetch_ahead;
}

void SetRealignRowsForTest(std::optional<bool> realign_rows) {
  RealignRowsOverride() = realign_rows;
}

}  // namespace iotx::kernels
