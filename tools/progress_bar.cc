#include "progress_bar.h"
#include "core/text.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace iotx::cli {
namespace {

constexpr int kBarWidth = 30;
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);


}  // namespace

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO) == 1) {}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!enabled_ || total < kMinBytes) return;
  const Clock::time_point now = Clock::now();
  if (done < total && drawn_ && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  drawn_ = true;
  const int filled = static_cast<int>(static_cast<double>(done) / total * kBarWidth);
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds / 1e9 : 0;
  std::fprintf(stderr, "\r[%s%s]  %s / %s  %.2f GB/s ", std::string(filled, '#').c_str(),
               std::string(kBarWidth - filled, '.').c_str(), FormatBytes(done).c_str(),
               FormatBytes(total).c_str(), rate);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
  enabled_ = false;
}

}  // namespace iotx::cli
