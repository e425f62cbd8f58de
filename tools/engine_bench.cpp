// Micro-benchmark of the engine (not a test: prints timings, asserts nothing).
//
//   moesim_engine_bench [gpus=256] [layers=16] [microbatches=8] [ep=64]
//
// 1. FlowSolver alone: one all-to-all among `ep` GPUs (ep*(ep-1) flows) on a two-tier network (per-GPU
//    NVLink in/out inside nodes of 8, per-GPU NIC in/out across nodes), with random sizes so that flows
//    finish at many different times (the solver's worst case: one re-solve per completion instant).
// 2. Simulator: a synthetic MoE step on `gpus` ranks: per layer and micro-batch attention, EP dispatch,
//    experts, EP combine forward and the same backward, host launch costs, one DP all-reduce at the end.
//    Reports ops, events and wall time.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "engine/flow_solver.hpp"
#include "engine/simulator.hpp"

using namespace moesim;
using opgraph::LinkId;

namespace {

constexpr int kGpusPerNode = 8;
// Illustrative capacities for the benchmark only (H100-class: 450 GB/s NVLink per direction, 50 GB/s
// per 400G NIC); they do not feed any prediction.
constexpr double kNvlinkBps = 450e9;
constexpr double kNicBps = 50e9;

struct Net {
  opgraph::NetworkModel model;
  int gpus;
  LinkId nvl_out(int g) const { return 4 * g; }
  LinkId nvl_in(int g) const { return 4 * g + 1; }
  LinkId nic_out(int g) const { return 4 * g + 2; }
  LinkId nic_in(int g) const { return 4 * g + 3; }
  std::vector<LinkId> path(int src, int dst) const {
    if (src / kGpusPerNode == dst / kGpusPerNode) return {nvl_out(src), nvl_in(dst)};
    return {nic_out(src), nic_in(dst)};
  }
};

Net make_net(int gpus) {
  Net n{{}, gpus};
  for (int g = 0; g < gpus; ++g)
    for (double c : {kNvlinkBps, kNvlinkBps, kNicBps, kNicBps}) n.model.link_capacity_Bps.push_back(c);
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bench_solver(int ep) {
  const Net net = make_net(ep);
  engine::FlowSolver solver(net.model.link_capacity_Bps);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> size(0.5e6, 2e6);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < ep; ++s)
    for (int d = 0; d < ep; ++d)
      if (s != d) {
        const auto p = net.path(s, d);
        solver.start(p, size(rng), 0);
      }
  std::vector<engine::FlowSolver::Completed> done;
  Picoseconds now = 0;
  std::size_t instants = 0;
  while (true) {
    solver.resolve(now);
    const Picoseconds next = solver.next_completion();
    if (next == engine::kNever) break;
    now = next;
    solver.pop_completed(now, done);
    ++instants;
  }
  const double wall = seconds_since(t0);
  std::printf(
      "flow solver: %d GPUs all-to-all, %zu flows, %zu completion instants, %llu re-solves, "
      "%llu flow re-ratings, simulated %.3f ms, wall %.3f s\n",
      ep, done.size(), instants, static_cast<unsigned long long>(solver.stats().resolves),
      static_cast<unsigned long long>(solver.stats().flows_rerated), ps_to_seconds(now) * 1e3, wall);
}

void bench_simulator(int gpus, int layers, int microbatches, int ep) {
  const Net net = make_net(gpus);
  opgraph::OpGraph g;
  for (int r = 0; r < gpus; ++r) g.add_rank(opgraph::RankInfo{132, 1, "gpu" + std::to_string(r)});
  const auto cat_compute = g.category_id("compute");
  const auto cat_ep = g.category_id("ep");
  const auto cat_dp = g.category_id("dp");
  const auto attn = g.name_id("attn");
  const auto experts = g.name_id("experts");
  const auto a2a = g.name_id("a2a");
  const double a2a_bytes_per_peer = 4096.0 * 7168 * 2 * 8 / ep / ep;  // tokens*hidden*bf16*topk spread
  std::vector<opgraph::OpId> last(static_cast<std::size_t>(gpus), -1);

  auto compute = [&](int r, opgraph::LabelId name, Picoseconds d, int layer, int mb, opgraph::Phase ph) {
    opgraph::Op o;
    o.rank = r;
    o.kind = opgraph::OpKind::compute;
    o.name = name;
    o.category = cat_compute;
    o.layer = layer;
    o.microbatch = mb;
    o.phase = ph;
    o.duration = d;
    o.launch_cost = 8'000'000;  // 8 us of host time per kernel (illustrative)
    if (last[static_cast<std::size_t>(r)] >= 0) o.deps.push_back(last[static_cast<std::size_t>(r)]);
    last[static_cast<std::size_t>(r)] = g.add_op(o);
  };
  auto all_to_all = [&](int layer, int mb, opgraph::Phase ph) {
    for (int base = 0; base < gpus; base += ep) {
      opgraph::Collective c;
      c.latency = 10'000'000;
      c.sm_count = 20;
      for (int s = base; s < base + ep; ++s)
        for (int d = base; d < base + ep; ++d)
          if (s != d) c.flows.push_back(opgraph::Flow{net.path(s, d), a2a_bytes_per_peer});
      const auto cid = g.add_collective(std::move(c));
      for (int r = base; r < base + ep; ++r) {
        opgraph::Op o;
        o.rank = r;
        o.stream = opgraph::Stream::ep_comm;
        o.kind = opgraph::OpKind::collective;
        o.name = a2a;
        o.category = cat_ep;
        o.layer = layer;
        o.microbatch = mb;
        o.phase = ph;
        o.collective = cid;
        o.launch_cost = 8'000'000;
        o.deps.push_back(last[static_cast<std::size_t>(r)]);
        last[static_cast<std::size_t>(r)] = g.add_op(o);
      }
    }
  };
  for (int mb = 0; mb < microbatches; ++mb) {
    for (int l = 0; l < layers; ++l) {
      for (int r = 0; r < gpus; ++r) compute(r, attn, 400'000'000, l, mb, opgraph::Phase::fwd);
      all_to_all(l, mb, opgraph::Phase::fwd);
      for (int r = 0; r < gpus; ++r) compute(r, experts, 900'000'000, l, mb, opgraph::Phase::fwd);
      all_to_all(l, mb, opgraph::Phase::fwd);
    }
    for (int l = layers - 1; l >= 0; --l) {
      all_to_all(l, mb, opgraph::Phase::bwd_dgrad);
      for (int r = 0; r < gpus; ++r) compute(r, experts, 1'800'000'000, l, mb, opgraph::Phase::bwd_dgrad);
      all_to_all(l, mb, opgraph::Phase::bwd_dgrad);
      for (int r = 0; r < gpus; ++r) compute(r, attn, 800'000'000, l, mb, opgraph::Phase::bwd_dgrad);
    }
  }
  {
    // A ring all-reduce's traffic as one collective: each GPU sends 2(n-1)/n of 1 GB to its neighbour.
    opgraph::Collective c;
    c.sm_count = 8;
    for (int r = 0; r < gpus; ++r)
      c.flows.push_back(opgraph::Flow{net.path(r, (r + 1) % gpus), 2.0 * (gpus - 1) / gpus * 1e9});
    const auto cid = g.add_collective(std::move(c));
    for (int r = 0; r < gpus; ++r) {
      opgraph::Op o;
      o.rank = r;
      o.stream = opgraph::Stream::dp_comm;
      o.kind = opgraph::OpKind::collective;
      o.category = cat_dp;
      o.collective = cid;
      o.deps.push_back(last[static_cast<std::size_t>(r)]);
      g.add_op(o);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  g.check_invariants(net.model);
  const double check_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto result = engine::Simulator(engine::SimOptions{false}).run(g, net.model);
  const double run_s = seconds_since(t0);
  std::printf(
      "simulator: %d GPUs, %d layers, %d micro-batches, EP%d: %zu ops, %zu collectives, %llu flows, "
      "%llu events, %llu re-solves, max %llu active flows; step %.3f ms; invariants %.3f s, run %.3f s "
      "(%.2f us/op)\n",
      gpus, layers, microbatches, ep, g.ops().size(), g.collectives().size(),
      static_cast<unsigned long long>(result.stats.flows_started), static_cast<unsigned long long>(result.stats.events),
      static_cast<unsigned long long>(result.stats.flow_resolves),
      static_cast<unsigned long long>(result.stats.max_active_flows), ps_to_seconds(result.makespan) * 1e3, check_s,
      run_s, run_s / static_cast<double>(g.ops().size()) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int gpus = argc > 1 ? std::atoi(argv[1]) : 256;
  const int layers = argc > 2 ? std::atoi(argv[2]) : 16;
  const int microbatches = argc > 3 ? std::atoi(argv[3]) : 8;
  const int ep = argc > 4 ? std::atoi(argv[4]) : 64;
  if (gpus <= 0 || layers <= 0 || microbatches <= 0 || ep <= 1 || gpus % ep != 0) {
    std::fprintf(stderr, "usage: moesim_engine_bench [gpus] [layers] [microbatches] [ep dividing gpus]\n");
    return 1;
  }
  bench_solver(ep);
  bench_simulator(gpus, layers, microbatches, ep);
  return 0;
}
