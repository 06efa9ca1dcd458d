#include "kernels/sbuf.h"

#include <fmt/format.h>

namespace iotx::kernels {

SbufGeometry GeometryOf(DeviceGeneration device) {
  // Per-partition sizes from the NKI architecture guides; usable sizes as nki's target_info
  // (FACTS section 4).
  switch (device) {
    case DeviceGeneration::kTrn1:
      return {"trn1", "NeuronCore-v2", 128, 192 * 1024, 180224};
    case DeviceGeneration::kTrn2:
      return {"trn2", "NeuronCore-v3", 128, 224 * 1024, 212984};
    case DeviceGeneration::kTrn3:
      return {"trn3", "NeuronCore-v4", 128, 256 * 1024, 245752};
  }
  return {"trn2", "NeuronCore-v3", 128, 224 * 1024, 212984};
}

SbufMapping MapOutput(std::span<const int64_t> shape, std::span<const int64_t> perm,
                      int64_t elem_bytes, DeviceGeneration device) {
  SbufMapping m;
  m.geometry = GeometryOf(device);
  int64_t total = elem_bytes;
  for (int64_t n : shape) total *= n;
  m.leading = perm.empty() ? 1 : shape[static_cast<size_t>(perm[0])];
  m.row_bytes = m.leading == 0 ? 0 : total / m.leading;
  const int64_t parts = m.geometry.partitions;
  m.tiles = (m.leading + parts - 1) / parts;
  m.last_tile_rows = m.leading - (m.tiles > 0 ? (m.tiles - 1) * parts : 0);
  m.rows_per_partition = m.row_bytes == 0 ? 0 : m.geometry.usable_bytes / m.row_bytes;
  return m;
}

std::string ToString(const SbufMapping& m) {
  std::string out = fmt::format(
      "{} ({}: {} partitions x {} KiB, {} B usable): output dim 0 = {} rows -> {} partition "
      "tile(s) of {} rows",
      m.geometry.name, m.geometry.core, m.geometry.partitions, m.geometry.partition_bytes / 1024,
      m.geometry.usable_bytes, m.leading, m.tiles, std::min(m.leading, m.geometry.partitions));
  if (m.tiles > 1 && m.last_tile_rows != m.geometry.partitions) {
    out += fmt::format(" (last {} rows)", m.last_tile_rows);
  }
  out += fmt::format("; {} B per partition per tile", m.row_bytes);
  if (m.row_bytes == 0) {
    out += " (an empty output: nothing to map)";
  } else if (m.rows_per_partition > 0) {
    out += fmt::format(" (fits: {} tile(s) resident at once)", m.rows_per_partition);
  } else {
    out += fmt::format(" (exceeds {} B: the device must split the free dim into {} pieces)",
                       m.geometry.usable_bytes,
                       (m.row_bytes + m.geometry.usable_bytes - 1) / m.geometry.usable_bytes);
  }
  return out;
}

}  // namespace iotx::kernels
