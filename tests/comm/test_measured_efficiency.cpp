#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "comm/dispatcher_registry.hpp"
#include "comm/measured_efficiency.hpp"
#include "config/csv_table.hpp"

using namespace moesim;
using namespace moesim::comm;
using kernels::Arch;

TEST_CASE("the achieved-bandwidth curves reproduce the busbw measurements they came from") {
  for (auto arch : {Arch::hopper, Arch::blackwell, Arch::blackwell_ultra}) {
    auto ms = ring_scale_up_measurements(arch);
    const auto nv = nvls_measurements(arch);
    ms.insert(ms.end(), nv.begin(), nv.end());
    const auto a2a = alltoall_scale_up_measurements(arch);
    ms.insert(ms.end(), a2a.begin(), a2a.end());
    CHECK(ms.size() == (arch == Arch::blackwell ? 9u : 8u));  // B200's ring curve has 4 points, B300's 3
    // Blackwell NVL72 racks: the GB200 tray's ring curve (8-GPU boxes take their own above).
    const auto rack = arch == Arch::hopper ? std::vector<BusBwMeasurement>{} : ring_scale_up_measurements(arch, true);
    CHECK(rack.size() == (arch == Arch::hopper ? 0u : 4u));
    for (bool large : {false, true}) {
      for (const auto& m : large ? rack : ms) {
        const Fabric f = builtin_fabric(arch, m.link_Bps, 50e9, large);
        const auto c = collective_cost({m.op, m.algorithm, {m.ranks, m.ranks}, m.message_bytes}, f);
        const double busbw = m.message_bytes * busbw_factor(m.op, m.ranks) / c.seconds;
        INFO(m.source);
        CHECK(busbw == doctest::Approx(m.busbw_Bps).epsilon(1e-9));
      }
    }
  }
  // Efficiencies are physical fractions of the link.
  const Fabric h = builtin_fabric(Arch::hopper, 450e9, 50e9);
  CHECK(h.efficiency.ring_scale_up.at(8.0 * (1 << 30)) == doctest::Approx(370.0 / 450).epsilon(1e-3));
  CHECK(h.efficiency.nvls.at(8.0 * (1 << 30)) == doctest::Approx(480.0 / 1.75 / 450).epsilon(1e-3));
  CHECK(h.efficiency.nvls.at(1 << 20) < h.efficiency.nvls.at(1 << 30));
  // Hopper's intra-node all-to-all is the ring figure [S10]; NVLink 5's is its own measured curve, below the
  // ring's at training sizes (B300 alltoall 620 GB/s algbw at 256 MiB vs all-gather 584.9 GB/s busbw).
  CHECK(h.efficiency.alltoall_scale_up.at(256.0 * (1 << 20)) == h.efficiency.ring_scale_up.at(256.0 * (1 << 20)));
  const Fabric b = builtin_fabric(Arch::blackwell, 900e9, 50e9);
  CHECK(b.efficiency.alltoall_scale_up.points().size() == 5u);
  CHECK(b.efficiency.alltoall_scale_up.at(256.0 * (1 << 20)) < b.efficiency.ring_scale_up.at(256.0 * (1 << 20)));
  CHECK(b.efficiency.alltoall_scale_up.at(16.0 * (1 << 20)) < b.efficiency.alltoall_scale_up.at(256.0 * (1 << 20)));
}

namespace {
const std::map<std::string, std::string>& csv_row(const config::CsvTable& t, const std::string& id) {
  for (const auto& row : t.rows)
    if (row.at("id") == id) return row;
  FAIL("no row " << id);
  return t.rows.front();
}
}  // namespace

TEST_CASE("8 x B300 boxes price ring collectives from the bundled nccl-busbw.csv rows") {
  const auto table = config::read_csv(std::filesystem::path(MOESIM_MEASUREMENTS_DIR) / "nccl-busbw.csv");
  REQUIRE(table.rows.size() == 45u);
  // Every point of the box curve is a row of the table: collective, ranks, size and busbw as bundled.
  const auto ms = ring_scale_up_measurements(Arch::blackwell_ultra);
  REQUIRE(ms.size() == 3u);
  for (const auto& m : ms) {
    INFO(m.source);
    const auto pos = m.source.find("NB0");
    REQUIRE(pos != std::string::npos);
    const auto& row = csv_row(table, m.source.substr(pos, 5));
    CHECK(row.at("collective") == "all_gather");
    CHECK(m.op == Collective::all_gather);
    CHECK(std::stoi(row.at("ranks")) == m.ranks);
    CHECK(std::stod(row.at("size_bytes")) == m.message_bytes);
    CHECK(std::stod(row.at("busbw_GBps")) * 1e9 == doctest::Approx(m.busbw_Bps).epsilon(1e-12));
  }
  // Hand-derived from row NB014 alone: a sequence-parallel all-gather of 64 MiB over the 8 GPUs of a B300 box
  // (NVLink 5, 900 GB/s per direction) takes size x (n-1)/n / busbw = 67,108,864 x 7/8 / 413.62e9 = 141.97 us:
  // the latency 8.4 + 7 x 3.4 = 32.2 us plus 58.72 MB at 900 GB/s x 0.5944.
  const Fabric box = builtin_fabric(Arch::blackwell_ultra, 900e9, 50e9);
  const double mib64 = 64.0 * (1 << 20);
  const auto ag = collective_cost({Collective::all_gather, Algorithm::ring, {8, 8}, mib64}, box);
  CHECK(ag.seconds == doctest::Approx(141.97e-6).epsilon(1e-4));
  CHECK(ag.latency_s == doctest::Approx(32.2e-6));
  CHECK(box.efficiency.ring_scale_up.at(mib64) == doctest::Approx(0.5944).epsilon(1e-3));
  // The 8-rank reduce-scatter rows are a check, not a source: within 2 % from 64 MiB up.
  for (const char* id : {"NB029", "NB030"}) {
    const auto& row = csv_row(table, id);
    const double size = std::stod(row.at("size_bytes"));
    const double measured = size * 7.0 / 8.0 / (std::stod(row.at("busbw_GBps")) * 1e9);
    const auto rs = collective_cost({Collective::reduce_scatter, Algorithm::ring, {8, 8}, size}, box);
    INFO(id);
    CHECK(std::abs(rs.seconds / measured - 1) < 0.02);
  }
  // NVL72 racks keep the GB200 tray's curve [S14], GB300 racks too.
  const Fabric rack = builtin_fabric(Arch::blackwell, 900e9, 50e9, true);
  CHECK(builtin_fabric(Arch::blackwell_ultra, 900e9, 50e9, true).efficiency.ring_scale_up.at(mib64) ==
        rack.efficiency.ring_scale_up.at(mib64));
  REQUIRE(rack.efficiency.ring_scale_up.points().size() == 4u);
  CHECK(rack.efficiency.ring_scale_up.points().front().source.find("GB200") != std::string::npos);
  CHECK(rack.efficiency.ring_scale_up.at(mib64) > box.efficiency.ring_scale_up.at(mib64));
}

TEST_CASE("8 x B200 boxes price a ring call as SimuMax's B200 system file does at 8 ranks") {
  // Hand-derived from kernels-sim/data/simumax-b200/b200_bf16_ceperm.json (all_gather: efficient_factor 0.6735,
  // latency_us 9.1828, fixed_latency_us 23.1049) with SimuMax's formula (config.py compute_net_op_time): a 64 MiB
  // all-gather over 8 GPUs moves 7/8 x 67,108,864 = 58,720,256 bytes at 0.6735 x 900 x 2^30 B/s = 650.84 GB/s,
  // 90.22 us, plus 7 x 9.1828 + 23.1049 = 87.38 us: 177.60 us. moesim's latency stays 32.2 us; the efficiency
  // carries the rest.
  const Fabric box = builtin_fabric(Arch::blackwell, 900e9, 50e9);
  const double mib = 1 << 20;
  const auto ag = [&](double bytes, int n) {
    return collective_cost({Collective::all_gather, Algorithm::ring, {n, n}, bytes}, box).seconds;
  };
  CHECK(ag(64 * mib, 8) == doctest::Approx(177.60e-6).epsilon(1e-4));
  CHECK(ag(32 * mib, 8) == doctest::Approx((29360128.0 / (0.6735 * 900 * 1024 * mib) + 87.3845e-6)).epsilon(1e-6));
  // The in-step call is slower than native nccl-tests on 8 x B300 (141.97 us at 64 MiB, NB014) by the
  // burst-measured per-call time and B200's own line.
  const Fabric b300 = builtin_fabric(Arch::blackwell_ultra, 900e9, 50e9);
  CHECK(collective_cost({Collective::all_gather, Algorithm::ring, {8, 8}, 64 * mib}, b300).seconds <
        ag(64 * mib, 8) - 30e-6);
  // Monotone in size and in group width (4 and 2 ranks take the 8-rank curve with fewer ring steps).
  double last = 0;
  for (double s = 1 * mib; s <= 2048 * mib; s *= 2) {
    INFO(s);
    CHECK(ag(s, 8) > last);
    CHECK(ag(s, 4) < ag(s, 8));
    CHECK(ag(s, 2) < ag(s, 4));
    last = ag(s, 8);
  }
}

TEST_CASE("the dispatcher factors reproduce the comm-microbench.csv rows they came from") {
  for (auto arch : {Arch::hopper, Arch::blackwell}) {
    for (const char* d : {"deepep", "hybridep"}) {
      for (bool rdma : {false, true}) {
        for (bool large : {false, true}) {
          if (large && rdma) continue;  // RDMA rows were measured between 8-GPU boxes
          const auto row = expert_dispatcher(d).measurement(arch, rdma, large);
          REQUIRE(row.has_value());
          const DispatchMeasurement& m = *row;
          INFO(m.source);
          // NVLink rows run on their own NVLink (H800: 200 GB/s); RDMA rows on CX-7 with a wide NVLink.
          const Fabric f = builtin_fabric(arch, rdma ? 900e9 : m.link_Bps, rdma ? m.link_Bps : 50e9, large);
          for (Phase phase : {Phase::dispatch, Phase::combine}) {
            const DispatchCost c = expert_dispatcher(m.dispatcher).cost(m.problem, phase, f);
            const double logical = rdma ? c.volume.logical_scale_out : c.volume.logical_scale_up;
            const double reported = phase == Phase::dispatch ? m.dispatch_Bps : m.combine_Bps;
            CHECK(logical / c.seconds == doctest::Approx(reported).epsilon(1e-9));
          }
        }
      }
    }
  }
  // NVL72 racks use the GB200 EP32 rows; 8-GPU boxes the B200 / SM100 EP8 rows; Hopper has no large domain.
  const auto source = [](const char* d, Arch arch, bool large) {
    return expert_dispatcher(d).measurement(arch, false, large)->source;
  };
  CHECK(source("deepep", Arch::blackwell, true).find("CM029") != std::string::npos);
  CHECK(source("hybridep", Arch::blackwell, true).find("CM020") != std::string::npos);
  CHECK(source("hybridep", Arch::blackwell, false).find("CM028") != std::string::npos);
  CHECK(source("deepep", Arch::hopper, true).find("CM001") != std::string::npos);
  // NCCL-based dispatchers have no rows of their own: NCCL's curves apply, and the fabric holds no factor for them.
  CHECK_FALSE(expert_dispatcher("alltoall").measurement(Arch::hopper, false).has_value());
  // The community DeepEP port reached less on the rack than HybridEP did (the ladder's reason to switch).
  const Fabric rack = builtin_fabric(Arch::blackwell, 900e9, 50e9, true);
  CHECK(rack.efficiency.dispatcher("deepep").scale_up.combine <
        rack.efficiency.dispatcher("hybridep").scale_up.combine);
  // Physical efficiencies stay below the link (the logical figures do not: CM013 reports 90 GB/s on a 50 GB/s NIC).
  const Fabric b = builtin_fabric(Arch::blackwell, 900e9, 50e9);
  const auto& deepep = b.efficiency.dispatcher("deepep");
  CHECK(deepep.scale_out.dispatch < 1.0);
  CHECK(deepep.scale_out.dispatch > 0.8);
  const auto& hybridep = b.efficiency.dispatcher("hybridep");
  CHECK(hybridep.scale_up.dispatch < hybridep.scale_up.combine);
  CHECK(b.efficiency.dispatchers.count("alltoall") == 0);
  CHECK(b.efficiency.dispatcher("alltoall").scale_up.dispatch == 1.0);
}
