#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace moesim::core {

namespace {

// MOESIM_PROGRESS: "0" never, "1" always (even on a pipe), anything else or unset: decide by the terminal.
Progress::Options::Show show_from_environment() {
  const char* v = std::getenv("MOESIM_PROGRESS");
  if (v == nullptr) return Progress::Options::Show::auto_detect;
  const std::string_view s(v);
  if (s == "0") return Progress::Options::Show::never;
  if (s == "1") return Progress::Options::Show::always;
  return Progress::Options::Show::auto_detect;
}

Progress::Clock::rep ticks(std::chrono::duration<double> d) {
  return std::chrono::duration_cast<Progress::Clock::duration>(d).count();
}

// 75 s -> "1:15", 3725 s -> "1:02:05".
std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, std::min(seconds, 359999.0)));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::string label, std::size_t total) : Progress(std::move(label), total, std::cerr, Options{}) {}

Progress::Progress(std::string label, std::size_t total, std::ostream& out, Options options)
    : label_(std::move(label)), total_(total), out_(out), options_(options), start_(Clock::now()) {
  const bool on_terminal = &out_ == &std::cerr && ::isatty(STDERR_FILENO) == 1;
  Options::Show show = options_.show;
  if (show == Options::Show::auto_detect) show = show_from_environment();
  enabled_ = show == Options::Show::always || (show == Options::Show::auto_detect && on_terminal);
  terminal_ = on_terminal;
  next_draw_.store(start_.time_since_epoch().count() + ticks(std::chrono::duration<double>(options_.quiet_s)),
                   std::memory_order_relaxed);
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a failing stream must not end the program from a destructor
  }
}

void Progress::advance(std::size_t n) {
  done_.fetch_add(n, std::memory_order_relaxed);
  if (!enabled_) return;
  const auto now = Clock::now();
  const auto t = now.time_since_epoch().count();
  auto due = next_draw_.load(std::memory_order_relaxed);
  if (t < due) return;
  // One thread claims this redraw; the others carry on.
  if (!next_draw_.compare_exchange_strong(due, t + ticks(std::chrono::duration<double>(options_.redraw_s)),
                                          std::memory_order_relaxed))
    return;
  std::unique_lock<std::mutex> lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  draw(now, false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(draw_mutex_);
  if (finished_) return;
  finished_ = true;
  // A line-per-redraw stream already shows the last count when the last advance drew it.
  if (enabled_ && drawn_ && (terminal_ || drawn_count_ != done())) draw(Clock::now(), true);
}

void Progress::draw(Clock::time_point now, bool final) {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  drawn_count_ = done();
  const std::string text = line(label_, drawn_count_, total_, elapsed);
  if (terminal_)
    out_ << '\r' << text << "\x1b[K" << (final ? "\n" : "") << std::flush;
  else
    out_ << text << '\n' << std::flush;
  drawn_ = true;
}

std::string Progress::line(const std::string& label, std::size_t done, std::size_t total, double elapsed_s) {
  const double pct = total > 0 ? 100.0 * static_cast<double>(std::min(done, total)) / static_cast<double>(total) : 100;
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  char buf[128];
  std::snprintf(buf, sizeof buf, "  %zu/%zu  %.1f%%  %.1f/s", done, total, pct, rate);
  std::string out = label + buf;
  if (done >= total)
    out += "  " + clock_text(elapsed_s);
  else if (rate > 0)
    out += "  ETA " + clock_text(static_cast<double>(total - done) / rate);
  else
    out += "  ETA ?";
  return out;
}

}  // namespace moesim::core
