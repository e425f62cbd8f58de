#include "workload/comm_costs.hpp"

#include <algorithm>
#include <vector>

#include "comm/measured_efficiency.hpp"

namespace moesim::workload {

CommCostModel::CommCostModel(kernels::Arch arch, double nvlink_Bps, double nic_Bps, bool large_domain)
    : arch_(arch),
      large_domain_(large_domain),
      fabric_(comm::builtin_fabric(arch, nvlink_Bps, nic_Bps, large_domain)) {}

LinkDemand CommCostModel::demand(double latency_s, double scale_up_s, double scale_out_s, int sms) const {
  LinkDemand d;
  d.latency_s = latency_s;
  d.nvlink_bytes = scale_up_s * fabric_.scale_up.bandwidth_Bps;
  d.nic_bytes = scale_out_s * fabric_.scale_out.bandwidth_Bps;
  d.sms = sms;
  return d;
}

double CommCostModel::seconds(const LinkDemand& d) const {
  const double up = d.nvlink_bytes > 0 ? d.nvlink_bytes / fabric_.scale_up.bandwidth_Bps : 0.0;
  const double out = d.nic_bytes > 0 ? d.nic_bytes / fabric_.scale_out.bandwidth_Bps : 0.0;
  return d.latency_s + std::max(up, out);
}

LinkDemand CommCostModel::collective(const comm::CollectiveSpec& spec) const {
  const auto c = comm::collective_cost(spec, fabric_);
  const int sms = comm::nccl_kernel_sms().sms;
  return demand(c.latency_s, c.scale_up_s, c.scale_out_s, sms);
}

LinkDemand CommCostModel::nccl(comm::Collective op, const comm::GroupShape& group, double bytes) const {
  std::vector<comm::Algorithm> candidates{comm::Algorithm::ring};
  if (op == comm::Collective::all_reduce) candidates.push_back(comm::Algorithm::tree);
  if (nvls_ && (op == comm::Collective::all_reduce || op == comm::Collective::all_gather) && group.single_domain())
    candidates.push_back(comm::Algorithm::nvls);
  comm::CollectiveSpec best{op, comm::Algorithm::ring, group, bytes};
  double best_s = comm::collective_cost(best, fabric_).seconds;
  for (const auto a : candidates) {
    const comm::CollectiveSpec spec{op, a, group, bytes};
    const double t = comm::collective_cost(spec, fabric_).seconds;
    if (t < best_s) best = spec, best_s = t;  // ties keep the earlier (ring first)
  }
  return collective(best);
}

LinkDemand CommCostModel::dispatch(const comm::ExpertDispatcher& d, const comm::DispatchProblem& p,
                                   comm::Phase phase) const {
  const auto c = d.cost(p, phase, fabric_);
  const int sms = d.kernel_sms(arch_, !p.ep.single_domain(), large_domain_).sms;
  return demand(c.latency_s, c.scale_up_s, c.scale_out_s, sms);
}

comm::GroupShape group_shape(int ranks, int domains) {
  ranks = std::max(1, ranks);
  int n = std::clamp(domains, 1, ranks);
  while (ranks % n != 0) ++n;
  return {ranks, ranks / n};
}

}  // namespace moesim::workload
