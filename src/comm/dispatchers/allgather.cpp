// Megatron's allgather dispatcher: every rank all-gathers the EP group's T h B tokens over a ring (the combine is
// the reduce-scatter of the same size).
#include "comm/dispatchers/builtin.hpp"
#include "comm/dispatchers/nccl_permute_dispatcher.hpp"

namespace moesim::comm::dispatchers {
namespace {

Collective collective_of(Phase phase) {
  return phase == Phase::dispatch ? Collective::all_gather : Collective::reduce_scatter;
}

class Allgather final : public NcclPermuteDispatcher {
 public:
  std::string name() const override { return "allgather"; }

  DispatchVolume volume(const DispatchProblem& p, Phase phase) const override {
    check_group_shape(p.ep);
    const double EP = p.ep.ranks;
    const WireBytes w = wire_bytes({collective_of(phase), Algorithm::ring, p.ep, token_rows_bytes(p, phase) * EP});
    DispatchVolume v;
    v.scale_up = v.logical_scale_up = w.scale_up;
    v.scale_out = v.logical_scale_out = w.scale_out;
    return v;
  }

 protected:
  void link_times(const DispatchProblem& p, Phase phase, const Fabric& f, DispatchCost& c) const override {
    const CollectiveSpec spec{collective_of(phase), Algorithm::ring, p.ep, token_rows_bytes(p, phase) * p.ep.ranks};
    const auto cc = collective_cost(spec, f);
    c.latency_s = cc.latency_s, c.scale_up_s = cc.scale_up_s, c.scale_out_s = cc.scale_out_s;
  }
};

}  // namespace

std::unique_ptr<ExpertDispatcher> make_allgather() { return std::make_unique<Allgather>(); }

}  // namespace moesim::comm::dispatchers
