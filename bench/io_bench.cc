// Tensor-file I/O (src/io): what reading costs when it maps instead of copying, and the
// throughput of the copying paths (Fortran order, big-endian), next to memcpy of the same
// bytes (BM_Memcpy in baseline_bench.cc).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/pickle.h"

namespace iotx::io {
namespace {

// A scratch directory for the benchmark files, removed at exit.
const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "iotx-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

Tensor MakeF32(std::string name, std::span<const std::byte> bytes, Dims shape) {
  Tensor tensor;
  tensor.name = std::move(name);
  tensor.descr = "<f4";
  tensor.element_bits = 32;
  tensor.shape = std::move(shape);
  tensor.stored = bytes;
  return tensor;
}

// ReadNpy maps the file and parses the header: its cost does not grow with the data.
void BM_ReadNpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> data(bytes, std::byte{1});
  const auto path = ScratchDir() / ("read_" + std::to_string(bytes) + ".npy");
  if (!WriteNpy(path, MakeF32("a", data, {static_cast<int64_t>(bytes / 4)}))) std::abort();
  for (auto _ : state) {
    auto tensor = ReadNpy(path);
    benchmark::DoNotOptimize(tensor->stored.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReadNpy)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

// ReadPickle of a protocol 4 pickle (the format iotx writes): arrays stay in the mapping.
void BM_ReadPickle(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> data(bytes, std::byte{1});
  const auto path = ScratchDir() / ("read_" + std::to_string(bytes) + ".p");
  const std::vector<Tensor> tensors = {
      MakeF32("a", std::span(data).first(bytes / 2), {static_cast<int64_t>(bytes / 8)}),
      MakeF32("b", std::span(data).last(bytes / 2), {static_cast<int64_t>(bytes / 8)})};
  if (!WritePickle(path, tensors)) std::abort();
  for (auto _ : state) {
    auto read = ReadPickle(path);
    benchmark::DoNotOptimize(read->at(1).stored.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReadPickle)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

// The converting paths (CopyCOrder, what the producer runs on such inputs): a square
// Fortran-ordered f32 array to C order, and big-endian f32 to little-endian, into a buffer.
void BM_FortranToC(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<std::byte> data(static_cast<size_t>(n * n * 4), std::byte{1});
  std::vector<std::byte> out(data.size());
  const DescrInfo info{'<', 'f', 4};
  const Dims shape = {n, n};
  const Tensor tensor = DescribeStored("a", "<f4", info, FortranLayout(shape), data, nullptr);
  for (auto _ : state) {
    if (!CopyCOrder(tensor, out)) std::abort();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size()));
}
BENCHMARK(BM_FortranToC)->Arg(512)->Arg(4096)->UseRealTime();

void BM_BigEndianToLittle(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> data(bytes, std::byte{1});
  std::vector<std::byte> out(bytes);
  const DescrInfo info{'>', 'f', 4};
  StoredLayout layout;
  layout.memory_shape = {static_cast<int64_t>(bytes / 4)};
  const Tensor tensor = DescribeStored("a", ">f4", info, layout, data, nullptr);
  for (auto _ : state) {
    if (!CopyCOrder(tensor, out)) std::abort();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_BigEndianToLittle)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

// The swap alone, in place on a buffer that is already mapped.
void BM_ByteSwap4(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> data(bytes, std::byte{1});
  for (auto _ : state) {
    ByteSwap(data, 4);
    benchmark::DoNotOptimize(data.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ByteSwap4)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

}  // namespace
}  // namespace iotx::io
