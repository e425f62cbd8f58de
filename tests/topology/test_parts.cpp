// Part files: figures round-trip from data/reference/hardware.json; bad part files are reported precisely.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "expect_error.hpp"
#include "topology/part_files.hpp"

using namespace moesim;
using namespace moesim::topology;
namespace fs = std::filesystem;

namespace {
const fs::path kParts = fs::path(MOESIM_SOURCE_DIR) / "topologies" / "parts";

GpuSpec gpu(const std::string& name) { return read_gpu_file(kParts / "gpu" / (name + ".json")); }

std::string config_error_text(const std::function<void()>& f) {
  return moesim::test::error_text<ConfigError>(f, ExitCode::bad_config);
}
}  // namespace

TEST_CASE("every part file in the catalog loads") {
  int n = 0;
  for (const char* kind : {"gpu", "nic", "switch"})
    for (const auto& e : fs::directory_iterator(kParts / kind)) {
      CAPTURE(e.path().string());
      if (std::string(kind) == "gpu") CHECK_NOTHROW(read_gpu_file(e.path()));
      if (std::string(kind) == "nic") CHECK_NOTHROW(read_nic_file(e.path()));
      if (std::string(kind) == "switch") CHECK_NOTHROW(read_switch_file(e.path()));
      ++n;
    }
  CHECK(n == 7 + 2 + 5);
}

TEST_CASE("GB300 dense peaks as in hardware.md §1") {
  const GpuSpec g = gpu("gb300");
  CHECK(g.name == "gb300");
  CHECK(g.peak_flops(MathDtype::fp8).value() == 5000e12);
  CHECK(g.peak_flops(MathDtype::mxfp8).value() == 5000e12);  // MXFP8 = FP8 on Blackwell
  CHECK(g.peak_flops(MathDtype::bf16).value() == 2500e12);
  CHECK(g.peak_flops(MathDtype::fp4).value() == 15000e12);
  CHECK(g.hbm_bytes == 288e9);
  CHECK(g.usable_hbm_bytes() == 279e9);
  CHECK(g.hbm_Bps == 8000e9);
  CHECK(g.nvlink_Bps_per_direction == 900e9);
  CHECK(g.nvlink_generation == 5);
  CHECK_FALSE(g.l2_bytes.has_value());  // not disclosed
  CHECK(g.sfu_exp_per_s.value() == doctest::Approx(10.7e12));
}

TEST_CASE("Hopper has no MXFP8 and no FP4; H800 has the reduced NVLink") {
  for (const char* name : {"h100-sxm", "h800-sxm", "h200-sxm"}) {
    const GpuSpec g = gpu(name);
    CAPTURE(name);
    CHECK_FALSE(g.peak_flops(MathDtype::mxfp8).has_value());
    CHECK_FALSE(g.peak_flops(MathDtype::fp4).has_value());
    CHECK(g.arch == "hopper");
  }
  CHECK(gpu("h800-sxm").nvlink_Bps_per_direction == 200e9);
  CHECK(gpu("h100-sxm").nvlink_Bps_per_direction == 450e9);
  CHECK(gpu("h100-sxm").usable_hbm_bytes() == 80e9);
  CHECK(gpu("b200").usable_hbm_bytes() == 180e9);
  CHECK(gpu("b200").hbm_bytes == 192e9);
  CHECK(gpu("h100-sxm").l2_bytes.value() == 50e6);
  CHECK(gpu("h100-sxm").tensor_peak_clock_Hz.value() == doctest::Approx(1.83e9));
}

TEST_CASE("every GPU figure round-trips from data/reference/hardware.json") {
  std::ifstream in(fs::path(MOESIM_REFERENCE_DIR) / "hardware.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in)["gpus"];
  const std::map<std::string, std::string> keys{
      {"h100-sxm", "H100_SXM"}, {"h800-sxm", "H800_SXM"}, {"h200-sxm", "H200_SXM"}, {"b200", "B200_HGX"},
      {"gb200", "GB200"},       {"b300", "B300_HGX"},     {"gb300", "GB300"}};
  const std::map<std::string, MathDtype> dtypes{{"bf16_dense", MathDtype::bf16},    {"fp16_dense", MathDtype::fp16},
                                                {"fp8_dense", MathDtype::fp8},      {"mxfp8_dense", MathDtype::mxfp8},
                                                {"fp4_dense", MathDtype::fp4},      {"tf32_dense", MathDtype::tf32},
                                                {"fp32_nontensor", MathDtype::fp32}};
  for (const auto& [name, key] : keys) {
    CAPTURE(name);
    const GpuSpec g = gpu(name);
    const auto& r = ref.at(key);
    CHECK(g.sm_count == r.at("sm_count").at("value").get<int>());
    CHECK(g.hbm_Bps == doctest::Approx(r.at("hbm_bandwidth").at("value").get<double>() * 1e12));
    CHECK(g.tdp_W.value() == r.at("tdp").at("value").get<double>());
    // hardware.json quotes physical capacity for some parts and usable for others (see its notes).
    const double hbm = r.at("hbm_capacity").at("value").get<double>() * 1e9;
    CHECK((g.hbm_bytes == hbm || g.usable_hbm_bytes() == hbm));
    for (const auto& [field, dtype] : dtypes) {
      if (!r.contains(field)) continue;
      CAPTURE(field);
      const auto& v = r.at(field).at("value");
      if (v.is_null())
        CHECK_FALSE(g.peak_flops(dtype).has_value());
      else
        CHECK(g.peak_flops(dtype).value() == doctest::Approx(v.get<double>() * 1e12));
    }
  }
}

TEST_CASE("NIC and switch figures in SI units") {
  const NicSpec cx7 = read_nic_file(kParts / "nic" / "connectx-7.json");
  CHECK(cx7.Bps_per_direction == 50e9);
  CHECK(cx7.host_Bps_per_direction == 64e9);
  CHECK(cx7.latency_s == doctest::Approx(855e-9));
  CHECK(cx7.calibration.find("achievable")->value_si == doctest::Approx(48.5e9));
  CHECK(read_nic_file(kParts / "nic" / "connectx-8.json").Bps_per_direction == 100e9);
  const SwitchSpec q2 = read_switch_file(kParts / "switch" / "quantum-2-qm9700.json");
  CHECK(q2.kind == SwitchKind::infiniband);
  CHECK(q2.radix == 64);
  CHECK(q2.port_Bps_per_direction == 50e9);
  CHECK(read_switch_file(kParts / "switch" / "spectrum-4-sn5600.json").kind == SwitchKind::ethernet);
  CHECK(read_switch_file(kParts / "switch" / "nvlink-switch-gen5.json").radix == 144);
}

TEST_CASE("calibration figures: SI conversion; a missing name is absent") {
  const GpuSpec g = gpu("h100-sxm");
  CHECK(g.calibration.find("gemm_mamf_bf16")->value_si == doctest::Approx(794.5e12));
  CHECK(g.calibration.find("gemm_mamf_bf6") == nullptr);
}

TEST_CASE("bad part files: negative bandwidth, unknown dtype, unknown unit, all at once") {
  const fs::path fx = fs::path(MOESIM_FIXTURES_DIR) / "topology";
  const std::string nic = config_error_text([&] { read_nic_file(fx / "nic_negative_bandwidth.json"); });
  CHECK(nic.find("nic_negative_bandwidth.json:/bandwidth_GBps: expected a positive number, got -50") !=
        std::string::npos);

  const std::string g = config_error_text([&] { read_gpu_file(fx / "gpu_bad_dtype.json"); });
  CHECK(g.find("/dense_TFLOPS/bf8: unknown key \"bf8\" (did you mean \"") != std::string::npos);
  CHECK(g.find("/calibration/gemm_mamf_bf16/unit") != std::string::npos);
  CHECK(g.find("expected one of TFLOPS, GBps, us, fraction, got \"TFLOP/s\"") != std::string::npos);
}

TEST_CASE("a measured memory-bound kind needs both halves, each in its unit") {
  const fs::path fx = fs::path(MOESIM_FIXTURES_DIR) / "topology";
  const std::string g = config_error_text([&] { read_gpu_file(fx / "gpu_half_memory_rate.json"); });
  CHECK(g.find("/calibration/memory_rate~1fused_ce: missing its partner \"memory_fixed/fused_ce\"") !=
        std::string::npos);
  CHECK(g.find("/calibration/memory_fixed~1permute: expected unit \"us\"") != std::string::npos);
  CHECK(g.find("/calibration/memory_fixed~1permute: missing its partner \"memory_rate/permute\"") != std::string::npos);
  // The bundled B200 file carries one such pair and loads.
  CHECK(gpu("b200").calibration.find("memory_fixed/cross_entropy_fused") != nullptr);
}
