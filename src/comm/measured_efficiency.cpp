#include "comm/measured_efficiency.hpp"

#include "comm/dispatcher_registry.hpp"
#include "core/error.hpp"
#include "kernels/device_rates.hpp"

namespace moesim::comm {
namespace {

using kernels::Arch;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kGBps = 1e9;
// Nominal per-GPU unidirectional bandwidths (hardware.md §2, §3).
constexpr double kNvlink4 = 450 * kGBps;  // 18 x 25 GB/s [S6, S46]
constexpr double kNvlink5 = 900 * kGBps;  // 18 x 50 GB/s [S46]

EfficiencyCurve flat(double efficiency, std::string source) {
  return EfficiencyCurve({{1.0, efficiency, std::move(source)}});
}

EfficiencyCurve curve_from(const std::vector<BusBwMeasurement>& ms, const Fabric& latencies) {
  std::vector<EfficiencyPoint> points;
  for (const auto& m : ms) points.push_back(derive_point(m, latencies));
  return EfficiencyCurve(std::move(points));
}

// An 8 x B200 box: the in-step time of one torch.distributed all-gather on the node of the SimuMax B200 runs
// (data/measurements/simumax_b200.csv), as SimuMax's B200 system file prices it
// (kernels-sim/data/simumax-b200/b200_bf16_ceperm.json, networks.high_intra_node.op.all_gather; formula
// simumax/core/config.py:904-1012 @4dcaae5, compute_net_op_time):
//   t(S) = (n-1)/n S / (0.6735 x 900 GiB/s) + 9.1828 us x (n-1) + 23.1049 us,  n = 8.
// Its first two terms are a least-squares line through nccl-tests all_gather_perf on that node, 8 ranks, 1 MiB ..
// 1 GiB (simu_tools/efficency_test/one_click_common.py:245-258, fit_bw_latency): fitted, not measured. The third
// is measured: a burst of 20 back-to-back torch.distributed all-gathers of 32 MiB between CUDA events on the
// caller's stream, per call, minus that line, averaged over 2, 4 and 8 ranks (measure_comm_burst_window_worker.py,
// run_one_click_benchmark.py:338-420). So at 32 MiB the sum is the measured in-step time of a call (the NCCL
// kernel, the event record and wait between the caller's stream and NCCL's, the wait for the last rank), and
// above it the line's slope adds the bytes. Points from 32 MiB (the measured anchor; below it the line's
// intercept is a fit artefact, so the curve stays flat there) to 1 GiB (the fit's last size).
std::vector<BusBwMeasurement> b200_box_all_gather() {
  const std::string src =
      "SimuMax b200_bf16_ceperm.json all_gather (nccl-tests line, 8 ranks, + burst-measured 23.1 us per call) at ";
  const auto busbw = [](double bytes) {
    const double wire = 7.0 / 8.0 * bytes;
    const double t = wire / (0.6735 * 900 * kGiB) + (9.1828 * 7 + 23.1049) * 1e-6;  // kGiB/s: SimuMax's GB/s
    return wire / t;
  };
  std::vector<BusBwMeasurement> out;
  for (const auto& [label, size] :
       {std::pair{"32M", 32 * kMiB}, std::pair{"64M", 64 * kMiB}, std::pair{"256M", 256 * kMiB}, std::pair{"1G", kGiB}})
    out.push_back({src + label, Collective::all_gather, Algorithm::ring, 8, size, busbw(size), kNvlink5});
  return out;
}

}  // namespace

std::vector<BusBwMeasurement> ring_scale_up_measurements(Arch arch, bool large_domain) {
  const auto AR = Collective::all_reduce;
  if (arch == Arch::hopper) {
    // "~365-370 GB/s" for ring AG/RS/intra-node A2A on 8 x H100 is the large-message plateau; assumption: it is
    // read at 8 GiB, where the latency term is negligible.
    return {{"hardware.md §5.3 H100 NVL8 ring busbw ~370 GB/s [S10, S12]", Collective::all_gather, Algorithm::ring, 8,
             8 * kGiB, 370 * kGBps, kNvlink4}};
  }
  if (!large_domain && arch == Arch::blackwell) return b200_box_all_gather();
  if (!large_domain) {
    // An 8 x B300 NVSwitch box: native NCCL 2.29.7 all_gather_perf, 8 ranks on one 8 x B300 HGX node (NV18 NVLink
    // 5), busbw, medians of 3: data/measurements/nccl-busbw.csv NB013-NB015 (uccl-project/uccl
    // experimental/ukernel/docs/b300_measurements.md @19ff7086, 2026-09-04). The 1 and 4 MiB rows are left out:
    // their measured time is at or below the Simple-protocol latency (NCCL runs LL / LL128 there). The 8-rank
    // reduce-scatter rows (NB026-NB030) are within 2 % of this curve from 64 MiB up; they are a check, not a
    // second source.
    const std::string ag = "nccl-busbw.csv NCCL 2.29.7 8 x B300 all_gather_perf, 8 ranks, busbw ";
    const auto AG = Collective::all_gather;
    return {{ag + "NB013 16M: 287.46 GB/s", AG, Algorithm::ring, 8, 16 * kMiB, 287.46 * kGBps, kNvlink5},
            {ag + "NB014 64M: 413.62 GB/s", AG, Algorithm::ring, 8, 64 * kMiB, 413.62 * kGBps, kNvlink5},
            {ag + "NB015 256M: 584.94 GB/s", AG, Algorithm::ring, 8, 256 * kMiB, 584.94 * kGBps, kNvlink5}};
  }
  // An NVL72 rack: GB200 4-GPU tray ring all-reduce curve [S14]. The 1 MiB point (80.5 GB/s) is left out: its measured time is
  // below the Simple-protocol latency (NCCL runs LL there), so no bandwidth factor can reproduce it.
  const std::string src = "hardware.md §5.3 GB200 4-GPU tray ring all-reduce busbw [S14] at ";
  return {{src + "16M: 331.1 GB/s", AR, Algorithm::ring, 4, 16 * kMiB, 331.1 * kGBps, kNvlink5},
          {src + "64M: 550.7 GB/s", AR, Algorithm::ring, 4, 64 * kMiB, 550.7 * kGBps, kNvlink5},
          {src + "1G: 646.9 GB/s", AR, Algorithm::ring, 4, kGiB, 646.9 * kGBps, kNvlink5},
          {src + "8G: 679.6 GB/s", AR, Algorithm::ring, 4, 8 * kGiB, 679.6 * kGBps, kNvlink5}};
}

std::vector<BusBwMeasurement> nvls_measurements(Arch arch) {
  if (arch != Arch::hopper) return {};
  const std::string src = "hardware.md §5.3 H200 NVL8 NVLS all-reduce busbw [S13] at ";
  const auto AR = Collective::all_reduce;
  const auto N = Algorithm::nvls;
  return {{src + "1M: 52.96 GB/s", AR, N, 8, kMiB, 52.96 * kGBps, kNvlink4},
          {src + "4M: 138.4 GB/s", AR, N, 8, 4 * kMiB, 138.4 * kGBps, kNvlink4},
          {src + "16M: 240.4 GB/s", AR, N, 8, 16 * kMiB, 240.4 * kGBps, kNvlink4},
          {src + "64M: 368.1 GB/s", AR, N, 8, 64 * kMiB, 368.1 * kGBps, kNvlink4},
          {src + "256M: 432.2 GB/s", AR, N, 8, 256 * kMiB, 432.2 * kGBps, kNvlink4},
          {src + "1G: 467.6 GB/s", AR, N, 8, kGiB, 467.6 * kGBps, kNvlink4},
          {src + "8G: 480.0 GB/s", AR, N, 8, 8 * kGiB, 480.0 * kGBps, kNvlink4}};
}

std::vector<BusBwMeasurement> alltoall_scale_up_measurements(Arch arch) {
  if (arch == Arch::hopper) return {};
  // Native NCCL 2.29.7 alltoall_perf, 8 ranks on one 8 x B300 SXM6 box (every GPU pair NV18, NVLink 5),
  // out-of-place algbw: uccl-project/uccl experimental/ukernel/docs/b300_native_nccl_measurements.md @01aaa38e
  // ("Latest full-size sweep (2026-08-06)", column "native 8r"). busbw = algbw x 7/8 (nccl-tests all-to-all).
  // Sizes are nccl-tests' binary multiples. Below 16 MiB the sweep is latency-bound (LL protocol), as the ring
  // curve's left-out 1 MiB point.
  const std::string src = "uccl b300_native_nccl_measurements.md NCCL 2.29.7 8 x B300 alltoall algbw at ";
  const auto A2A = Collective::all_to_all;
  const auto D = Algorithm::direct;
  const double bus = 7.0 / 8.0;
  return {{src + "16M: 306.7 GB/s", A2A, D, 8, 16 * kMiB, 306.7 * bus * kGBps, kNvlink5},
          {src + "32M: 392.0 GB/s", A2A, D, 8, 32 * kMiB, 392.0 * bus * kGBps, kNvlink5},
          {src + "64M: 488.6 GB/s", A2A, D, 8, 64 * kMiB, 488.6 * bus * kGBps, kNvlink5},
          {src + "128M: 564.9 GB/s", A2A, D, 8, 128 * kMiB, 564.9 * bus * kGBps, kNvlink5},
          {src + "256M: 620.3 GB/s", A2A, D, 8, 256 * kMiB, 620.3 * bus * kGBps, kNvlink5}};
}

double measured_seconds(const BusBwMeasurement& m) {
  return m.message_bytes * busbw_factor(m.op, m.ranks) / m.busbw_Bps;
}

Fabric uncalibrated_fabric(double scale_up_Bps, double scale_out_Bps) {
  Fabric f;
  // NCCL tuner, Simple protocol [S21] (hardware.md §5.3): ring base latency 8.4 us; per-step hwLat NVLink 3.4 us,
  // network 14 us.
  f.base_latency_s = 8.4e-6;
  f.scale_up = {scale_up_Bps, 3.4e-6};
  f.scale_out = {scale_out_Bps, 14e-6};
  // NVLS all-reduce, 2 GPUs, CUDA graphs: ~6 us [S22] (the tuner's 25 us NVLS step exceeds the whole 1 MiB time
  // measured on H200 [S13], so it cannot be the latency).
  f.nvls_latency_s = 6e-6;
  return f;
}

EfficiencyPoint derive_point(const BusBwMeasurement& m, const Fabric& latencies) {
  Fabric f = latencies;
  f.scale_up.bandwidth_Bps = m.link_Bps;
  f.efficiency = CommEfficiency{};  // ideal: bandwidth_s is wire bytes / nominal bandwidth
  const CollectiveSpec spec{m.op, m.algorithm, {m.ranks, m.ranks}, m.message_bytes};
  const CollectiveCost ideal = collective_cost(spec, f);
  const double t = measured_seconds(m);
  if (!(t > ideal.latency_s)) throw InternalError("measurement faster than the latency model: " + m.source);
  return {m.message_bytes, ideal.bandwidth_s / (t - ideal.latency_s), m.source};
}

DispatcherEfficiency derive_dispatcher_efficiency(const DispatchMeasurement& m, const Fabric& latencies) {
  DispatcherEfficiency e;
  e.source = m.source;
  for (Phase phase : {Phase::dispatch, Phase::combine}) {
    const DispatchVolume v = expert_dispatcher(m.dispatcher).volume(m.problem, phase);
    const double logical = m.over_rdma ? v.logical_scale_out : v.logical_scale_up;
    const double physical = m.over_rdma ? v.scale_out : v.scale_up;
    const double t = logical / (phase == Phase::dispatch ? m.dispatch_Bps : m.combine_Bps);
    if (!(t > latencies.base_latency_s)) throw InternalError("dispatch row faster than the latency model: " + m.source);
    const double eff = physical / (m.link_Bps * (t - latencies.base_latency_s));
    (phase == Phase::dispatch ? e.dispatch : e.combine) = eff;
  }
  return e;
}

Fabric builtin_fabric(Arch arch, double scale_up_Bps, double scale_out_Bps, bool large_domain) {
  const Arch a = arch == Arch::blackwell_ultra ? Arch::blackwell : arch;
  Fabric f = uncalibrated_fabric(scale_up_Bps, scale_out_Bps);
  const Fabric lat = f;
  CommEfficiency& e = f.efficiency;
  e.ring_scale_up = curve_from(ring_scale_up_measurements(arch, large_domain), lat);
  // Inter-node: one NIC per GPU reaches 48-49 GB/s of CX-7's 50 [S19]; assumption: the same fraction on CX-8.
  e.ring_scale_out = flat(48.5 / 50.0, "hardware.md §5.3 inter-node all-to-all ~48.5 GB/s per CX-7 NIC [S19]");
  e.alltoall_scale_out = e.ring_scale_out;
  if (a == Arch::hopper) {
    e.nvls = curve_from(nvls_measurements(a), lat);
    // S10: the ~370 GB/s ring figure "also applies to allgather/reducescatter/alltoall intra-node".
    e.alltoall_scale_up = e.ring_scale_up;
  } else {
    e.nvls = flat(0.74, "hardware.md §5.3 NCCL tuner NVLS efficiency, Blackwell 0.74 [S21]");
    // Measured on an 8-GPU B300 box (alltoall_scale_up_measurements); assumption: the same on B200 and inside
    // an NVL72 rack.
    e.alltoall_scale_up = curve_from(alltoall_scale_up_measurements(a), lat);
  }
  for (const auto& name : dispatcher_names()) {
    const ExpertDispatcher& d = expert_dispatcher(name);
    const auto up = d.measurement(a, false, large_domain), out = d.measurement(a, true, large_domain);
    if (!up && !out) continue;  // NCCL-based: NCCL's curves apply
    DispatcherLinkEfficiency& de = e.dispatchers[name];
    if (up) de.scale_up = derive_dispatcher_efficiency(*up, lat);
    if (out) de.scale_out = derive_dispatcher_efficiency(*out, lat);
  }
  return f;
}

}  // namespace moesim::comm
