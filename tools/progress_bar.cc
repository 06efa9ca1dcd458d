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
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;  // bytes/s
  std::string left = "--:--";
  if (rate > 0 && done > 0) {
    const auto remaining = static_cast<long long>(static_cast<double>(total - done) / rate + 0.5);
    char text[32];
    if (remaining >= 3600) {
      std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", remaining / 3600,
                    remaining / 60 % 60, remaining % 60);
    } else {
      std::snprintf(text, sizeof(text), "%lld:%02lld", remaining / 60, remaining % 60);
    }
    left = text;
  }
  std::fprintf(stderr, "\r[%s%s]  %s / %s  %.2f GB/s  %s left ", std::string(filled, '#').c_str(),
               std::string(kBarWidth - filled, '.').c_str(), FormatBytes(done).c_str(),
               FormatBytes(total).c_str(), rate / 1e9, left.c_str());
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
  enabled_ = false;
}

}  // namespace iotx::cli
