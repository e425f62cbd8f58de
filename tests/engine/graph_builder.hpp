#pragma once
// Test helper: terse construction of small op graphs for the engine tests.
#include <string>
#include <vector>

#include "engine/simulator.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::test {

using opgraph::CollectiveId;
using opgraph::LinkId;
using opgraph::OpId;
using opgraph::OpIds;
using opgraph::Stream;

struct GraphBuilder {
  opgraph::OpGraph g;
  opgraph::NetworkModel net;

  explicit GraphBuilder(int ranks, int sms = 100) {
    for (int r = 0; r < ranks; ++r) g.add_rank(opgraph::RankInfo{sms, 1, "r" + std::to_string(r)});
  }
  LinkId link(double Bps) {
    net.link_capacity_Bps.push_back(Bps);
    return static_cast<LinkId>(net.link_capacity_Bps.size() - 1);
  }
  OpId op(int rank, opgraph::OpKind kind, Stream stream, Picoseconds duration, OpIds deps, const std::string& category,
          Picoseconds launch = 0, const std::string& name = "") {
    opgraph::Op o;
    o.rank = rank;
    o.kind = kind;
    o.stream = stream;
    o.duration = duration;
    o.deps = std::move(deps);
    o.category = g.category_id(category);
    o.name = g.name_id(name);
    o.launch_cost = launch;
    return g.add_op(o);
  }
  OpId compute(int rank, Picoseconds duration, OpIds deps = {}, Picoseconds launch = 0) {
    return op(rank, opgraph::OpKind::compute, Stream::compute, duration, std::move(deps), "compute", launch);
  }
  CollectiveId collective(std::vector<opgraph::Flow> flows, Picoseconds latency = 0, int sms = 0) {
    opgraph::Collective c;
    c.flows = std::move(flows);
    c.latency = latency;
    c.sm_count = sms;
    return g.add_collective(std::move(c));
  }
  OpId member(int rank, CollectiveId c, OpIds deps = {}, Stream stream = Stream::ep_comm,
              const std::string& category = "ep", Picoseconds launch = 0) {
    opgraph::Op o;
    o.rank = rank;
    o.kind = opgraph::OpKind::collective;
    o.stream = stream;
    o.collective = c;
    o.deps = std::move(deps);
    o.category = g.category_id(category);
    o.launch_cost = launch;
    return g.add_op(o);
  }
  engine::SimResult run() const { return engine::Simulator().run(g, net); }
};

}  // namespace moesim::test
