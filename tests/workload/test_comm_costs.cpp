// CommCostModel: comm/'s closed forms as engine flows, and NCCL's algorithm choice.
#include <doctest/doctest.h>

#include <algorithm>

#include "comm/measured_efficiency.hpp"
#include "workload/comm_costs.hpp"

namespace {
using namespace moesim;
using comm::Algorithm;
using comm::Collective;

double seconds(const comm::Fabric& f, Collective op, Algorithm a, comm::GroupShape g, double bytes) {
  return comm::collective_cost({op, a, g, bytes}, f).seconds;
}
}  // namespace

TEST_CASE("a collective's flows last exactly comm/'s time per link class at the port rate") {
  const workload::CommCostModel m(kernels::Arch::hopper, 450e9, 50e9, false);
  const comm::CollectiveSpec spec{Collective::all_gather, Algorithm::ring, {16, 8}, 1e9};
  const auto c = comm::collective_cost(spec, m.fabric());
  const auto d = m.collective(spec);
  CHECK(d.nvlink_bytes == doctest::Approx(c.scale_up_s * 450e9).epsilon(1e-12));
  CHECK(d.nic_bytes == doctest::Approx(c.scale_out_s * 50e9).epsilon(1e-12));
  CHECK(d.latency_s == c.latency_s);
  CHECK(d.sms == 16);
}

TEST_CASE("NCCL's choice: the fastest modelled algorithm for the op and the group") {
  const workload::CommCostModel m(kernels::Arch::hopper, 450e9, 50e9, false);
  const auto& f = m.fabric();
  auto time_of = [&](const workload::LinkDemand& d) {
    return d.latency_s + std::max(d.nvlink_bytes / 450e9, d.nic_bytes / 50e9);
  };
  // A large all-gather inside one 8-GPU domain: NVLS where it beats the ring (the H200 NVLS curve).
  const double S = 1e9;
  const double best_ag = std::min(seconds(f, Collective::all_gather, Algorithm::ring, {8, 8}, S),
                                  seconds(f, Collective::all_gather, Algorithm::nvls, {8, 8}, S));
  CHECK(time_of(m.nccl(Collective::all_gather, {8, 8}, S)) == doctest::Approx(best_ag).epsilon(1e-12));
  // Across domains NVLS is not possible; an all-reduce weighs ring against tree (ring for a large message, tree
  // for a small one).
  for (const double bytes : {S, 1e4}) {
    const double best = std::min(seconds(f, Collective::all_reduce, Algorithm::ring, {16, 8}, bytes),
                                 seconds(f, Collective::all_reduce, Algorithm::tree, {16, 8}, bytes));
    CHECK(time_of(m.nccl(Collective::all_reduce, {16, 8}, bytes)) == doctest::Approx(best).epsilon(1e-12));
  }
  // Inside one domain an all-reduce weighs ring against NVLS.
  const double best_ar = std::min(seconds(f, Collective::all_reduce, Algorithm::ring, {8, 8}, S),
                                  seconds(f, Collective::all_reduce, Algorithm::nvls, {8, 8}, S));
  CHECK(time_of(m.nccl(Collective::all_reduce, {8, 8}, S)) == doctest::Approx(best_ar).epsilon(1e-12));
  // Reduce-scatter stays on the ring.
  CHECK(time_of(m.nccl(Collective::reduce_scatter, {8, 8}, S)) ==
        doctest::Approx(seconds(f, Collective::reduce_scatter, Algorithm::ring, {8, 8}, S)).epsilon(1e-12));
}

TEST_CASE("NCCL_NVLS_ENABLE=0: without NVLS the choice is the best of ring and tree, never faster than with it") {
  const workload::CommCostModel with(kernels::Arch::hopper, 450e9, 50e9, false);
  const workload::CommCostModel without = with.without_nvls();
  const auto& f = with.fabric();
  auto time_of = [&](const workload::LinkDemand& d) {
    return d.latency_s + std::max(d.nvlink_bytes / 450e9, d.nic_bytes / 50e9);
  };
  for (const double bytes : {4.0, 1e6, 1e9}) {
    // An all-gather inside one domain: the ring (NVLS beats it at large sizes on the H200 curve).
    CHECK(time_of(without.nccl(Collective::all_gather, {8, 8}, bytes)) ==
          doctest::Approx(seconds(f, Collective::all_gather, Algorithm::ring, {8, 8}, bytes)).epsilon(1e-12));
    // An all-reduce: ring or tree.
    const double best = std::min(seconds(f, Collective::all_reduce, Algorithm::ring, {8, 8}, bytes),
                                 seconds(f, Collective::all_reduce, Algorithm::tree, {8, 8}, bytes));
    CHECK(time_of(without.nccl(Collective::all_reduce, {8, 8}, bytes)) == doctest::Approx(best).epsilon(1e-12));
    for (const auto op : {Collective::all_gather, Collective::all_reduce, Collective::reduce_scatter})
      CHECK(time_of(without.nccl(op, {8, 8}, bytes)) >= time_of(with.nccl(op, {8, 8}, bytes)) * (1 - 1e-12));
  }
  // Across domains nothing changes (NVLS is never a candidate there).
  CHECK(time_of(without.nccl(Collective::all_reduce, {16, 8}, 1e9)) ==
        doctest::Approx(time_of(with.nccl(Collective::all_reduce, {16, 8}, 1e9))).epsilon(1e-12));
}

TEST_CASE("group_shape: the smallest domain count that splits the group evenly") {
  CHECK(workload::group_shape(32, 4).ranks_per_domain == 8);
  CHECK(workload::group_shape(6, 4).domains() == 6);  // 4 and 5 do not divide 6
  CHECK(workload::group_shape(8, 1).single_domain());
  CHECK(workload::group_shape(1, 3).ranks == 1);
}
