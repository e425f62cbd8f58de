#include "validate/memory_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/units.hpp"

namespace moesim::validate {
namespace {

double cell_number(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  if (it == row.end() || it->second.empty()) return 0;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return -1;  // reported by the caller with the row
  }
}

MemoryErrorSummary summarise(const std::vector<double>& errors) {
  MemoryErrorSummary s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) abs.push_back(std::fabs(e));
  s.median_abs = percentile(abs, 0.5);
  s.p90_abs = percentile(abs, 0.9);
  s.max_abs = *std::max_element(abs.begin(), abs.end());
  s.median_signed = percentile(errors, 0.5);
  return s;
}

}  // namespace

MemoryCheck check_memory(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base) {
  for (const char* column : {"real_alloc_gib", "real_reserved_gib"})
    if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
      throw ConfigError({{table.file, "",
                          std::string("validate --memory needs a column \"") + column +
                              "\" (torch.cuda.max_memory_allocated / max_memory_reserved in GiB, "
                              "as data/measurements/simumax_b200.csv)"}});
  MemoryCheck out;
  std::vector<double> allocated, reserved;
  Diagnostics bad;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    MemoryCheckRow r;
    r.id = row.count("id") ? row.at("id") : "";
    r.measured_allocated_gib = cell_number(row, "real_alloc_gib");
    r.measured_reserved_gib = cell_number(row, "real_reserved_gib");
    if (r.measured_allocated_gib < 0 || r.measured_reserved_gib < 0) {
      bad.add(table.file, "line " + std::to_string(table.row_lines.at(i)),
              "row " + r.id + ": real_alloc_gib and real_reserved_gib must be numbers (GiB) or blank");
      continue;
    }
    const auto from = row.find("memory_from_case");
    if (from != row.end() && !from->second.empty())
      r.skipped = "reuses the measurement of " + from->second;
    else if (r.measured_allocated_gib <= 0 || r.measured_reserved_gib <= 0)
      r.skipped = "no measured memory";
    const auto rc = case_from_row(row, resolve, base);
    if (!rc.c && r.skipped.empty()) r.skipped = rc.skipped;
    if (rc.c) {
      const auto prep = predict::prepare_case(*rc.c, rc.options);
      const auto& worst = *std::max_element(prep.memory.ranks.begin(), prep.memory.ranks.end(),
                                            [](const auto& a, const auto& b) { return a.allocated() < b.allocated(); });
      r.layout = predict::layout_summary(rc.c->layout);
      r.pp_rank = worst.pp_rank;
      r.allocated_gib = worst.allocated() / kGiB;
      r.reserved_gib = worst.reserved() / kGiB;
    }
    if (r.skipped.empty()) {
      allocated.push_back(r.allocated_error());
      reserved.push_back(r.reserved_error());
    }
    out.rows.push_back(r);
  }
  bad.throw_if_any();
  out.allocated = summarise(allocated);
  out.reserved = summarise(reserved);
  return out;
}

std::string memory_check_text(const MemoryCheck& check) {
  std::string out;
  char line[320];
  std::snprintf(line, sizeof line, "%-7s %4s %9s %9s %7s %9s %9s %7s  %s\n", "id", "rank", "alloc", "measured", "error",
                "reserved", "measured", "error", "layout (GiB; the fullest pipeline rank)");
  out += line;
  for (const auto& r : check.rows) {
    if (!r.skipped.empty()) {
      std::snprintf(line, sizeof line, "%-7s not judged: %s\n", r.id.c_str(), r.skipped.c_str());
    } else {
      std::snprintf(line, sizeof line, "%-7s %4d %9.2f %9.2f %+6.1f%% %9.2f %9.2f %+6.1f%%  %s\n", r.id.c_str(),
                    r.pp_rank, r.allocated_gib, r.measured_allocated_gib, 100 * r.allocated_error(), r.reserved_gib,
                    r.measured_reserved_gib, 100 * r.reserved_error(), r.layout.c_str());
    }
    out += line;
  }
  for (const auto& [name, s] : {std::pair<const char*, const MemoryErrorSummary&>{"allocated", check.allocated},
                                std::pair<const char*, const MemoryErrorSummary&>{"reserved", check.reserved}}) {
    std::snprintf(line, sizeof line,
                  "%s vs max_memory_%s: %d rows, |error| median %.1f %%, p90 %.1f %%, max %.1f %%; signed median "
                  "%+.1f %%\n",
                  name, name, s.rows, 100 * s.median_abs, 100 * s.p90_abs, 100 * s.max_abs, 100 * s.median_signed);
    out += line;
  }
  return out;
}

}  // namespace moesim::validate
