#pragma once
// Where the achieved-bandwidth factors come from. Every factor is derived from one published measurement
// (hardware.md §5.3/§5.4, comm-microbench.csv) by inverting this module's own cost formula: the measured time is
// size x busbw_factor / busbw (nccl-tests) or logical bytes / bandwidth (DeepEP benchmarks); the factor is what
// makes the closed form reproduce that time with the fabric's latencies. So each source point is reproduced exactly
// (tests/comm/test_calibration.cpp), and changing a latency re-derives the factors rather than breaking them.
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/expert_dispatch.hpp"
#include "comm/fabric.hpp"
#include "kernels/device_rates.hpp"

namespace moesim::comm {

// One nccl-tests result.
struct BusBwMeasurement {
  std::string source;
  Collective op = Collective::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  int ranks = 8;
  double message_bytes = 0;  // nccl-tests "size"
  double busbw_Bps = 0;
  double link_Bps = 0;       // nominal per-GPU unidirectional bandwidth of the system measured
};

// One dispatcher benchmark row of comm-microbench.csv.
struct DispatchMeasurement {
  std::string source;  // "comm-microbench.csv CM001 ..."
  Dispatcher dispatcher = Dispatcher::deepep;
  DispatchProblem problem;
  bool over_rdma = false;            // the reported bandwidth is the RDMA (scale-out) one, else NVLink
  double dispatch_Bps = 0, combine_Bps = 0;  // logical bandwidth as reported
  double link_Bps = 0;               // nominal bandwidth of the reported link class
};

// The measurements behind each architecture's factors (blackwell_ultra uses blackwell's).
std::vector<BusBwMeasurement> ring_scale_up_measurements(kernels::Arch arch);
std::vector<BusBwMeasurement> nvls_measurements(kernels::Arch arch);  // empty where a flat factor is used
// NCCL all-to-all inside one NVLink domain; empty where the ring curve stands in (Hopper, per [S10]).
std::vector<BusBwMeasurement> alltoall_scale_up_measurements(kernels::Arch arch);
// `large_domain`: the scale-up domain is a multi-node NVLink rack (NVL72) rather than an 8-GPU box; Blackwell
// NVLink rows then come from EP32 measurements on GB200.
DispatchMeasurement dispatcher_measurement(Dispatcher d, kernels::Arch arch, bool over_rdma, bool large_domain = false);

// Time the measurement implies (nccl-tests: size x busbw_factor / busbw).
double measured_seconds(const BusBwMeasurement& m);

// Latencies and link classes only, no efficiency: NCCL Simple-protocol constants [S21] and the NVLS latency [S22].
Fabric uncalibrated_fabric(double scale_up_Bps, double scale_out_Bps);
// The efficiency point that makes collective_cost reproduce `m` under `latencies`' latencies.
EfficiencyPoint derive_point(const BusBwMeasurement& m, const Fabric& latencies);
DispatcherEfficiency derive_dispatcher_efficiency(const DispatchMeasurement& m, const Fabric& latencies);

// A fabric with the built-in calibrated efficiencies for `arch` and the given nominal link bandwidths.
Fabric builtin_fabric(kernels::Arch arch, double scale_up_Bps, double scale_out_Bps, bool large_domain = false);

}  // namespace moesim::comm
