#pragma once
// ExpertDispatcher: one MoE token dispatcher (Megatron's NCCL alltoall and allgather, DeepEP, HybridEP) behind one
// interface. A dispatcher says
//   - the bytes one rank sends per link class in the dispatch and the combine (volume) and their closed-form time
//     on a Fabric (cost),
//   - the SMs its communication kernels hold while they run,
//   - the token passes it adds to the MoE layer (permutes before the exchange, sorts into local expert order after
//     it, unpermutes after the combine) as data, which workload/layer_costs turns into kernel and host costs,
//   - the benchmark rows its achieved efficiency is derived from (measured_efficiency.hpp), if it has kernels of
//     its own.
// One file per dispatcher in dispatchers/, registered by name in dispatcher_registry.cpp.
#include <optional>
#include <string>
#include <vector>

#include "comm/expert_dispatch.hpp"
#include "comm/fabric.hpp"
#include "kernels/device_rates.hpp"

namespace moesim::comm {

// One dispatcher benchmark row of comm-microbench.csv.
struct DispatchMeasurement {
  std::string source;      // "comm-microbench.csv CM001 ..."
  std::string dispatcher;  // registered name whose byte accounting turns the row into physical bytes
  DispatchProblem problem;
  bool over_rdma = false;                    // the reported bandwidth is the RDMA (scale-out) one, else NVLink
  double dispatch_Bps = 0, combine_Bps = 0;  // logical bandwidth as reported
  double link_Bps = 0;                       // nominal bandwidth of the reported link class
};

// A memory-bound pass over token copies that a dispatcher adds to the MoE layer: one read and one write of the
// copies, in `kernels` kernels, issued from the host by `host_ops` eager PyTorch ops.
struct TokenPass {
  std::string name;  // kernel name, as the kernel cost model sees it
  int kernels = 1;
  int host_ops = 1;
};

// The layer work a dispatcher adds around its exchange; each list in issue order.
struct DispatcherLayerWork {
  // Memory-bound kernels of the router's forward: top-k and scores plus the dispatcher's preprocess of the splits
  // (one eager op each).
  int router_kernels = 0;
  // Over the routed copies before the dispatch (the pre-dispatch block) and its backward.
  std::vector<TokenPass> pre_dispatch_fwd, pre_dispatch_bwd;
  // Over the expert-side copies (after an ETP gather) between dispatch and combine (the experts' block).
  std::vector<TokenPass> expert_fwd, expert_bwd;
  // Over the routed copies after the combine (the post-combine block).
  std::vector<TokenPass> post_combine_fwd, post_combine_bwd;
  // Eager ops over the received tokens' routing metadata (top-k indices and probs, not the hidden states) after
  // the exchange, before the experts' block, each a small kernel issued from inside one framework function; and
  // whether one of them needs a device-side count on the host (a D2H sync: the host waits for the exchange).
  int post_dispatch_metadata_ops = 0;
  bool post_dispatch_sync = false;
};

// What the framework around a dispatcher enables, where it changes the layer work.
struct FrameworkFusions {
  // Megatron --enable-experimental with --moe-permute-fusion: DeepEP's fused indices-to-multihot kernel.
  bool experimental = true;
};

class ExpertDispatcher {
 public:
  virtual ~ExpertDispatcher() = default;
  // The registered name ("deepep").
  virtual std::string name() const = 0;

  // Bytes one rank sends in one phase (combine mirrors dispatch with its own element size).
  virtual DispatchVolume volume(const DispatchProblem& p, Phase phase) const = 0;
  // Time of one phase on `fabric`: latency + the slower link class (the two are pipelined). Free for a group of
  // one rank.
  DispatchCost cost(const DispatchProblem& p, Phase phase, const Fabric& fabric) const;
  // SMs its communication kernels hold. `multi_domain`: the group spans scale-up domains (RDMA); `large_domain`:
  // its domain is a multi-node NVLink rack (NVL72).
  virtual CommSms kernel_sms(kernels::Arch arch, bool multi_domain, bool large_domain = false) const = 0;

  // Element size of the forward dispatch when the experts' GEMMs run in `low_precision_gemms` (FP8 / FP4) or not;
  // the combine and both backward exchanges are BF16.
  virtual double dispatch_bytes_per_element(bool low_precision_gemms) const = 0;
  // The token passes it adds to a MoE layer with `local_experts` experts per rank, under the framework's fusions.
  virtual DispatcherLayerWork layer_work(int local_experts, const FrameworkFusions& fusions) const = 0;

  // Host time of one forward dispatch call, from the call to the exchange kernel's launch, for a dispatcher whose
  // forward exchange first agrees on the received counts with the other ranks and makes the host wait for them
  // before it allocates the outputs and launches (0: one kernel launch, as a collective). Only the forward dispatch
  // pays it: the combine and both backward exchanges reuse the forward's layout (its handle). `multi_domain`: the
  // group spans scale-up domains.
  virtual double forward_dispatch_host_s(bool /*multi_domain*/) const { return 0; }

  // The benchmark row its own efficiency on one link class is derived from; nullopt for a dispatcher that runs
  // NCCL collectives (NCCL's curves apply).
  virtual std::optional<DispatchMeasurement> measurement(kernels::Arch arch, bool over_rdma,
                                                         bool large_domain = false) const = 0;

 protected:
  // Fills `c.latency_s`, `c.scale_up_s` and `c.scale_out_s` for a group of more than one rank; `c.volume` is set.
  virtual void link_times(const DispatchProblem& p, Phase phase, const Fabric& fabric, DispatchCost& c) const = 0;
};

}  // namespace moesim::comm
