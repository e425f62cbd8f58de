#pragma once
// One step of a SmallMoeStep built and played on the engine, with the look-ups the workload tests make of its ops
// by name (the parameter-gather and DDP-bucket tests share them).
#include <vector>

#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/op_graph_names.hpp"
#include "workload/step_builder.hpp"

namespace moesim::test {

struct PlayedStep {
  workload::StepWorkload w;
  engine::SimResult r;

  bool named(const workload::Op& op, const char* name) const { return w.graph.names()[op.name] == name; }

  // Rank `rank`'s ops named `name`, in graph order.
  std::vector<workload::Op> ops_named(int rank, const char* name) const {
    std::vector<workload::Op> out;
    for (const auto& op : w.graph.ops())
      if (op.rank == rank && named(op, name)) out.push_back(op);
    return out;
  }
};

// Builds `in`'s step, checks the graph's invariants and plays it.
inline PlayedStep play_step(const SmallMoeStep& in) {
  PlayedStep p{workload::build_step(in.step()), {}};
  p.w.graph.check_invariants(p.w.network);
  p.r = engine::Simulator().run(p.w.graph, p.w.network);
  return p;
}

}  // namespace moesim::test
