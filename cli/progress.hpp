// Feedback during long commands: a status line redrawn in place on a terminal (stderr, so that
// redirected output stays clean), a text progress bar, and Ctrl-C turned into a polite cancel
// so that partial results (a PC2 cache, a CSV) are still closed properly.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace untangle::cli {

bool stdout_is_terminal();
bool stderr_is_terminal();

class StatusLine {
 public:
  StatusLine();  // shown only when stderr is a terminal
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool enabled() const { return enabled_; }
  // Redraws the line; unless force, at most every 50 ms, so fast loops do not flood the tty.
  void show(const std::string& text, bool force = false);
  // Erases the line, before other output goes to the terminal.
  void clear();

 private:
  bool enabled_;
  bool visible_ = false;
  std::chrono::steady_clock::time_point last_;
};

// "[##########..........]" for done of total, width characters inside the brackets.
std::string progress_bar(std::size_t done, std::size_t total, int width = 24);

// After install_interrupt_handler(), the first Ctrl-C sets interrupted(); a second one ends
// the program at once, as usual.
void install_interrupt_handler();
bool interrupted();

}  // namespace untangle::cli
