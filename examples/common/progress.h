// The training progress line: on a terminal, one line redrawn in place (epoch, step of total,
// loss, accuracy, images per second, time left); otherwise (a log file, a pipe, CI) nothing
// until the epoch's summary line, so logs stay one line per epoch.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

class Progress {
 public:
  Progress(int epoch, int epochs, int64_t steps, int64_t batch_size)
      : epoch_(epoch), epochs_(epochs), steps_(steps), batch_(batch_size),
        tty_(::isatty(STDOUT_FILENO) == 1), start_(Clock::now()), last_draw_(start_) {}

  // After step `step` (1-based) with the running mean loss and accuracy of the epoch.
  void update(int64_t step, double loss, double accuracy) {
    if (!tty_) return;
    auto now = Clock::now();
    if (step != steps_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    double elapsed = seconds(now);
    double rate = elapsed > 0 ? double(step * batch_) / elapsed : 0;
    double left = step > 0 ? elapsed / double(step) * double(steps_ - step) : 0;
    const int width = 24;
    int filled = int(double(width) * double(step) / double(steps_));
    std::string bar(size_t(filled), '=');
    if (filled < width) bar += '>' + std::string(size_t(width - filled - 1), ' ');
    std::printf("\repoch %d/%d [%s] %lld/%lld  loss %.4f  acc %5.2f%%  %6.0f img/s  left %s ",
                epoch_, epochs_, bar.c_str(), (long long)step, (long long)steps_, loss,
                100 * accuracy, rate, clock_text(left).c_str());
    std::fflush(stdout);
  }

  // Ends the epoch: clears the live line and prints the summary, one line.
  void finish(const std::string& summary) {
    if (tty_) std::printf("\r\033[K");
    std::printf("%s\n", summary.c_str());
    std::fflush(stdout);
  }

  double elapsed() const { return seconds(Clock::now()); }

  static std::string clock_text(double s) {
    long t = long(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
    return buf;
  }

 private:
  using Clock = std::chrono::steady_clock;
  double seconds(Clock::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }

  int epoch_, epochs_;
  int64_t steps_, batch_;
  bool tty_;
  Clock::time_point start_, last_draw_;
};
