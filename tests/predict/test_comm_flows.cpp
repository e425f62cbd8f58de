// The central claim of workload/comm_costs.hpp, end to end: a collective costed by comm/ and played alone by
// the engine (flows on the GPU's NVLink port and NIC) lasts exactly comm/'s closed-form time.
#include <doctest/doctest.h>

#include "comm/measured_efficiency.hpp"
#include "engine/simulator.hpp"
#include "opgraph/op_graph.hpp"
#include "workload/comm_costs.hpp"

namespace {
using namespace moesim;

// One rank with an NVLink port (link 0) and a NIC (link 1); one collective op of `d` on the EP stream, graph
// captured so that no launch cost delays it. Returns its duration in seconds.
double play(const workload::LinkDemand& d, double nvlink_Bps, double nic_Bps) {
  opgraph::OpGraph g;
  g.add_rank({132, 1, "r0"});
  opgraph::NetworkModel net{{nvlink_Bps, nic_Bps}, {"r0.nvlink", "r0.nic"}};
  opgraph::Collective c;
  if (d.nvlink_bytes > 0) c.flows.push_back({{0}, d.nvlink_bytes});
  if (d.nic_bytes > 0) c.flows.push_back({{1}, d.nic_bytes});
  c.latency = seconds_to_ps(d.latency_s);
  c.sm_count = d.sms;
  const auto cid = g.add_collective(std::move(c));
  opgraph::Op op;
  op.rank = 0;
  op.stream = opgraph::Stream::ep_comm;
  op.kind = opgraph::OpKind::collective;
  op.collective = cid;
  op.name = g.name_id("x");
  op.category = g.category_id("ep");
  op.graph_captured = true;
  const auto id = g.add_op(std::move(op));
  const auto r = engine::Simulator{}.run(g, net);
  const auto& t = r.ops.at(static_cast<std::size_t>(id));
  return ps_to_seconds(t.end - t.start);
}
}  // namespace

TEST_CASE("an uncontended collective in the engine lasts comm/'s closed-form time") {
  const double up = 900e9, out = 50e9;
  const workload::CommCostModel m(kernels::Arch::blackwell, up, out, false);
  struct Case {
    const char* name;
    comm::CollectiveSpec spec;
  };
  for (const auto& [name, spec] :
       {Case{"ring AG in one domain", {comm::Collective::all_gather, comm::Algorithm::ring, {8, 8}, 2e9}},
        Case{"ring RS across 4 domains", {comm::Collective::reduce_scatter, comm::Algorithm::ring, {32, 8}, 2e9}},
        Case{"all-to-all across 2 domains", {comm::Collective::all_to_all, comm::Algorithm::direct, {16, 8}, 5e8}},
        Case{"send/recv across domains", {comm::Collective::send_recv, comm::Algorithm::direct, {2, 1}, 1e8}}}) {
    CAPTURE(name);
    const double expected = comm::collective_cost(spec, m.fabric()).seconds;
    CHECK(play(m.collective(spec), up, out) == doctest::Approx(expected).epsilon(1e-6));
  }
  // An EP dispatch over two 8-GPU boxes with HybridEP (NVLink and RDMA classes concurrently).
  comm::DispatchProblem p;
  p.ep = {16, 8};
  p.routing = {256, 8, 1, 1};
  p.tokens_per_rank = 4096;
  p.hidden = 7168;
  const double expected = comm::expert_dispatcher("hybridep").cost(p, comm::Phase::dispatch, m.fabric()).seconds;
  CHECK(play(m.dispatch(comm::expert_dispatcher("hybridep"), p, comm::Phase::dispatch), up, out) ==
        doctest::Approx(expected).epsilon(1e-6));
}
