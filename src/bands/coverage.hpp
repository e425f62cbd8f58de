#pragma once
// Is the band honest? Leave one source out: each source's rows (a publisher's document, error_table.hpp
// source_key) are predicted with bands built from the other sources' rows only, and the share of measured values
// inside their band is counted, overall, per table and per regime (GPU generation; dense or MoE; recipe or
// off-recipe). A nominal 80 % band should hold about 80 % of them.
#include <string>
#include <vector>

#include "bands/band.hpp"
#include "bands/error_table.hpp"

namespace moesim::bands {

struct CoverageCell {
  std::string group;
  int rows = 0, inside = 0;
  double median_low_pct = 0, median_high_pct = 0;  // the band's ends as % of the prediction (time), medians
  double share() const { return rows ? static_cast<double>(inside) / rows : 0; }
};

struct CoverageReport {
  double nominal = 0.8;
  CoverageCell overall;
  std::vector<CoverageCell> by_table, by_regime;
};

CoverageReport leave_one_source_out(const std::vector<ErrorRow>& rows, const BandOptions& options);

// Markdown tables (overall, per table, per regime) for docs/accuracy.md.
std::string to_markdown(const CoverageReport& r);

}  // namespace moesim::bands
