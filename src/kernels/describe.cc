// Describe: a plan printing itself (`iotx plan`): every stage's decision and the number that
// decided it.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "iotx/plan.h"
#include "kernels/plan_impl.h"
#include "core/text.h"

namespace iotx {
namespace {

std::string Bytes(int64_t b) { return FormatBytes(static_cast<uint64_t>(b)); }

std::string DimRole(const PlanData& d, int i) {
  std::string role;
  const auto add = [&role](std::string_view s) {
    role += role.empty() ? "" : ", ";
    role += s;
  };
  if (std::find(d.split.whole.begin(), d.split.whole.end(), i) != d.split.whole.end()) add("driver");
  if (i == d.split.blocked_dim) add(fmt::format("driver in blocks of {}", d.split.block));
  if (i == d.tile.rows_dim) add("tile rows (destination-innermost)");
  if (i == d.tile.cols_dim) add("tile columns (source-innermost)");
  if (role.empty()) add("kernel loop");
  return role;
}

std::string LoopName(const PlanData& d, int k) {
  const kernels::LoopDim& l = d.nest.loops[static_cast<size_t>(k)];
  if (k == d.nest.row_block_loop) return fmt::format("row blocks of {} (n={})", d.nest.row_block, l.n);
  for (size_t i = 0; i < d.folded.dims.size(); ++i) {
    const kernels::Dim& f = d.folded.dims[i];
    if (f.src_stride == l.src_stride && f.dst_stride == l.dst_stride &&
        static_cast<int>(i) != d.tile.rows_dim && static_cast<int>(i) != d.tile.cols_dim) {
      return fmt::format("dim {} (n={})", i, l.n);
    }
  }
  return fmt::format("n={}", l.n);
}

}  // namespace

std::string Describe(const Plan& plan) {
  const PlanData& d = plan.data();
  Dims out_shape;
  for (int64_t axis : d.perm) out_shape.push_back(d.shape[static_cast<size_t>(axis)]);
  std::string s = fmt::format("problem:  shape {} transpose {} -> output {}, {}-byte elements, {} bytes\n",
                              ToString(d.shape), ToString(d.perm), ToString(out_shape), d.elem_bytes,
                              d.bytes);
  if (d.bytes == 0) {
    s += "kernel:   none (the tensor has a zero extent; Execute moves nothing)\n";
    s += fmt::format("sbuf:     {}\n", kernels::ToString(d.sbuf));
    return s;
  }
  const kernels::Problem dropped = kernels::DropUnitDims(d.unfolded);
  const kernels::Problem fused = kernels::FuseContiguous(dropped);
  s += fmt::format("folding:  {} dims -> drop size-1: {} -> fuse contiguous: {} -> widen element: {} ({} B element)\n",
                   d.unfolded.dims.size(), dropped.dims.size(), fused.dims.size(), d.folded.dims.size(),
                   d.folded.elem_bytes);
  s += "folded:   destination order, strides in bytes\n";
  for (size_t i = 0; i < d.folded.dims.size(); ++i) {
    const kernels::Dim& f = d.folded.dims[i];
    s += fmt::format("          dim {}: n={:<8} src_stride={:<10} dst_stride={:<10} {}\n", i, f.n,
                     f.src_stride, f.dst_stride, DimRole(d, static_cast<int>(i)));
  }
  s += fmt::format("kernel:   {} ({}) on {} with {}-byte vectors\n", d.kernel->name, d.kernel->when,
                   d.target, d.vector_bytes);
  if (d.kernel->kind == kernels::KernelKind::kTranspose) {
    const int64_t e = d.folded.elem_bytes;
    const auto vec = static_cast<int64_t>(d.vector_bytes);
    const bool avx512 = std::string_view(d.target).starts_with("AVX3");
    std::string how;
    if (vec < 16) {
      how = "element by element (no SIMD target)";
    } else if (e >= 8 || (e == 4 && avx512)) {
      how = fmt::format("in registers: {} interleave round(s) per group of {} rows, then 128-bit "
                        "block transposes; whole lines out", e >= 16 ? 0 : __builtin_ctzll(static_cast<uint64_t>(16 / e)),
                        std::max<int64_t>(1, 16 / e));
    } else if (avx512) {
      how = fmt::format("in registers: rows interleaved {} to 4-byte lanes, then the 4-byte tile; "
                        "whole lines out", e == 2 ? "in pairs" : "twice");
    } else {
      how = "interleave rounds per group, 16-byte pieces through an L1 buffer, whole lines out";
    }
    s += fmt::format("tile:     micro-tile {} rows x {} columns ({}); strips of {} rows",
                     64 / std::min<int64_t>(e, 16), std::max<int64_t>(1, vec / std::min<int64_t>(e, 16)),
                     how, d.nest.row_block);
    if (d.nest.streaming && d.nest.stream_lines > 1) {
      s += fmt::format(" ({} lines per destination row back to back)", d.nest.stream_lines);
    }
    if (d.nest.rows <= 4 && d.nest.dst_row_stride == d.nest.rows * e && e <= 8) {
      s += fmt::format("; {} rows interleaved with StoreInterleaved{}", d.nest.rows, d.nest.rows);
    } else if (d.nest.cols <= 4 && d.nest.src_row_stride == d.nest.cols * e && e <= 8) {
      s += fmt::format("; {} columns de-interleaved with LoadInterleaved{}", d.nest.cols, d.nest.cols);
    }
    s += fmt::format("; {} rows x {} columns in all\n", d.nest.rows, d.nest.cols);
  } else if (d.kernel->kind == kernels::KernelKind::kRowCopy) {
    s += fmt::format("tile:     strips of {} rows of {} B elements x {} columns\n", d.nest.row_block,
                     d.folded.elem_bytes, d.nest.cols);
  }
  if (d.nest.loop_rank > 0) {
    s += "loops:    per item, outer -> inner (source memory order):";
    for (int k = 0; k < d.nest.loop_rank; ++k) s += (k ? ", " : " ") + LoopName(d, k);
    s += "\n";
  }
  s += fmt::format("driver:   {} item(s)", d.split.items);
  if (d.kernel->kind == kernels::KernelKind::kCopy) {
    s += fmt::format(" of {} contiguous bytes", d.split.block);
  } else if (!d.split.driver.empty()) {
    s += d.split.dst_prefix ? " (destination-order prefix: each a contiguous output range)"
                            : " (source-order dims and row blocks: each keeps whole source rows)";
  }
  s += fmt::format("; threads: up to {} (sized for {}), one thread below {}\n",
                   d.options.max_threads > 0 ? fmt::format("{}", d.options.max_threads)
                                             : std::string("the calling arena's concurrency"),
                   d.threads_hint, Bytes(kernels::kParallelMinBytes));
  s += fmt::format("stores:   {} (output {}; automatic streaming from {})\n",
                   d.nest.streaming ? "cache-bypassing (streaming) for whole aligned lines" : "regular",
                   Bytes(d.bytes), Bytes(kernels::StreamingThresholdBytes()));
  s += fmt::format("sbuf:     {}\n", kernels::ToString(d.sbuf));
  if (d.sbuf.tiles <= 1) {
    s += "          parallel claims: the output is a single partition tile, so claims divide it\n";
  } else if (d.split.align_items > 0) {
    s += fmt::format("          parallel claims end on partition-tile boundaries ({} item(s) per claim unit)\n",
                     d.split.align_items);
  } else {
    s += "          parallel claims do not follow partition tiles (item sizes do not divide them)\n";
  }
  return s;
}

}  // namespace iotx
