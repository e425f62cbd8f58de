#pragma once
// Megatron's NCCL-based token dispatchers (alltoall, allgather): an NCCL collective over the EP group, with the
// token permutation around it done by eager PyTorch ops, NCCL's SMs, and NCCL's own efficiency curves (no factor
// of their own). Each subclass gives its volume and its collective.
#include <optional>

#include "comm/expert_dispatcher.hpp"

namespace moesim::comm::dispatchers {

class NcclPermuteDispatcher : public ExpertDispatcher {
 public:
  CommSms kernel_sms(kernels::Arch arch, bool multi_domain, bool large_domain) const override;
  double dispatch_bytes_per_element(bool low_precision_gemms) const override;
  DispatcherLayerWork layer_work(int local_experts, const FrameworkFusions& fusions) const override;
  std::optional<DispatchMeasurement> measurement(kernels::Arch arch, bool over_rdma, bool large_domain) const override;
};

}  // namespace moesim::comm::dispatchers
