#pragma once
// A progress bar for long loops (validate's rows, sweep's points, search's candidates): done/total, percent,
// rate and ETA on one redrawn stderr line. It shows only on a terminal and only once the loop has run about a
// second, so short runs, pipes, CI logs and tests stay silent. MOESIM_PROGRESS=0 turns it off, =1 draws it even
// when stderr is not a terminal (still after the first second).
//
//   core::Progress bar("validate", rows.size());
//   parallel_for(n, jobs, [&](std::size_t i) { work(i); bar.advance(); });
//   bar.finish();
#include <atomic>
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

namespace moesim::core {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // How the bar decides to draw; the defaults are what the constructor without Options uses.
  struct Options {
    enum class Show { auto_detect, always, never };
    Show show = Show::auto_detect;  // auto_detect: MOESIM_PROGRESS, else whether `out` is std::cerr on a terminal
    double quiet_s = 1.0;           // draw nothing before the loop has run this long
    double redraw_s = 0.1;          // at most one redraw per interval (~10 Hz)
  };

  // Draws on std::cerr.
  Progress(std::string label, std::size_t total);
  // Draws on `out`; auto_detect treats any stream other than std::cerr as not a terminal.
  Progress(std::string label, std::size_t total, std::ostream& out, Options options);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();  // finish()

  // Counts n more items done. Thread-safe and cheap: an atomic add and a clock read; at most one thread redraws
  // at a time, the others never wait for it.
  void advance(std::size_t n = 1);
  // Draws the final line (when anything was drawn) and ends it with a newline; later calls and advances do nothing.
  void finish();

  std::size_t done() const { return done_.load(std::memory_order_relaxed); }
  bool enabled() const { return enabled_; }

  // The text of one bar line (no carriage return), e.g. "validate  120/224  53.6%  41.2/s  ETA 0:03".
  static std::string line(const std::string& label, std::size_t done, std::size_t total, double elapsed_s);

 private:
  void draw(Clock::time_point now, bool final);

  std::string label_;
  std::size_t total_;
  std::ostream& out_;
  Options options_;
  bool enabled_ = false;
  bool terminal_ = false;  // redraw in place (\r, clear to end of line) rather than one line per redraw
  Clock::time_point start_;
  std::atomic<std::size_t> done_{0};
  std::atomic<Clock::rep> next_draw_;  // earliest time of the next redraw, as a Clock tick count
  std::mutex draw_mutex_;
  bool drawn_ = false;           // guarded by draw_mutex_
  std::size_t drawn_count_ = 0;  // guarded by draw_mutex_: the count the last drawn line showed
  bool finished_ = false;        // guarded by draw_mutex_
};

}  // namespace moesim::core
