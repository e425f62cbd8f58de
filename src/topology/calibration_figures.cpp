#include "topology/calibration_figures.hpp"

namespace moesim::topology {

void CalibrationFigures::add(std::string name, CalibrationFigure figure) {
  figures_[std::move(name)] = std::move(figure);
}

const CalibrationFigure* CalibrationFigures::find(std::string_view name) const {
  auto it = figures_.find(name);
  return it == figures_.end() ? nullptr : &it->second;
}

const std::vector<std::string>& calibration_units() {
  static const std::vector<std::string> units{"TFLOPS", "GBps", "us", "fraction"};
  return units;
}

}  // namespace moesim::topology
