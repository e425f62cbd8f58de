// Megatron's alltoall dispatcher: one NCCL all-to-all of one copy per (token, expert) pair, T k h B per rank, of
// which (G-1)/EP stays in the scale-up domain and (EP-G)/EP crosses it (copies to the rank itself are free).
#include <algorithm>

#include "comm/dispatchers/builtin.hpp"
#include "comm/dispatchers/nccl_permute_dispatcher.hpp"

namespace moesim::comm::dispatchers {
namespace {

class Alltoall final : public NcclPermuteDispatcher {
 public:
  std::string name() const override { return "alltoall"; }

  DispatchVolume volume(const DispatchProblem& p, Phase phase) const override {
    check_group_shape(p.ep);
    const double copies = token_rows_bytes(p, phase) * p.routing.top_k;
    const double EP = p.ep.ranks, G = std::min(p.ep.ranks_per_domain, p.ep.ranks);
    DispatchVolume v;
    v.scale_up = copies * (G - 1) / EP;
    v.scale_out = copies * (EP - G) / EP;
    v.logical_scale_up = copies * G / EP;
    v.logical_scale_out = v.scale_out;
    return v;
  }

 protected:
  void link_times(const DispatchProblem& p, Phase phase, const Fabric& f, DispatchCost& c) const override {
    const double bytes = token_rows_bytes(p, phase) * p.routing.top_k;
    const auto cc = collective_cost({Collective::all_to_all, Algorithm::direct, p.ep, bytes}, f);
    c.latency_s = cc.latency_s, c.scale_up_s = cc.scale_up_s, c.scale_out_s = cc.scale_out_s;
  }
};

}  // namespace

std::unique_ptr<ExpertDispatcher> make_alltoall() { return std::make_unique<Alltoall>(); }

}  // namespace moesim::comm::dispatchers
