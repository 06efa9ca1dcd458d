// oneDNN's reorder between a row-major source and a destination whose strides are the
// permuted layout. oneDNN 2.6 (Debian) has no f64 and runs on OpenMP threads.
#include <omp.h>

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "peers.h"

namespace iotx::bench {

PeerRun MakeOneDnnReorder(std::span<const int64_t> shape, std::span<const int64_t> perm,
                          size_t elem_bytes, int threads) {
  using dnnl::memory;
  memory::data_type dt;
  switch (elem_bytes) {
    case 1: dt = memory::data_type::s8; break;
    case 2: dt = memory::data_type::bf16; break;
    case 4: dt = memory::data_type::f32; break;
    default: return {};
  }
  const size_t rank = shape.size();
  if (rank == 0 || rank > DNNL_MAX_NDIMS) return {};
  memory::dims dims(shape.begin(), shape.end());
  memory::dims src_strides(rank), dst_strides(rank);
  int64_t s = 1, d = 1;
  for (size_t i = rank; i-- > 0;) {
    src_strides[i] = s;
    s *= shape[i];
    // Destination axis i is source axis perm[i]; its stride belongs to that source axis.
    dst_strides[static_cast<size_t>(perm[i])] = d;
    d *= shape[static_cast<size_t>(perm[i])];
  }
  auto engine = std::make_shared<dnnl::engine>(dnnl::engine::kind::cpu, 0);
  auto stream = std::make_shared<dnnl::stream>(*engine);
  const memory::desc src_md(dims, dt, src_strides), dst_md(dims, dt, dst_strides);
  std::shared_ptr<dnnl::reorder> reorder;
  try {
    reorder = std::make_shared<dnnl::reorder>(dnnl::reorder::primitive_desc(*engine, src_md, *engine, dst_md));
  } catch (const dnnl::error&) {
    return {};  // no implementation for this case
  }
  return [=](const void* src, void* dst) {
    omp_set_num_threads(threads);
    memory src_m(src_md, *engine, const_cast<void*>(src));
    memory dst_m(dst_md, *engine, dst);
    reorder->execute(*stream, src_m, dst_m);
    stream->wait();
  };
}

}  // namespace iotx::bench
