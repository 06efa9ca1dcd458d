// A progress bar on stderr for long byte-moving commands: bytes done / total, the rate and the
// time left at that rate.
#pragma once

#include <chrono>
#include <cstdint>

namespace iotx::cli {

// Draws only when enabled, stderr is a terminal and the work is at least kMinBytes, so logs
// and pipes never see carriage returns. Not thread-safe; call from one thread.
class ProgressBar {
 public:
  // Below this, the work takes well under a second at memory speed: a bar would only flash.
  static constexpr uint64_t kMinBytes = uint64_t{256} << 20;

  explicit ProgressBar(bool enabled);
  // Redraws "[#####.....]  512.0 MiB / 1.0 GiB  1.84 GB/s  0:12 left", at most every 100 ms
  // and always when done == total.
  void Update(uint64_t done, uint64_t total);
  // Ends the bar's line if anything was drawn; nothing is drawn afterwards. Call it before
  // printing anything else.
  void Finish();
  ~ProgressBar() { Finish(); }

  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

}  // namespace iotx::cli
