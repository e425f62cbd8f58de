#pragma once
// Shared by the test suites: one hand-built row of a validation result (validate's output), for the tests of what
// is computed from those rows (ladder steps, ranking groups, formats).
#include <map>
#include <optional>
#include <string>

#include "report/validation_result.hpp"

namespace moesim::test {

// A row with its metric, measured value, prediction (absent: a skipped row with no reason) and input columns.
inline report::ValidationRow validation_row(const std::string& id, const std::string& metric, double measured,
                                            std::optional<double> predicted,
                                            std::map<std::string, std::string> inputs = {}) {
  report::ValidationRow v;
  v.id = id;
  v.metric = metric;
  v.measured = measured;
  v.predicted = predicted;
  v.inputs = std::move(inputs);
  return v;
}

}  // namespace moesim::test
