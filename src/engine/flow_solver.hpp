#pragma once
// FlowSolver: fluid model of concurrent transfers sharing links max-min fairly.
//
// Each active flow crosses a fixed list of links. Rates are the max-min fair allocation (progressive
// filling): raise every flow's rate together; when a link is full, freeze the flows crossing it at their
// current rate; continue with the rest. Rates are re-solved only when flows start or finish, and only for
// the connected components (flows linked through shared links) that such a change touched; start() and
// pop_completed() mark links dirty, resolve() re-solves the components reachable from dirty links. A caller
// starts and finishes everything that happens at one instant and then calls resolve() once, so a thousand
// flows of one all-to-all starting together cost one solve, not a thousand.
//
// Progress is exact up to double rounding: a flow's bytes left are advanced only when its rate changes, and
// its completion time is rounded up to the next picosecond. The bytes each flow delivered are integrated
// from its rates (not copied from its size), so bytes delivered = bytes injected is a real check.
//
// Cost: resolve() is O((F + H) log L) for the F flows, H flow-link hops and L links of the touched
// components; start and finish are O(path length); next_completion/pop_completed are O(log F) per flow.
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

#include "core/units.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::engine {

using FlowId = std::int32_t;  // a slot; reused after the flow completes
inline constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

class FlowSolver {
 public:
  struct Completed {
    FlowId id;
    Picoseconds time;
    double delivered_bytes;  // integrated from the flow's rates over its life
  };
  struct Stats {
    std::uint64_t flows_started = 0;
    std::uint64_t resolves = 0;       // resolve() calls that had something to do
    std::uint64_t flows_rerated = 0;  // flows visited by those solves, summed
    std::uint64_t max_active_flows = 0;
  };

  explicit FlowSolver(std::vector<double> link_capacity_Bps);

  // Starts a flow at `now`; its rate is 0 until the next resolve(). A flow with no links or no bytes
  // completes at `now` (a local copy).
  FlowId start(std::span<const opgraph::LinkId> path, double bytes, Picoseconds now);
  // Re-solves the rates of the components touched since the last call and re-predicts their completions.
  void resolve(Picoseconds now);
  // Earliest predicted completion of an active flow, or kNever.
  Picoseconds next_completion();
  // Removes the flows that complete at or before `now` and appends them to `out`, ordered by (time, id).
  void pop_completed(Picoseconds now, std::vector<Completed>& out);

  double rate_Bps(FlowId id) const { return flows_[static_cast<std::size_t>(id)].rate * kPicosecondsPerSecond; }
  Picoseconds predicted_end(FlowId id) const { return flows_[static_cast<std::size_t>(id)].predicted_end; }
  // Bytes carried by each link, summed over completed flows (each flow's delivered bytes on every hop).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const Stats& stats() const { return stats_; }

 private:
  struct FlowState {
    std::vector<opgraph::LinkId> path;
    std::vector<std::uint32_t> slot_in_link;  // index of this flow in links_[path[h]].active
    double remaining = 0.0;                   // bytes left at last_update
    double delivered = 0.0;                   // bytes moved up to last_update
    double rate = 0.0;                        // bytes per picosecond
    Picoseconds last_update = 0;
    Picoseconds predicted_end = kNever;
    std::uint32_t version = 0;  // bumps on every re-prediction; stale heap entries are skipped
    std::uint32_t seen_epoch = 0;
    std::uint32_t frozen_epoch = 0;
    double new_rate = 0.0;
    bool active = false;
  };
  struct LinkState {
    double capacity = 0.0;                                 // bytes per picosecond
    std::vector<std::pair<FlowId, std::uint32_t>> active;  // (flow, hop index in the flow's path)
    bool dirty = false;
    std::uint32_t seen_epoch = 0;
    double cap_left = 0.0;
    std::int32_t unfrozen = 0;
    std::uint32_t fill_version = 0;
  };
  using Prediction = std::tuple<Picoseconds, FlowId, std::uint32_t>;  // (end, flow, version)

  void advance(FlowState& f, Picoseconds now);
  void predict(FlowId id, Picoseconds now);
  void detach(FlowId id);
  void mark_dirty(opgraph::LinkId l);
  void collect_component(opgraph::LinkId seed);
  void progressive_filling();

  std::vector<LinkState> links_;
  std::vector<FlowState> flows_;
  std::vector<FlowId> free_slots_;
  std::vector<opgraph::LinkId> dirty_;
  std::priority_queue<Prediction, std::vector<Prediction>, std::greater<>> completions_;
  std::vector<double> link_bytes_;
  std::size_t active_count_ = 0;
  std::uint32_t epoch_ = 0;
  Stats stats_;
  // Scratch for resolve(), kept to avoid reallocation.
  std::vector<opgraph::LinkId> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<opgraph::LinkId> bfs_;
};

}  // namespace moesim::engine
