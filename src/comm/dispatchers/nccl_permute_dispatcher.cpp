#include "comm/dispatchers/nccl_permute_dispatcher.hpp"

namespace moesim::comm::dispatchers {

CommSms NcclPermuteDispatcher::kernel_sms(kernels::Arch, bool, bool) const { return nccl_kernel_sms(); }

double NcclPermuteDispatcher::dispatch_bytes_per_element(bool) const { return 2.0; }  // BF16

DispatcherLayerWork NcclPermuteDispatcher::layer_work(int local_experts, const FrameworkFusions&) const {
  // Kernel counts (moe-modeling.md §7, GB200 blog §2.1.4/§2.2.1): the fused router's 29 memory-bound kernels plus
  // the dispatcher's preprocess (~8 small kernels computing the splits). Token copies: permute 1 (4 fused
  // kernels) before the exchange, the chunk sort into local expert order (2) after it, its inverse (2) before the
  // combine and unpermute 1 (1) after it. The sorts exist only with more than one local expert (Megatron
  // token_dispatcher.py, moe_utils.py). The allgather dispatcher is costed with the same passes.
  DispatcherLayerWork w;
  w.router_kernels = 29 + 8;
  w.pre_dispatch_fwd = {{"permute", 4, 4}};
  w.pre_dispatch_bwd = {{"permute_bwd", 1, 1}};
  if (local_experts > 1) {
    w.expert_fwd = {{"expert_permute", 2, 2}, {"expert_unpermute", 2, 2}};
    w.expert_bwd = {{"expert_unpermute_bwd", 2, 2}, {"expert_permute_bwd", 2, 2}};
  }
  w.post_combine_fwd = {{"unpermute", 1, 1}};
  w.post_combine_bwd = {{"unpermute_bwd", 1, 1}};
  return w;
}

std::optional<DispatchMeasurement> NcclPermuteDispatcher::measurement(kernels::Arch, bool, bool) const {
  return std::nullopt;
}

}  // namespace moesim::comm::dispatchers
