#pragma once
// What a closed-form collective cost needs to know of the network a group runs on: one scale-up link class
// (NVLink, per GPU, one direction) and one scale-out class (the GPU's NIC, one direction), NCCL's fixed latencies,
// and achieved-bandwidth factors measured on real systems. Filled by the caller (from the topology catalog later);
// builtin_fabric() gives the calibrated defaults of data/reference/ (see measured_efficiency.hpp).
#include <map>
#include <string>
#include <vector>

namespace moesim::comm {

struct LinkClass {
  double bandwidth_Bps = 0;   // per GPU, one direction (NVLink4 450e9, NVLink5 900e9, CX-7 50e9)
  double step_latency_s = 0;  // latency of one step of a collective over this class (NCCL hwLat, Simple)
};

// Achieved fraction of the nominal link bandwidth as a function of message size: piecewise linear in log(bytes)
// between calibration points, flat beyond the first and last. Default-constructed: 1.0 everywhere (ideal link).
struct EfficiencyPoint {
  double message_bytes = 0;
  double efficiency = 0;
  std::string source;  // the measurement it was derived from
};
class EfficiencyCurve {
 public:
  EfficiencyCurve() = default;
  explicit EfficiencyCurve(std::vector<EfficiencyPoint> points);  // sorted here; InternalError if empty or <= 0
  double at(double message_bytes) const;
  const std::vector<EfficiencyPoint>& points() const { return points_; }

 private:
  std::vector<EfficiencyPoint> points_;
};

// Achieved fraction of nominal link bandwidth for one dispatcher on one link class (physical bytes, see
// expert_dispatch.hpp), per phase.
struct DispatcherEfficiency {
  double dispatch = 1.0;
  double combine = 1.0;
  std::string source;
};
// A dispatcher's own factors on both link classes (those with kernels of their own: DeepEP, HybridEP).
struct DispatcherLinkEfficiency {
  DispatcherEfficiency scale_up, scale_out;
};

struct CommEfficiency {
  EfficiencyCurve ring_scale_up;      // ring AG/RS/AR, send/recv inside a scale-up domain
  EfficiencyCurve ring_scale_out;     // the same over NICs
  EfficiencyCurve nvls;               // NVLS all-reduce/all-gather, algbw / link bandwidth
  EfficiencyCurve alltoall_scale_up;  // NCCL all-to-all
  EfficiencyCurve alltoall_scale_out;
  // By registered dispatcher name (expert_dispatcher.hpp). Keyed by name so that a new dispatcher brings its
  // factors without a new field here.
  std::map<std::string, DispatcherLinkEfficiency> dispatchers;
  // `name`'s factors; ideal (1.0) for a dispatcher without an entry.
  const DispatcherLinkEfficiency& dispatcher(const std::string& name) const;
};

struct Fabric {
  LinkClass scale_up;
  LinkClass scale_out;
  double base_latency_s = 0;  // fixed cost of one collective call (NCCL baseLat)
  double nvls_latency_s = 0;  // whole-call latency of an NVLS collective (replaces base + steps)
  CommEfficiency efficiency;  // default: ideal links
};

// Members of a process group and how they sit on scale-up domains (NVLink domains: an HGX node, an NVL72 rack).
// ranks_per_domain = group members per domain (>= ranks means one domain); ranks must be a multiple of it.
struct GroupShape {
  int ranks = 1;
  int ranks_per_domain = 1;
  int domains() const;
  bool single_domain() const { return domains() == 1; }
};
// InternalError unless ranks >= 1, ranks_per_domain >= 1 and the group splits evenly over domains.
void check_group_shape(const GroupShape& g);

}  // namespace moesim::comm
