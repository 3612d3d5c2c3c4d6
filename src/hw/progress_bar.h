// The profilers' progress line on stderr: "[#####.....] 45% gemm ... kernel",
// redrawn in place on a terminal, one line per 10% otherwise (logs). Shared by
// `cagr profile` and `cagr-profile-cuda` (header-only: the latter links no
// cagr_core).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace cagr::hw {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {}

  void update(double fraction, const std::string& what) {
    if (!enabled_) return;
    const int pct = static_cast<int>(fraction * 100 + 0.5);
    if (!tty_ && pct / 10 == lastDecile_) return;
    lastDecile_ = pct / 10;
    const int width = 20;
    const int filled = std::min(width, static_cast<int>(fraction * width + 0.5));
    std::string line =
        "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + std::to_string(pct) + "% " + what;
    if (tty_) {
      const size_t pad = lastLen_ > line.size() ? lastLen_ - line.size() : 0;
      std::fprintf(stderr, "\r%s%s", line.c_str(), std::string(pad, ' ').c_str());
      lastLen_ = line.size();
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  void finish() {
    if (enabled_ && tty_ && lastLen_ > 0) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  bool tty_;
  size_t lastLen_ = 0;
  int lastDecile_ = -1;
};

}  // namespace cagr::hw
