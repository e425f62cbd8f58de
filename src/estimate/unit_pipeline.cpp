#include "estimate/unit_pipeline.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "layout/schedule_counts.hpp"

namespace moesim::estimate {
namespace {

using workload::ScheduleUnit;
using workload::UnitKind;

// One thing a rank runs: a unit, or a forward merged with the backward after it.
struct Task {
  ScheduleUnit first;
  std::optional<ScheduleUnit> second;  // the paired backward
  bool first_defers = false, second_defers = false;
};

class Pipeline {
 public:
  Pipeline(const layout::StageAssignment& s, double p2p) : s_(s), p2p_(p2p) {}

  // (pass, stage across copies, micro-batch): the key of a unit's input, as the step builder's walker keys it.
  using Key = std::tuple<UnitKind, int, int>;

  Key key(UnitKind kind, int rank, int chunk, int mb) const {
    return {kind, layout::stage_across_copies(s_.placement, s_.pp, s_.vpp, rank, chunk), mb};
  }
  std::optional<layout::StageSlot> neighbour(int rank, int chunk, int step) const {
    return layout::neighbour_slot(s_.placement, s_.pp, s_.vpp, rank, chunk, step);
  }
  // When the unit's input is there (0 for the first stage's forward); nullopt while it is not.
  std::optional<double> input_ready(int rank, const ScheduleUnit& u) const {
    if (u.forward() && !neighbour(rank, u.chunk, -1)) return 0.0;
    if (u.kind == UnitKind::W) return 0.0;  // follows its B on this rank, which the order ensures
    const auto it = delivered_.find(key(u.kind, rank, u.chunk, u.microbatch));
    if (it == delivered_.end()) return std::nullopt;
    return it->second;
  }
  // A finished forward feeds the next stage's forward (or its own backward at the last stage); a finished
  // backward feeds the previous stage's backward. A send when the stage is on another rank.
  void finish(int rank, const ScheduleUnit& u, double end) {
    if (u.kind == UnitKind::W) return;
    const int step = u.forward() ? +1 : -1;
    if (const auto next = neighbour(rank, u.chunk, step)) {
      delivered_[key(u.kind, next->rank, next->chunk, u.microbatch)] = end + (next->rank != rank ? p2p_ : 0.0);
    } else if (u.forward()) {
      delivered_[key(UnitKind::B, rank, u.chunk, u.microbatch)] = end;
    }
  }

 private:
  const layout::StageAssignment& s_;
  double p2p_;
  std::map<Key, double> delivered_;
};

std::vector<Task> tasks_of(const std::vector<ScheduleUnit>& units, bool merge_pairs) {
  std::set<std::pair<int, int>> deferred;  // (chunk, micro-batch) with a W unit
  for (const auto& u : units)
    if (u.kind == UnitKind::W) deferred.insert({u.chunk, u.microbatch});
  auto defers = [&](const ScheduleUnit& u) {
    return u.kind == UnitKind::B && deferred.count({u.chunk, u.microbatch}) > 0;
  };
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < units.size(); ++i) {
    Task t{units[i], std::nullopt, defers(units[i]), false};
    if (merge_pairs && units[i].paired && i + 1 < units.size() && units[i + 1].kind == UnitKind::B) {
      t.second = units[i + 1];
      t.second_defers = defers(units[i + 1]);
      ++i;
    }
    tasks.push_back(t);
  }
  return tasks;
}

}  // namespace

UnitPipelineTimes unit_pipeline_times(const workload::PipelineSchedule& schedule, const layout::StageAssignment& stages,
                                      int microbatches, double p2p_s, bool merge_pairs, const UnitDurations& d) {
  const int pp = stages.pp;
  std::vector<std::vector<Task>> tasks;
  for (int r = 0; r < pp; ++r)
    tasks.push_back(tasks_of(schedule.units({pp, stages.vpp, microbatches}, r), merge_pairs));
  Pipeline pipe(stages, p2p_s);
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<double> free(static_cast<std::size_t>(pp), 0.0);
  UnitPipelineTimes out;
  out.busy.resize(static_cast<std::size_t>(pp));
  auto duration = [&](int r, const Task& t) -> Timed {
    const auto& u = t.first;
    if (t.second) return d.pair(r, u.chunk, t.second->chunk, !t.second_defers);
    switch (u.kind) {
      case UnitKind::F: return d.forward(r, u.chunk);
      case UnitKind::B: return d.backward(r, u.chunk, !t.first_defers);
      case UnitKind::W: return d.wgrad(r, u.chunk);
    }
    return {};
  };
  // Ranks take turns running every task whose inputs are there; a round without progress is a deadlock.
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < pp; ++r) {
      auto& i = next[static_cast<std::size_t>(r)];
      const auto& list = tasks[static_cast<std::size_t>(r)];
      while (i < list.size()) {
        const Task& t = list[i];
        const auto a = pipe.input_ready(r, t.first);
        const auto b = t.second ? pipe.input_ready(r, *t.second) : std::optional<double>(0.0);
        if (!a || !b) break;
        auto& at = free[static_cast<std::size_t>(r)];
        const Timed took = duration(r, t);
        out.busy[static_cast<std::size_t>(r)] += took;
        at = std::max({at, *a, *b}) + took.seconds;
        pipe.finish(r, t.first, at);
        if (t.second) pipe.finish(r, *t.second, at);
        ++i;
        progress = true;
      }
    }
  }
  for (int r = 0; r < pp; ++r)
    if (next[static_cast<std::size_t>(r)] < tasks[static_cast<std::size_t>(r)].size())
      throw InternalError("estimate: the " + std::string(schedule.name()) + " unit lists deadlock at pipeline rank " +
                          std::to_string(r) + ", unit " + std::to_string(next[static_cast<std::size_t>(r)]));
  out.times.last_backward_end = free;
  out.times.makespan = *std::max_element(free.begin(), free.end());
  return out;
}

}  // namespace moesim::estimate
