#pragma once
// The measured per-shape table a fit file carries beside its coefficients: every timed shape of every family the
// fitter accepted, so that a kernel whose shape was measured costs exactly its measurement, and one between two
// measured shapes of its family costs the interpolation of the two (kernels/fitted_model.hpp: table first, then the
// interpolation, the fitted coefficients only off the table).
//
// Interpolation axis per model (the one size a family's shapes are swept over; every other size must match):
//   gemm           the token dimension: m for a forward or data gradient, k for a weight gradient (moesim's
//                  convention: the weight gradient's reduction runs over the tokens, layer_costs.cpp)
//   grouped_gemm   the rows per group, every group equal (balanced routing); n, k and the group count match
//   attention      the sequence, seq_q = seq_kv on both sides (self-attention); the rest matches
//   memory_bound   none: exact shapes only
// Between the nearest measured shape below and the nearest above, the time is linear in the kernel's FLOPs
// (the fitter's flops feature): exact at both ends, monotone between them, and for a GEMM the same as linear in
// the tokens. Nothing is extrapolated: a shape outside the measured range goes to the fit.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/record.hpp"

namespace moesim::kernels::fit {

// One measured shape of one family: the mean of the medians of every record of that family and shape (a table
// may time one shape twice, e.g. SimuMax's two attention QKV layouts).
struct TableEntry {
  std::string family;                         // "gemm/bf16+wgrad": family_key of the records
  std::map<std::string, std::int64_t> shape;  // the records' named sizes
  std::vector<std::int64_t> groups;           // grouped GEMM: rows per group; empty otherwise
  double time_us = 0;
  std::int64_t measurements = 1;  // records merged into this entry
};

// The entries of `records` (timed ones), merged by family and shape, in first-seen order.
std::vector<TableEntry> table_entries(const std::vector<const CalibrationRecord*>& records);

enum class TableHit { none, exact, interpolated };

struct TableLookup {
  TableHit hit = TableHit::none;
  double time_us = 0;
  const TableEntry* below = nullptr;  // the exact entry, or the interpolation's lower neighbour
  const TableEntry* above = nullptr;  // the interpolation's upper neighbour (nullptr for an exact hit)
};

class MeasuredTable {
 public:
  MeasuredTable() = default;
  MeasuredTable(std::vector<TableEntry> entries, GpuPeaks peaks);

  bool has_family(const std::string& family) const;
  // `query` is the kernel as a record of `family` (its kernel, base dtype and shape, as fitted_model.cpp's
  // to_record makes it). Exact when an entry has the same shape and groups; else interpolated when entries with
  // every other size equal lie on both sides along the family's axis; else none.
  TableLookup lookup(const std::string& family, const CalibrationRecord& query) const;
  std::int64_t shapes(const std::string& family) const;
  const std::vector<TableEntry>& entries() const { return entries_; }

 private:
  std::vector<TableEntry> entries_;
  GpuPeaks peaks_;
  std::vector<double> flops_us_;  // each entry's FLOPs at peak (the fitter's flops feature), for interpolation
};

}  // namespace moesim::kernels::fit
