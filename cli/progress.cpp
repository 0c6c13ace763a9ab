#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

namespace untangle::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int signal_number) {
  if (g_interrupted != 0) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_interrupted = 1;
}

}  // namespace

bool stdout_is_terminal() {
  return ::isatty(STDOUT_FILENO) == 1;
}
bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

StatusLine::StatusLine() : enabled_(stderr_is_terminal()) {}

StatusLine::~StatusLine() {
  clear();
}

void StatusLine::show(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && visible_ && now - last_ < std::chrono::milliseconds(50)) return;
  last_ = now;
  std::fflush(stdout);
  // \r and "erase to end of line" so a shorter text leaves no tail of the previous one.
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
  visible_ = true;
}

void StatusLine::clear() {
  if (!enabled_ || !visible_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  visible_ = false;
}

std::string progress_bar(std::size_t done, std::size_t total, int width) {
  const std::size_t cells = static_cast<std::size_t>(width);
  const std::size_t filled = total == 0 ? cells : std::min(cells, done * cells / total);
  std::string bar(cells + 2, '.');
  bar.front() = '[';
  bar.back() = ']';
  std::fill_n(bar.begin() + 1, filled, '#');
  return bar;
}

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
}

bool interrupted() {
  return g_interrupted != 0;
}

}  // namespace untangle::cli
