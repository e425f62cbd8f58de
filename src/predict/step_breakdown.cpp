#include "predict/step_breakdown.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "engine/intervals.hpp"

namespace moesim::predict {
namespace {

// Intervals during which a GPU op of `rank` was held by the host: the op started the moment the host finished
// launching it, later than both its stream's previous op and all its dependencies had finished. The
// part of these intervals in which nothing ran on the GPU is the host share of the step.
std::vector<engine::Interval> host_waits(const opgraph::OpGraph& g, const engine::SimResult& result, int rank) {
  std::vector<engine::Interval> waits;
  std::array<Picoseconds, opgraph::kStreamCount> stream_free{};
  for (const auto& op : g.ops()) {
    if (op.rank != rank || op.stream == opgraph::Stream::host) continue;
    const auto& t = result.ops[static_cast<std::size_t>(op.id)];
    Picoseconds& free_at = stream_free[static_cast<std::size_t>(op.stream)];
    Picoseconds ready = free_at;
    for (const auto d : op.deps) ready = std::max(ready, result.ops[static_cast<std::size_t>(d)].end);
    free_at = std::max(free_at, t.end);
    // Held by the host: busy launching this op or earlier ones, or blocked in a sync, after the op was ready.
    if (t.start == t.issued && t.issued > ready) waits.push_back({ready, t.issued});
  }
  engine::normalize(waits);
  return waits;
}

}  // namespace

std::map<std::string, double> step_breakdown(const opgraph::OpGraph& g, const engine::SimResult& result, int rank,
                                             double makespan_s) {
  // By category label; the categories are few, so a name's label is found by a scan.
  const auto& categories = g.categories();
  std::vector<std::vector<engine::Interval>> by_cat(categories.size());
  for (const auto& op : g.ops()) {
    if (op.rank != rank || op.stream == opgraph::Stream::host) continue;
    const auto& t = result.ops[static_cast<std::size_t>(op.id)];
    if (t.end > t.start) by_cat[static_cast<std::size_t>(op.category)].push_back({t.start, t.end});
  }
  std::vector<engine::Interval> covered;
  auto take = [&](std::string_view cat) {
    const auto at = std::find(categories.begin(), categories.end(), cat);
    if (at == categories.end()) return 0.0;
    auto& iv = by_cat[static_cast<std::size_t>(at - categories.begin())];
    engine::normalize(iv);
    const double exposed = ps_to_seconds(engine::measure_outside(iv, covered));
    engine::unite(covered, iv);
    return exposed;
  };
  std::map<std::string, double> b;
  b["compute"] = take("compute");
  b["optimizer"] = take("optimizer");
  for (const char* cat : {"ep", "tp", "cp", "pp", "dp"}) b[std::string("exposed_") + cat] = take(cat);
  const double idle = std::max(0.0, makespan_s - ps_to_seconds(engine::measure(covered)));
  b["host"] = std::min(idle, ps_to_seconds(engine::measure_outside(host_waits(g, result, rank), covered)));
  b["bubble"] = idle - b["host"];
  return b;
}

}  // namespace moesim::predict
