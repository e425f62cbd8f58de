// NVIDIA HybridEP (Megatron's flex dispatcher backend): hierarchical dedup dispatch (dedup_dispatcher.hpp), BF16
// dispatch as NVIDIA's HybridEP recipes run it. Efficiencies from its own benchmark rows.
#include "comm/dispatcher_registry.hpp"
#include "comm/dispatchers/builtin.hpp"
#include "comm/dispatchers/dedup_dispatcher.hpp"

namespace moesim::comm::dispatchers {
namespace {

using kernels::Arch;

class HybridEp final : public DedupDispatcher {
 public:
  std::string name() const override { return "hybridep"; }

  double dispatch_bytes_per_element(bool) const override { return 2.0; }

  CommSms kernel_sms(Arch, bool multi_domain, bool large_domain) const override {
    if (large_domain && !multi_domain)
      return {32,
              "comm-microbench.csv CM020: HybridEP on GB200 MNNVL EP32 with 32 SMs (the GB200 recipes' "
              "--moe-hybridep-num-sms 32) [S35]"};
    if (multi_domain) return {8, "comm-microbench.csv CM025-CM027: HybridEP H100 over IB with 8 SMs [S35]"};
    return {16, "comm-microbench.csv CM016, CM019, CM028: HybridEP on NVLink with 16 SMs [S35]"};
  }

  std::optional<DispatchMeasurement> measurement(Arch arch, bool over_rdma, bool large_domain) const override {
    const bool hopper = arch == Arch::hopper;
    const std::string csv = "comm-microbench.csv ";
    const std::string d = name();
    // Multi-node NVLink (an NVL72 rack), measured at EP32 on GB200 as the GB200 recipes run: BF16 dispatch (the
    // row's notes: 484.22 GB/s), as NVIDIA's HybridEP recipes dispatch; 8 local experts.
    if (large_domain && !hopper && !over_rdma) {
      DispatchProblem p = benchmark_problem(32, 32, 4096, 256, 1, 1);
      p.dispatch_bytes_per_element = 2;
      return DispatchMeasurement{
          csv + "CM020 HybridEP GB200 MNNVL EP32, 32 SMs: BF16 dispatch 484.22 / combine 464.54 GB/s [S35]",
          d,
          p,
          false,
          484.22 * kGBps,
          464.54 * kGBps,
          kNvlink5};
    }
    // HybridEP rows: 4096 tokens, 8 local experts per rank, uniform random routing (CSV notes); assumption: the
    // "algorithm bandwidth" uses DeepEP's logical byte accounting.
    if (over_rdma)  // H100 IB rows; assumption: 8 GPUs per node; also used for Blackwell (no Blackwell IB row)
      return DispatchMeasurement{csv + "CM025 HybridEP H100 IB EP16, 8 SMs: 44.87/56.96 GB/s [S35]",
                                 d,
                                 benchmark_problem(16, 8, 4096, 128, 1, 1),
                                 true,
                                 44.87 * kGBps,
                                 56.96 * kGBps,
                                 kCx7};
    if (hopper)  // assumption: no Hopper NVLink HybridEP row; DeepEP V1's H800 row stands in
      return expert_dispatcher("deepep").measurement(arch, false, false);
    // An 8-GPU NVLink box: the B200 row.
    return DispatchMeasurement{csv + "CM028 HybridEP B200 NVL8 EP8, 16 SMs: 409.71/530.86 GB/s [S35]",
                               d,
                               benchmark_problem(8, 8, 4096, 64, 1, 1),
                               false,
                               409.71 * kGBps,
                               530.86 * kGBps,
                               kNvlink5};
  }
};

}  // namespace

std::unique_ptr<ExpertDispatcher> make_hybridep() { return std::make_unique<HybridEp>(); }

}  // namespace moesim::comm::dispatchers
