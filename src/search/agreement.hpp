#pragma once
// How closely the closed-form estimate follows the engine: on every predictable row of measurement tables (the
// gap of each step time), and on random feasible layouts of one case (the gaps and Kendall's tau between the two
// orders). `moesim estimate --agreement` prints these; the README quotes them.
#include <cstdint>
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "search/search_space.hpp"
#include "validate/validation.hpp"

namespace moesim::search {

struct AgreementPoint {
  std::string id;  // row id, or the random layout's summary
  double engine_s = 0, estimate_s = 0;
  double gap() const { return estimate_s / engine_s - 1; }
};

struct AgreementSummary {
  std::size_t points = 0;
  double median_abs_gap = 0, p90_abs_gap = 0, max_abs_gap = 0;
  double kendall_tau = 0;
};
AgreementSummary summarize(const std::vector<AgreementPoint>& points);

// Every row of `table` that validate predicts, timed by both (memory not enforced, as validate does).
std::vector<AgreementPoint> table_agreement(const config::CsvTable& table, const validate::Resolvers& resolve,
                                            const predict::PredictOptions& base, int jobs);

// `n` layouts drawn from `space` with a seeded generator (each dimension uniformly), kept when they pass the
// layout rules and fit in memory, timed by both.
std::vector<AgreementPoint> random_agreement(const predict::Case& base, const SearchSpace& space, int n,
                                             std::uint64_t seed, const predict::PredictOptions& options, int jobs);

}  // namespace moesim::search
