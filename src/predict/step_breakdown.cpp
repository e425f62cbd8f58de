#include "predict/step_breakdown.hpp"

#include <algorithm>
#include <vector>

#include "engine/intervals.hpp"

namespace moesim::predict {
namespace {

// Intervals during which a GPU op of `rank` was held by the host: the op started the moment the host finished
// launching it, later than both its stream's previous op and all its dependencies had finished. The
// part of these intervals in which nothing ran on the GPU is the host share of the step.
std::vector<engine::Interval> host_waits(const opgraph::OpGraph& g, const engine::SimResult& result, int rank) {
  std::vector<engine::Interval> waits;
  std::map<opgraph::Stream, Picoseconds> stream_free;
  for (const auto& op : g.ops()) {
    if (op.rank != rank || op.stream == opgraph::Stream::host) continue;
    const auto& t = result.ops[static_cast<std::size_t>(op.id)];
    Picoseconds ready = stream_free[op.stream];
    for (const auto d : op.deps) ready = std::max(ready, result.ops[static_cast<std::size_t>(d)].end);
    stream_free[op.stream] = std::max(stream_free[op.stream], t.end);
    // Held by the host: busy launching this op or earlier ones, or blocked in a sync, after the op was ready.
    if (t.start == t.issued && t.issued > ready) waits.push_back({ready, t.issued});
  }
  engine::normalize(waits);
  return waits;
}

}  // namespace

std::map<std::string, double> step_breakdown(const opgraph::OpGraph& g, const engine::SimResult& result, int rank,
                                             double makespan_s) {
  std::map<std::string, std::vector<engine::Interval>> by_cat;
  for (const auto& op : g.ops()) {
    if (op.rank != rank || op.stream == opgraph::Stream::host) continue;
    const auto& t = result.ops[static_cast<std::size_t>(op.id)];
    if (t.end > t.start) by_cat[g.categories()[op.category]].push_back({t.start, t.end});
  }
  std::vector<engine::Interval> covered;
  auto take = [&](const std::string& cat) {
    auto& iv = by_cat[cat];
    engine::normalize(iv);
    const double exposed = ps_to_seconds(engine::measure_outside(iv, covered));
    covered.insert(covered.end(), iv.begin(), iv.end());
    engine::normalize(covered);
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
