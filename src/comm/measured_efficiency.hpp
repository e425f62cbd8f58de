#pragma once
// Where the achieved-bandwidth factors come from. Every factor is derived from one published measurement
// (hardware.md §5.3/§5.4, comm-microbench.csv) by inverting this module's own cost formula: the measured time is
// size x busbw_factor / busbw (nccl-tests) or logical bytes / bandwidth (DeepEP benchmarks); the factor is what
// makes the closed form reproduce that time with the fabric's latencies. So each source point is reproduced exactly
// (tests/comm/test_measured_efficiency.cpp), and changing a latency re-derives the factors rather than breaking
// them. The NCCL measurements are here; each dispatcher with kernels of its own gives its benchmark rows
// (ExpertDispatcher::measurement), for a Blackwell NVL72 rack (`large_domain`) its GB200 EP32 rows.
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/expert_dispatcher.hpp"
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
  double link_Bps = 0;  // nominal per-GPU unidirectional bandwidth of the system measured
};

// The measurements behind each architecture's factors (blackwell_ultra uses blackwell's, but for the ring curve of
// an 8-GPU box). Blackwell's ring curve depends on the scale-up domain: an 8 x B200 box (DGX/HGX B200) takes its
// own node's in-step all-gather as SimuMax's B200 system file prices it, an 8 x B300 box its native nccl-tests
// all-gather curve (data/measurements/nccl-busbw.csv), an NVL72 rack (`large_domain`) the GB200 4-GPU tray's
// all-reduce curve [S14].
std::vector<BusBwMeasurement> ring_scale_up_measurements(kernels::Arch arch, bool large_domain = false);
std::vector<BusBwMeasurement> nvls_measurements(kernels::Arch arch);  // empty where a flat factor is used
// NCCL all-to-all inside one NVLink domain; empty where the ring curve stands in (Hopper, per [S10]).
std::vector<BusBwMeasurement> alltoall_scale_up_measurements(kernels::Arch arch);

// Time the measurement implies (nccl-tests: size x busbw_factor / busbw).
double measured_seconds(const BusBwMeasurement& m);

// Latencies and link classes only, no efficiency: NCCL Simple-protocol constants [S21] and the NVLS latency [S22].
Fabric uncalibrated_fabric(double scale_up_Bps, double scale_out_Bps);
// The efficiency point that makes collective_cost reproduce `m` under `latencies`' latencies.
EfficiencyPoint derive_point(const BusBwMeasurement& m, const Fabric& latencies);
// The same for a dispatcher benchmark row, through the byte accounting of the dispatcher it names.
DispatcherEfficiency derive_dispatcher_efficiency(const DispatchMeasurement& m, const Fabric& latencies);

// A fabric with the built-in calibrated efficiencies for `arch` and the given nominal link bandwidths: NCCL's
// curves and every registered dispatcher's factors (`large_domain`: the scale-up domain is an NVL72 rack).
Fabric builtin_fabric(kernels::Arch arch, double scale_up_Bps, double scale_out_Bps, bool large_domain = false);

}  // namespace moesim::comm
