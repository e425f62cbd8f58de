#include "comm/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace moesim::comm {
namespace {

// Latency, and the time each link class needs for its share of the bytes when it runs alone. The bandwidth term
// is the larger of the two: the classes run concurrently.
struct Terms {
  double latency = 0, up = 0, out = 0;
  double bandwidth() const { return std::max(up, out); }
};

// A ring of `bytes` per rank. Across N domains, N of the n hops cross; NCCL runs several rings (channels), each
// crossing through different GPUs, so the crossings spread over every member's NIC: each rank's NIC carries the
// crossing share N/n of the ring bytes (wire_bytes' split) while the rest moves over NVLink, concurrently.
// (A single flat ring would be NIC-bound on all of its bytes; 2-node H100 all-reduce reaches ~440 GB/s busbw
// [S17], far above one 50 GB/s NIC, so NCCL does not behave like that.)
Terms ring_terms(const GroupShape& g, double bytes, double size, double latency, const Fabric& f) {
  const double up = f.scale_up.bandwidth_Bps * f.efficiency.ring_scale_up.at(size);
  if (g.single_domain()) return {latency, bytes / up, 0};
  const double out = f.scale_out.bandwidth_Bps * f.efficiency.ring_scale_out.at(size);
  const double cross = static_cast<double>(g.domains()) / g.ranks;
  return {latency, bytes * (1 - cross) / up, bytes * cross / out};
}

// One pass of a ring over n ranks on N domains: n-1 steps, N-1 of them across domains.
double ring_pass_latency(const GroupShape& g, const Fabric& f) {
  const int n = g.ranks, N = g.domains();
  return (n - N) * f.scale_up.step_latency_s + (N - 1) * f.scale_out.step_latency_s;
}

[[noreturn]] void unsupported(const CollectiveSpec& s, const char* why) {
  throw InfeasibleError(to_string(s.op) + " with algorithm " + to_string(s.algorithm) + ": " + why);
}

Terms terms(const CollectiveSpec& s, const Fabric& f) {
  const GroupShape& g = s.group;
  const int n = g.ranks, N = g.domains();
  const double S = s.bytes;
  switch (s.op) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
      if (s.algorithm == Algorithm::ring)
        return ring_terms(g, (n - 1.0) / n * S, S, f.base_latency_s + ring_pass_latency(g, f), f);
      if (s.algorithm == Algorithm::nvls) {
        if (!g.single_domain()) unsupported(s, "NVLS needs the whole group in one NVSwitch domain");
        if (s.op == Collective::reduce_scatter) unsupported(s, "NVLS reduce-scatter is not modelled");
        return {f.nvls_latency_s, (n - 1.0) / n * S / (f.scale_up.bandwidth_Bps * f.efficiency.nvls.at(S)), 0};
      }
      unsupported(s, "use ring or nvls");
    case Collective::all_reduce:
      if (s.algorithm == Algorithm::ring)
        return ring_terms(g, 2 * (n - 1.0) / n * S, S, f.base_latency_s + 2 * ring_pass_latency(g, f), f);
      if (s.algorithm == Algorithm::tree) {
        const int per_domain = std::min(g.ranks_per_domain, n);
        // Each rank sends S up the tree (reduce) and S down (broadcast): 2S per link class, NCCL's own tree
        // all-reduce algbw = busbw x 0.5 (tuning.cc [S21]).
        const double up = f.scale_up.bandwidth_Bps * f.efficiency.ring_scale_up.at(S);
        Terms t{0, 2 * S / up, 0};
        double lat = (per_domain - 1) * f.scale_up.step_latency_s;
        if (N > 1) {
          t.out = 2 * S / (per_domain * f.scale_out.bandwidth_Bps * f.efficiency.ring_scale_out.at(S));
          lat += std::ceil(std::log2(static_cast<double>(N))) * f.scale_out.step_latency_s;
        }
        t.latency = f.base_latency_s + 2 * lat;
        return t;
      }
      if (s.algorithm == Algorithm::nvls) {
        if (!g.single_domain()) unsupported(s, "NVLS needs the whole group in one NVSwitch domain");
        return {f.nvls_latency_s, S / (f.scale_up.bandwidth_Bps * f.efficiency.nvls.at(S)), 0};
      }
      unsupported(s, "use ring, tree or nvls");
    case Collective::all_to_all: {
      if (s.algorithm != Algorithm::direct) unsupported(s, "all-to-all is direct");
      const WireBytes w = wire_bytes(s);
      const double up = w.scale_up / (f.scale_up.bandwidth_Bps * f.efficiency.alltoall_scale_up.at(S));
      const double out =
          w.scale_out > 0 ? w.scale_out / (f.scale_out.bandwidth_Bps * f.efficiency.alltoall_scale_out.at(S)) : 0;
      return {f.base_latency_s + (N > 1 ? f.scale_out.step_latency_s : f.scale_up.step_latency_s), up, out};
    }
    case Collective::send_recv: {
      if (s.algorithm != Algorithm::direct) unsupported(s, "send/recv is direct");
      if (g.single_domain())
        return {f.scale_up.step_latency_s, S / (f.scale_up.bandwidth_Bps * f.efficiency.ring_scale_up.at(S)), 0};
      return {f.scale_out.step_latency_s, 0, S / (f.scale_out.bandwidth_Bps * f.efficiency.ring_scale_out.at(S))};
    }
  }
  throw InternalError("collective_cost: bad collective");
}

}  // namespace

std::string to_string(Collective c) {
  switch (c) {
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_to_all: return "all_to_all";
    case Collective::send_recv: return "send_recv";
  }
  return "?";
}

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::nvls: return "nvls";
    case Algorithm::direct: return "direct";
  }
  return "?";
}

double busbw_factor(Collective op, int n) {
  switch (op) {
    case Collective::all_reduce: return 2.0 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1.0) / n;
    case Collective::send_recv: return 1.0;
  }
  return 1.0;
}

WireBytes wire_bytes(const CollectiveSpec& s) {
  check_group_shape(s.group);
  const GroupShape& g = s.group;
  const double n = g.ranks, N = g.domains(), S = s.bytes;
  const double per_domain = std::min<double>(g.ranks_per_domain, n);
  // Share of a ring's hops that cross domains: N of n when the ring spans N > 1 domains.
  const double cross = N > 1 ? N / n : 0.0;
  auto split = [&](double total, double out_share) { return WireBytes{total * (1 - out_share), total * out_share}; };
  switch (s.op) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
      if (s.algorithm == Algorithm::nvls) return {S / n, 0};
      return split((n - 1) / n * S, cross);
    case Collective::all_reduce:
      if (s.algorithm == Algorithm::nvls) return {S, 0};
      if (s.algorithm == Algorithm::tree)  // reduce up and broadcast down: each rank sends about S twice
        return {2 * S * (per_domain - 1) / per_domain, N > 1 ? 2 * S / per_domain * (N - 1) / N : 0};
      return split(2 * (n - 1) / n * S, cross);
    case Collective::all_to_all: return {S * (per_domain - 1) / n, S * (n - per_domain) / n};
    case Collective::send_recv: return g.single_domain() ? WireBytes{S, 0} : WireBytes{0, S};
  }
  return {};
}

CollectiveCost collective_cost(const CollectiveSpec& spec, const Fabric& fabric) {
  check_group_shape(spec.group);
  if (spec.bytes < 0) throw InternalError("collective with negative bytes");
  CollectiveCost c;
  if (spec.group.ranks == 1 && spec.op != Collective::send_recv) return c;  // nothing to exchange
  const Terms t = terms(spec, fabric);
  c.latency_s = t.latency;
  c.bandwidth_s = t.bandwidth();
  c.scale_up_s = t.up;
  c.scale_out_s = t.out;
  c.seconds = c.latency_s + c.bandwidth_s;
  c.sent = wire_bytes(spec);
  return c;
}

CommSms nccl_kernel_sms() {
  return {16, "assumption: NCCL kernels hold one SM per channel; 16 channels (not in the reference)"};
}

}  // namespace moesim::comm
