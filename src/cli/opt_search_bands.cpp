#include "cli/opt_search_bands.hpp"

#include <ostream>
#include <sstream>

#include "bands/error_table.hpp"
#include "cli/opt_tables.hpp"
#include "core/text.hpp"
#include "search/megatron_args.hpp"

namespace moesim::cli {

namespace {

// The anchor file's rows that measured a layout of this search's job, by layout summary: their measured step
// time (a tokens/s/GPU row is turned into one with the row's batch; a TFLOPS row needs a FLOP count and is left out).
std::vector<std::pair<std::string, RankedMeasurement>> measured_layouts(const std::string& file,
                                                                        const predict::Case& base, const Context& ctx,
                                                                        const predict::PredictOptions& options) {
  const TableSources sources(ctx);
  const auto table = sources.read(file, "none");
  const auto resolve = sources.resolvers(file);
  std::vector<std::pair<std::string, RankedMeasurement>> out;
  for (const auto& row : table.rows) {
    const auto rc = validate::case_from_row(row, resolve, options);
    if (!rc.c || rc.measured <= 0) continue;
    const auto& c = *rc.c;
    if (c.model.name != base.model.name || c.system.name != base.system.name || c.layout.gpus != base.layout.gpus)
      continue;
    double t = 0;
    if (rc.metric == "step_time_s") t = rc.measured;
    if (rc.metric == "tokens_per_sec_per_gpu")
      t = static_cast<double>(c.layout.gbs) * c.layout.seq / (rc.measured * c.layout.gpus);
    // The summary and the Megatron arguments together name a layout (the summary alone omits grouped GEMM).
    if (t > 0) out.push_back({predict::layout_summary(c.layout) + "|" + search::megatron_args(c.layout), {rc.id, t}});
  }
  return out;
}

}  // namespace

RankedBands ranked_bands(const search::SearchResult& r, const predict::Case& base, const BandFlags& flags,
                         const Context& ctx, const predict::PredictOptions& options) {
  RankedBands out;
  const BandAttacher attacher(flags, ctx, options);
  out.anchor = attacher.anchor_for(base);
  out.error_rows = attacher.error_rows();
  std::vector<std::pair<std::string, RankedMeasurement>> measured;
  if (!flags.anchor.empty()) measured = measured_layouts(flags.anchor, base, ctx, options);
  for (const auto& l : r.ranking) {
    auto shown = l.simulated ? *l.simulated : l.estimate;
    predict::Case c = base;
    c.layout = l.layout;
    attacher.attach(shown, c);
    out.shown.push_back(std::move(shown));
    std::optional<RankedMeasurement> m;
    for (const auto& [summary, value] : measured)
      if (summary == l.summary + "|" + l.args) m = value;
    out.measured.push_back(m);
  }
  return out;
}

std::string ranked_bands_text(const search::SearchResult& r, const RankedBands& b) {
  bool any = b.anchor.has_value();
  for (const auto& s : b.shown) any = any || s.band.has_value();
  if (!any || r.ranking.empty()) return "";
  std::ostringstream o;
  const auto& first = b.shown.front();
  o << "\nerror bands (" << (first.band ? fixed_decimals(100 * first.band->coverage, 0) + " %" : std::string("none"))
    << "; the engine's time where verified, else the estimate's):\n";
  if (b.anchor)
    o << "  anchored on " << b.anchor->rows << " measured row" << (b.anchor->rows == 1 ? "" : "s") << " of "
      << b.anchor->file << ": x" << fixed_decimals(b.anchor->time_factor(), 3)
      << " on every time (one factor: the order stays)\n";
  for (std::size_t i = 0; i < b.shown.size(); ++i) {
    const auto& s = b.shown[i];
    o << "  rank " << i + 1 << ": " << fixed_decimals(s.step_time_s, 3) << " s";
    if (s.band)
      o << " (" << fixed_decimals(s.band->step_time_low_s, 3) << " .. " << fixed_decimals(s.band->step_time_high_s, 3)
        << ")";
    if (s.anchored) {
      o << ", anchored " << fixed_decimals(s.anchored->step_time_s, 3) << " s";
      if (s.anchored->band.coverage > 0)
        o << " (" << fixed_decimals(s.anchored->band.step_time_low_s, 3) << " .. "
          << fixed_decimals(s.anchored->band.step_time_high_s, 3) << ")";
    }
    if (b.measured[i])
      o << ", measured " << fixed_decimals(b.measured[i]->step_time_s, 3) << " s (" << b.measured[i]->id << ")";
    o << "\n";
  }
  // Measured layouts order themselves; say so when the measurement disagrees with the ranking.
  for (std::size_t i = 0; i < b.measured.size(); ++i)
    for (std::size_t k = i + 1; k < b.measured.size(); ++k)
      if (b.measured[i] && b.measured[k] && b.measured[k]->step_time_s < b.measured[i]->step_time_s)
        o << "  measured: rank " << k + 1 << " is faster than rank " << i + 1 << " (" << b.measured[k]->id << " vs "
          << b.measured[i]->id << "); trust the measurement\n";
  return o.str();
}

void add_ranked_bands_json(config::Json& j, const RankedBands& b) {
  auto& ranking = j["ranking"];
  for (std::size_t i = 0; i < b.shown.size() && i < ranking.size(); ++i) {
    const auto& s = b.shown[i];
    if (s.band) ranking[i]["band_step_time_s"] = {s.band->step_time_low_s, s.band->step_time_high_s};
    if (s.anchored) {
      ranking[i]["anchored_step_time_s"] = s.anchored->step_time_s;
      if (s.anchored->band.coverage > 0)
        ranking[i]["anchored_band_step_time_s"] = {s.anchored->band.step_time_low_s, s.anchored->band.step_time_high_s};
    }
    if (b.measured[i])
      ranking[i]["measured"] = {{"id", b.measured[i]->id}, {"step_time_s", b.measured[i]->step_time_s}};
  }
  if (b.anchor)
    j["anchor"] = {{"file", b.anchor->file}, {"rows", b.anchor->rows}, {"time_factor", b.anchor->time_factor()}};
  if (!b.shown.empty() && b.shown.front().band) j["band_coverage"] = b.shown.front().band->coverage;
}

}  // namespace moesim::cli
