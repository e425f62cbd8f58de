#include "topology/calibration_figures.hpp"

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::topology {

void CalibrationFigures::add(std::string name, CalibrationFigure figure) {
  figures_[std::move(name)] = std::move(figure);
}

std::vector<std::string> CalibrationFigures::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : figures_) out.push_back(name);
  return out;
}

const CalibrationFigure* CalibrationFigures::find(std::string_view name) const {
  auto it = figures_.find(name);
  return it == figures_.end() ? nullptr : &it->second;
}

const CalibrationFigure& CalibrationFigures::at(std::string_view name, std::string_view owner) const {
  if (const auto* f = find(name)) return *f;
  const auto known = names();
  throw ConfigError({{std::string(owner), "/calibration",
                      "no calibration figure \"" + std::string(name) + "\"" + did_you_mean(name, known) +
                          "; known: " + (known.empty() ? std::string("none") : join_names(known))}});
}

const std::vector<std::string>& calibration_units() {
  static const std::vector<std::string> units{"TFLOPS", "GBps", "us", "fraction"};
  return units;
}

}  // namespace moesim::topology
