#include "kernels/fit/measured_table.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"
#include "kernels/fit/features.hpp"

namespace moesim::kernels::fit {
namespace {

std::string kernel_of(const std::string& family) { return family.substr(0, family.find('/')); }
std::string dtype_of(const std::string& family) { return family.substr(family.find('/') + 1); }

// Where a shape sits along its family's interpolation axis, and the sizes that must match for two shapes to be
// neighbours on it (header comment). nullopt: the shape has no axis (memory-bound kernels, uneven groups).
struct AxisPoint {
  std::int64_t at = 0;
  std::map<std::string, std::int64_t> rest;
  std::int64_t group_count = 0;
};

std::optional<AxisPoint> axis_point(const std::string& family, const std::map<std::string, std::int64_t>& shape,
                                    const std::vector<std::int64_t>& groups) {
  const std::string kernel = kernel_of(family);
  AxisPoint p;
  p.rest = shape;
  auto take = [&](const char* dim) -> bool {
    const auto it = p.rest.find(dim);
    if (it == p.rest.end()) return false;
    p.at = it->second;
    p.rest.erase(it);
    return true;
  };
  if (kernel == "gemm") {
    const bool wgrad = dtype_of(family).find("+wgrad") != std::string::npos;
    if (!take(wgrad ? "k" : "m")) return std::nullopt;
    return p;
  }
  if (kernel == "grouped_gemm") {
    if (groups.empty() || std::adjacent_find(groups.begin(), groups.end(), std::not_equal_to<>()) != groups.end())
      return std::nullopt;
    p.at = groups.front();
    p.group_count = static_cast<std::int64_t>(groups.size());
    return p;
  }
  if (kernel == "attention_fwd" || kernel == "attention_bwd") {
    const auto q = shape.find("seq_q"), kv = shape.find("seq_kv");
    if (q == shape.end() || kv == shape.end() || q->second != kv->second) return std::nullopt;
    take("seq_q");
    p.rest.erase("seq_kv");
    return p;
  }
  return std::nullopt;
}

CalibrationRecord as_record(const TableEntry& e, const GpuPeaks& peaks) {
  CalibrationRecord r;
  r.kernel = kernel_of(e.family);
  r.dtype = base_dtype(dtype_of(e.family));
  r.shape = e.shape;
  r.groups = e.groups;
  r.gpu.sm_count = peaks.sm_count;
  r.location = "table entry " + e.family;
  return r;
}

}  // namespace

std::vector<TableEntry> table_entries(const std::vector<const CalibrationRecord*>& records) {
  std::vector<TableEntry> out;
  std::vector<double> sums;
  for (const auto* r : records) {
    if (!r->skipped.empty()) continue;
    const std::string family = family_key(*r);
    auto it = std::find_if(out.begin(), out.end(), [&](const TableEntry& e) {
      return e.family == family && e.shape == r->shape && e.groups == r->groups;
    });
    if (it == out.end()) {
      out.push_back({family, r->shape, r->groups, r->time.median_us, 1});
      sums.push_back(r->time.median_us);
      continue;
    }
    auto& sum = sums[static_cast<std::size_t>(it - out.begin())];
    sum += r->time.median_us;
    ++it->measurements;
    it->time_us = sum / static_cast<double>(it->measurements);
  }
  return out;
}

MeasuredTable::MeasuredTable(std::vector<TableEntry> entries, GpuPeaks peaks)
    : entries_(std::move(entries)), peaks_(std::move(peaks)) {
  flops_us_.reserve(entries_.size());
  for (const auto& e : entries_) {
    // Only the ratio of two entries' FLOPs is used, so any feature proportional to the FLOPs would do; the
    // fitter's own keeps one definition of a kernel's FLOPs. Memory-bound entries have none (never interpolated).
    const auto spec = family_for_kernel(kernel_of(e.family));
    const bool has_flops = spec && spec->model != "memory_bound";
    flops_us_.push_back(has_flops ? feature_vector(as_record(e, peaks_), peaks_).at(1) : 0.0);
  }
}

bool MeasuredTable::has_family(const std::string& family) const { return shapes(family) > 0; }

std::int64_t MeasuredTable::shapes(const std::string& family) const {
  return std::count_if(entries_.begin(), entries_.end(), [&](const TableEntry& e) { return e.family == family; });
}

TableLookup MeasuredTable::lookup(const std::string& family, const CalibrationRecord& query) const {
  TableLookup out;
  for (const auto& e : entries_)
    if (e.family == family && e.shape == query.shape && e.groups == query.groups) {
      out.hit = TableHit::exact;
      out.time_us = e.time_us;
      out.below = &e;
      return out;
    }
  const auto q = axis_point(family, query.shape, query.groups);
  if (!q) return out;
  std::optional<std::size_t> lo, hi;
  std::int64_t lo_at = 0, hi_at = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    if (e.family != family) continue;
    const auto p = axis_point(family, e.shape, e.groups);
    if (!p || p->rest != q->rest || p->group_count != q->group_count) continue;
    if (p->at < q->at && (!lo || p->at > lo_at)) lo = i, lo_at = p->at;
    if (p->at > q->at && (!hi || p->at < hi_at)) hi = i, hi_at = p->at;
  }
  if (!lo || !hi) return out;
  const double f = feature_vector(query, peaks_).at(1);
  const double f0 = flops_us_[*lo], f1 = flops_us_[*hi];
  if (!(f1 > f0)) throw InternalError("table " + family + ": FLOPs do not grow along the interpolation axis");
  const double w = std::clamp((f - f0) / (f1 - f0), 0.0, 1.0);
  out.hit = TableHit::interpolated;
  out.below = &entries_[*lo];
  out.above = &entries_[*hi];
  out.time_us = out.below->time_us + w * (out.above->time_us - out.below->time_us);
  return out;
}

}  // namespace moesim::kernels::fit
