#include "engine/flow_solver.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/units.hpp"

namespace moesim::engine {

using opgraph::LinkId;

FlowSolver::FlowSolver(std::vector<double> link_capacity_Bps)
    : links_(link_capacity_Bps.size()), link_bytes_(link_capacity_Bps.size(), 0.0) {
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (!(link_capacity_Bps[l] > 0.0) || !std::isfinite(link_capacity_Bps[l]))
      throw InternalError("FlowSolver: link " + std::to_string(l) + " needs a positive finite capacity");
    links_[l].capacity = link_capacity_Bps[l] / kPicosecondsPerSecond;
  }
}

FlowId FlowSolver::start(std::span<const LinkId> path, double bytes, Picoseconds now) {
  FlowId id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  FlowState& f = flows_[static_cast<std::size_t>(id)];
  f.remaining = bytes;
  f.delivered = 0.0;
  f.rate = 0.0;
  f.last_update = now;
  f.active = true;
  ++f.version;
  ++active_count_;
  ++stats_.flows_started;
  stats_.max_active_flows = std::max<std::uint64_t>(stats_.max_active_flows, active_count_);
  f.path.clear();
  f.slot_in_link.clear();
  if (path.empty() || bytes <= 0.0) {
    // Nothing crosses a link: delivered at once.
    f.delivered = bytes;
    f.remaining = 0.0;
    f.predicted_end = now;
    completions_.emplace(now, id, f.version);
    return id;
  }
  f.path.assign(path.begin(), path.end());
  f.slot_in_link.resize(path.size());
  for (std::size_t h = 0; h < path.size(); ++h) {
    LinkState& link = links_[static_cast<std::size_t>(path[h])];
    f.slot_in_link[h] = static_cast<std::uint32_t>(link.active.size());
    link.active.emplace_back(id, static_cast<std::uint32_t>(h));
    mark_dirty(path[h]);
  }
  f.predicted_end = kNever;  // until resolve() gives it a rate
  return id;
}

void FlowSolver::mark_dirty(LinkId l) {
  LinkState& link = links_[static_cast<std::size_t>(l)];
  if (!link.dirty) {
    link.dirty = true;
    dirty_.push_back(l);
  }
}

void FlowSolver::advance(FlowState& f, Picoseconds now) {
  const double moved = f.rate * static_cast<double>(now - f.last_update);
  f.delivered += moved;
  f.remaining = std::max(0.0, f.remaining - moved);
  f.last_update = now;
}

void FlowSolver::predict(FlowId id, Picoseconds now) {
  FlowState& f = flows_[static_cast<std::size_t>(id)];
  ++f.version;
  const double dt = std::ceil(f.remaining / f.rate);
  // A flow ending past int64 picoseconds (~106 days) would overflow the cast below; only an absurd input (a NIC
  // scaled a trillion-fold slower) gets there, and seconds_to_ps refuses it with the simulator's range.
  (void)seconds_to_ps((static_cast<double>(now) + dt) / kPicosecondsPerSecond);
  f.predicted_end = now + static_cast<Picoseconds>(dt);
  completions_.emplace(f.predicted_end, id, f.version);
}

Picoseconds FlowSolver::next_completion() {
  while (!completions_.empty()) {
    const auto& [end, id, version] = completions_.top();
    const FlowState& f = flows_[static_cast<std::size_t>(id)];
    if (f.active && f.version == version) return end;
    completions_.pop();  // stale prediction
  }
  return kNever;
}

void FlowSolver::detach(FlowId id) {
  FlowState& f = flows_[static_cast<std::size_t>(id)];
  for (std::size_t h = 0; h < f.path.size(); ++h) {
    LinkState& link = links_[static_cast<std::size_t>(f.path[h])];
    const std::uint32_t slot = f.slot_in_link[h];
    const auto moved = link.active.back();
    link.active[slot] = moved;
    flows_[static_cast<std::size_t>(moved.first)].slot_in_link[moved.second] = slot;
    link.active.pop_back();
    mark_dirty(f.path[h]);
  }
}

void FlowSolver::pop_completed(Picoseconds now, std::vector<Completed>& out) {
  while (next_completion() <= now) {
    const auto [end, id, version] = completions_.top();
    completions_.pop();
    FlowState& f = flows_[static_cast<std::size_t>(id)];
    if (!f.path.empty()) {
      advance(f, end);
      for (LinkId l : f.path) link_bytes_[static_cast<std::size_t>(l)] += f.delivered;
      detach(id);
    }
    f.active = false;
    f.remaining = 0.0;
    --active_count_;
    out.push_back(Completed{id, end, f.delivered});
    free_slots_.push_back(id);
  }
}

void FlowSolver::collect_component(LinkId seed) {
  bfs_.clear();
  bfs_.push_back(seed);
  links_[static_cast<std::size_t>(seed)].seen_epoch = epoch_;
  while (!bfs_.empty()) {
    const LinkId l = bfs_.back();
    bfs_.pop_back();
    comp_links_.push_back(l);
    for (const auto& [fid, hop] : links_[static_cast<std::size_t>(l)].active) {
      FlowState& f = flows_[static_cast<std::size_t>(fid)];
      if (f.seen_epoch == epoch_) continue;
      f.seen_epoch = epoch_;
      comp_flows_.push_back(fid);
      for (LinkId other : f.path) {
        LinkState& o = links_[static_cast<std::size_t>(other)];
        if (o.seen_epoch != epoch_) {
          o.seen_epoch = epoch_;
          bfs_.push_back(other);
        }
      }
    }
  }
}

void FlowSolver::progressive_filling() {
  // Min-heap of (fair share, link, version): the share of a link is its capacity left divided by its
  // unfrozen flows. Freezing flows at the minimum share can only raise the other links' shares, so stale
  // entries (older version) are skipped instead of updated in place.
  using Entry = std::tuple<double, LinkId, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (LinkId l : comp_links_) {
    LinkState& link = links_[static_cast<std::size_t>(l)];
    link.cap_left = link.capacity;
    link.unfrozen = static_cast<std::int32_t>(link.active.size());
    ++link.fill_version;
    if (link.unfrozen > 0) heap.emplace(link.cap_left / link.unfrozen, l, link.fill_version);
  }
  // Shares pop in non-decreasing order; carrying the largest one so far forward keeps double rounding from
  // ever giving a flow a smaller (or zero) rate than a flow frozen before it.
  double floor_share = 0.0;
  while (!heap.empty()) {
    const auto [popped_share, l, version] = heap.top();
    heap.pop();
    LinkState& link = links_[static_cast<std::size_t>(l)];
    if (version != link.fill_version || link.unfrozen == 0) continue;
    floor_share = std::max(floor_share, popped_share);
    const double share = floor_share;
    for (const auto& [fid, hop] : link.active) {
      FlowState& f = flows_[static_cast<std::size_t>(fid)];
      if (f.frozen_epoch == epoch_) continue;
      f.frozen_epoch = epoch_;
      f.new_rate = share;
      for (LinkId other : f.path) {
        if (other == l) continue;
        LinkState& o = links_[static_cast<std::size_t>(other)];
        o.cap_left -= share;
        --o.unfrozen;
        ++o.fill_version;
        if (o.unfrozen > 0) heap.emplace(std::max(0.0, o.cap_left) / o.unfrozen, other, o.fill_version);
      }
    }
    link.unfrozen = 0;
  }
}

void FlowSolver::resolve(Picoseconds now) {
  if (dirty_.empty()) return;
  ++epoch_;
  ++stats_.resolves;
  comp_links_.clear();
  comp_flows_.clear();
  for (LinkId l : dirty_) {
    LinkState& link = links_[static_cast<std::size_t>(l)];
    link.dirty = false;
    if (link.seen_epoch != epoch_) collect_component(l);
  }
  dirty_.clear();
  progressive_filling();
  stats_.flows_rerated += comp_flows_.size();
  for (FlowId id : comp_flows_) {
    FlowState& f = flows_[static_cast<std::size_t>(id)];
    if (f.new_rate == f.rate) continue;  // unchanged rate: the old prediction stands
    if (!(f.new_rate > 0.0)) throw InternalError("FlowSolver: a flow got a zero rate");
    advance(f, now);
    f.rate = f.new_rate;
    predict(id, now);
  }
}

}  // namespace moesim::engine
