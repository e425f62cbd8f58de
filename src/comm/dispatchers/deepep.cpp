// DeepEP (deepseek-ai/DeepEP): hierarchical dedup dispatch (dedup_dispatcher.hpp); FP8 dispatch with one FP32
// scale per 128 channels when the experts' GEMMs run FP8. Efficiencies from its own benchmark rows.
#include "comm/dispatchers/builtin.hpp"
#include "comm/dispatchers/dedup_dispatcher.hpp"

namespace moesim::comm::dispatchers {
namespace {

using kernels::Arch;

class DeepEp final : public DedupDispatcher {
 public:
  std::string name() const override { return "deepep"; }

  double dispatch_bytes_per_element(bool low_precision_gemms) const override {
    return low_precision_gemms ? 1.0 + 4.0 / 128.0 : 2.0;
  }

  // Megatron's DeepEP manager turns the received top-k indices and probs into the local experts' multihot map
  // before the permute (token_dispatcher.py get_permuted_hidden_states_by_experts @1e057005). Fused (experimental
  // features and permute fusion on): one Triton kernel, the first of the shared expert_permute pass's two.
  // Unfused (_indices_to_multihot): zeros (map), zeros (probs), indices != -1, indices[mask], arange,
  // mask.sum(dim=1), repeat_interleave, the map's index_put, probs[mask], the probs' index_put and .bool(): 11 eager
  // ops. indices[mask], probs[mask] and repeat_interleave with a tensor of repeats size their outputs from device
  // data, so the host waits there for the dispatch; the three waits come back to back, one is modelled.
  DispatcherLayerWork layer_work(int local_experts, const FrameworkFusions& fusions) const override {
    DispatcherLayerWork w = DedupDispatcher::layer_work(local_experts, fusions);
    if (!fusions.experimental) {
      w.expert_fwd.front() = {"expert_permute", 1, 1};  // the permute alone
      w.post_dispatch_metadata_ops = 11;
      w.post_dispatch_sync = true;
    }
    return w;
  }

  // Megatron's forward dispatch calls Buffer.get_dispatch_layout and then Buffer.dispatch without a handle
  // (fused_a2a.py FusedDispatch.forward @1e057005:70-113; the same shape in later releases): DeepEP's non-cached
  // path launches notify_dispatch, which exchanges the per-rank and per-expert counts, spins the host until they
  // arrive (csrc/deep_ep.cpp @aae9fa9 intranode_dispatch, the `while (true)` wait on moe_recv_counter), then
  // allocates the received-side tensors and launches the exchange. The combine and the backward exchanges reuse
  // the handle (cached: no count exchange, no wait). DeepEP's benchmarks, which the bandwidths below come from, time
  // the cached dispatch (tests/test_intranode.py @aae9fa9:158-159 passes the handle), so this path is in none of
  // them. Measured: one non-cached intranode dispatch of 8 tokens on 8 H20, called after a device sync so the host
  // starts idle, takes 0.375-0.384 ms (per-rank means over consecutive calls; deepseek-ai/DeepEP issue #138,
  // 2025-04-27, whose re-run with CUDA events around the call, 2025-04-28, reports almost no difference). At 8
  // tokens there are no bytes to speak of, so that is the call's host path: launches, the count exchange, the wait
  // and the allocations. Assumptions: the same on the H100 hosts and
  // over RDMA (whose count exchange also crosses the NIC: longer, not measured).
  double forward_dispatch_host_s(bool) const override { return 0.38e-3; }

  // The SMs its kernels hold as training runs them, not as its benchmarks were configured (12 over RDMA, 24 on
  // NVLink: comm-microbench.csv CM011/CM013, CM015, CM022-CM024, whose bandwidths measurement() keeps). Megatron
  // calls Buffer.dispatch / combine without a config (fused_a2a.py @0d77a93b7b:98-109, the ModelZoo era), so DeepEP
  // takes get_dispatch_config / get_combine_config, every rank count at Buffer.num_sms (deep_ep/buffer.py @aae9fa9:30,
  // 165-174, 192-201), 20 unless set; later Megatron keeps 20 as its default (transformer_config.py
  // moe_deepep_num_sms, "historical default 20"), and no bundled recipe sets another count.
  CommSms kernel_sms(Arch, bool, bool) const override {
    return {20, "deep_ep/buffer.py Buffer.num_sms = 20, used by Megatron's DeepEP calls (no config passed)"};
  }

  std::optional<DispatchMeasurement> measurement(Arch arch, bool over_rdma, bool large_domain) const override {
    const bool hopper = arch == Arch::hopper;
    const std::string csv = "comm-microbench.csv ";
    const std::string d = name();
    // Multi-node NVLink (an NVL72 rack): the EP group spans compute trays over NVSwitch, where DeepEP reaches less
    // than inside an 8-GPU box. In-training figure of the GB200 DeepSeek-V3 runs (ladder step 3); assumption:
    // BF16 dispatch (the CSV's "BF16?"), 4096 tokens per rank (MBS1 x 4096), 256 experts top-8 routed uniformly
    // (force-balanced).
    if (large_domain && !hopper && !over_rdma) {
      DispatchProblem p = benchmark_problem(32, 32, 4096, 256, 1, 1);
      p.dispatch_bytes_per_element = 2;
      return DispatchMeasurement{
          csv + "CM029 DeepEP (community PR #218) GB200 MNNVL EP32, 24 SMs: 400/190 GB/s in DeepSeek-V3 training",
          d,
          p,
          false,
          400 * kGBps,
          190 * kGBps,
          kNvlink5};
    }
    // V1 rows use DeepSeek-V3 routing: 256 experts in 8 groups, top-4 groups, top-8 (the CSV notes).
    if (hopper && !over_rdma)
      return DispatchMeasurement{csv + "CM001 DeepEP V1 H800 intranode EP8: 153/158 GB/s [S8]",
                                 d,
                                 benchmark_problem(8, 8, 4096, 256, 8, 4),
                                 false,
                                 153 * kGBps,
                                 158 * kGBps,
                                 kNvlink4H800};
    if (hopper)
      return DispatchMeasurement{csv + "CM004 DeepEP V1 H800 internode EP64: 51/50 GB/s RDMA [S8]",
                                 d,
                                 benchmark_problem(64, 8, 4096, 256, 8, 4),
                                 true,
                                 51 * kGBps,
                                 50 * kGBps,
                                 kCx7};
    // V2 rows: 8K tokens, top-8; assumption: 256 experts (V3-like) routed uniformly (the README gives no routing).
    if (!over_rdma)
      return DispatchMeasurement{csv + "CM015 DeepEP V2 SM100 NVLink EP8, 24 SMs: 643/675 GB/s [S8]",
                                 d,
                                 benchmark_problem(8, 8, 8192, 256, 1, 1),
                                 false,
                                 643 * kGBps,
                                 675 * kGBps,
                                 kNvlink5};
    return DispatchMeasurement{csv + "CM013 DeepEP V2 SM100 CX7 EP8x2: 90/91 GB/s [S8]",
                               d,
                               benchmark_problem(16, 8, 8192, 256, 1, 1),
                               true,
                               90 * kGBps,
                               91 * kGBps,
                               kCx7};
  }
};

}  // namespace

std::unique_ptr<ExpertDispatcher> make_deepep() { return std::make_unique<DeepEp>(); }

}  // namespace moesim::comm::dispatchers
