// The streaming calibration kept across processes: measured once per machine, not once per
// process. Every process that plans a large output used to spend 15-70 ms (two 16 MiB buffers
// faulted in and timed copies) before its first plan, and two processes could decide the
// threshold differently from a noisy measurement; now the first measures and writes the
// result to a small file that later ones read.
//
// Where: $IOTX_CACHE_DIR (set but empty: no file, every process measures), else
// $XDG_CACHE_HOME/iotx, else $HOME/.cache/iotx. The file is named after a hash of the
// machine's signature (CPU model, cache sizes, SIMD target, iotx version, format) and holds
// the signature too, so another machine, another target or another iotx version measures
// anew. Nothing here can fail a plan: an unreadable, foreign or malformed file is measured
// over, and a file that cannot be written is skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "kernels/machine.h"

namespace iotx::kernels {

// The directory the cache lives in from the environment, nullopt when caching is off (or
// no directory can be named).
std::optional<std::filesystem::path> CalibrationCacheDir();

// What identifies the machine and the measuring code: CPU model (/proc/cpuinfo), cache sizes,
// Highway target, vector width, iotx version.
std::string MachineSignature(const Machine& machine);

// The threshold cached in `dir` for `signature`, or calibrate() (then written there for the
// next process). `dir` nullopt: calibrate() only. The `why` of a cached threshold says so and
// names the file.
StreamingThreshold LoadOrCalibrate(const std::optional<std::filesystem::path>& dir,
                                   const std::string& signature,
                                   const std::function<StreamingThreshold()>& calibrate);

}  // namespace iotx::kernels
