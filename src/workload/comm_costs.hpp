#pragma once
// The step builder's bridge to src/comm: every communication op of a step is costed by comm/'s calibrated closed
// forms (one source of truth for NCCL, DeepEP and HybridEP efficiencies, latencies and SM use), then handed to the
// engine as flows on the rank's NVLink port and NIC. A flow's size is its link class's time from comm/ times that
// link's capacity ("effective bytes" = wire bytes / achieved efficiency): alone on its link it lasts exactly what
// comm/ predicts, and concurrent flows share the link max-min fairly in the engine.
#include "comm/collectives.hpp"
#include "comm/dispatcher_registry.hpp"
#include "comm/fabric.hpp"
#include "kernels/device_rates.hpp"

namespace moesim::workload {

struct LinkDemand {
  double nvlink_bytes = 0;  // effective bytes on the GPU's scale-up port
  double nic_bytes = 0;     // effective bytes on the GPU's NIC(s)
  double latency_s = 0;     // fixed part (NCCL base + step latencies, or the dispatcher's handshake)
  int sms = 0;              // SMs the communication kernels hold while they run
  double host_s = 0;        // host time to issue the call, where more than one kernel launch (DeepEP's dispatch)
  bool empty() const { return nvlink_bytes <= 0 && nic_bytes <= 0; }
};

class CommCostModel {
 public:
  // `nvlink_Bps` and `nic_Bps`: per GPU, one direction (all NICs of the GPU together); the same capacities the
  // step's network links get.
  // `large_domain`: the system's NVLink domain is a multi-node rack (> 8 GPUs, NVL72): EP libraries are then
  // calibrated on their GB200 MNNVL measurements (src/comm/measured_efficiency.hpp).
  CommCostModel(kernels::Arch arch, double nvlink_Bps, double nic_Bps, bool large_domain);

  // An NCCL collective (ring / tree / NVLS / direct all-to-all / send-recv) of comm::CollectiveSpec's size convention.
  LinkDemand collective(const comm::CollectiveSpec& spec) const;
  // NCCL's choice for `op` over `group`: the fastest of the algorithms comm/ models for it (ring always; tree for
  // all-reduce; NVLS for all-reduce and all-gather inside one NVSwitch domain unless without_nvls), as NCCL's tuner picks the
  // algorithm with the lowest predicted time (tuning.cc [S21]). `bytes` in comm::CollectiveSpec's convention.
  LinkDemand nccl(comm::Collective op, const comm::GroupShape& group, double bytes) const;
  // One phase of an EP token exchange with `d`'s byte accounting, measured efficiency and SMs.
  LinkDemand dispatch(const comm::ExpertDispatcher& d, const comm::DispatchProblem& p, comm::Phase phase) const;

  // How long `d` lasts alone on its links (its latency, then the slower link class): the closed form's time.
  double seconds(const LinkDemand& d) const;

  const comm::Fabric& fabric() const { return fabric_; }
  // The same model with NVLS unavailable to nccl() (NCCL_NVLS_ENABLE=0: NCCL's tuner then never offers it).
  CommCostModel without_nvls() const {
    CommCostModel c = *this;
    c.nvls_ = false;
    return c;
  }

 private:
  LinkDemand demand(double latency_s, double scale_up_s, double scale_out_s, int sms) const;
  kernels::Arch arch_;
  bool large_domain_;
  bool nvls_ = true;
  comm::Fabric fabric_;
};

// A group of `ranks` members spread over `domains` scale-up domains, as comm::GroupShape (which needs equal
// shares): the smallest domain count >= `domains` that divides `ranks`.
comm::GroupShape group_shape(int ranks, int domains);

}  // namespace moesim::workload
