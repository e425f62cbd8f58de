#pragma once
// Named calibration figures attached to a part or a system: measured efficiencies and latencies
// (data/reference/hardware.md §5) that cost models may use instead of datasheet peaks. Each figure keeps the
// value as written, its unit, the same value in SI base units, and its source.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::topology {

struct CalibrationFigure {
  double value = 0;     // as written in the file, in `unit`
  std::string unit;     // one of: "TFLOPS", "GBps", "us", "fraction"
  double value_si = 0;  // FLOP/s, bytes/s, seconds, or a plain ratio
  std::string source;   // file + section of the reference, with [Sn] tags
  std::string note;     // optional
};

class CalibrationFigures {
 public:
  void add(std::string name, CalibrationFigure figure);
  bool empty() const noexcept { return figures_.empty(); }
  // nullptr when absent: callers fall back to the datasheet peak and say so.
  const CalibrationFigure* find(std::string_view name) const;
  // Every figure by name (for listings such as `moesim describe --params`).
  const std::map<std::string, CalibrationFigure, std::less<>>& all() const noexcept { return figures_; }

 private:
  std::map<std::string, CalibrationFigure, std::less<>> figures_;
};

// The units a calibration figure may use, and the factor from each to SI.
const std::vector<std::string>& calibration_units();

}  // namespace moesim::topology
