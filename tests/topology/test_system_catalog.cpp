// The systems catalog: every file loads, every alias and every hardware name of groundtruth.csv resolves,
// unknown names are errors with did-you-mean, bad system files are reported all at once.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "config/csv_table.hpp"
#include "core/error.hpp"
#include "expect_error.hpp"
#include "topology/system_catalog.hpp"

using namespace moesim;
using namespace moesim::topology;
namespace fs = std::filesystem;

namespace {
const SystemCatalog& catalog() {
  static const SystemCatalog c = SystemCatalog::load(MOESIM_SOURCE_DIR);
  return c;
}

const fs::path kFixtures = fs::path(MOESIM_FIXTURES_DIR) / "topology";

std::string config_error_text(const std::function<void()>& f) {
  return moesim::test::error_text<ConfigError>(f, ExitCode::bad_config);
}

}  // namespace

TEST_CASE("the catalog loads with the expected systems and parts") {
  CHECK(catalog().system_names() == std::vector<std::string>{"dgx-b200", "dgx-b300", "dgx-h100", "dgx-h200",
                                                             "gb200-nvl72", "gb300-nvl72", "gb300-nvl72-spectrum-x",
                                                             "hgx-h800"});
  CHECK(catalog().parts().size() == 14);
}

TEST_CASE("every name and alias resolves to its system, case-insensitively") {
  for (const auto& name : catalog().system_names()) {
    const SystemSpec& s = catalog().system(name);
    CHECK(s.name == name);
    CHECK_FALSE(s.source.empty());
    for (const auto& alias : s.aliases) {
      CAPTURE(alias);
      CHECK(catalog().system(alias).name == name);
      std::string upper = alias;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      CHECK(catalog().canonical_name(upper) == name);
    }
  }
}

TEST_CASE("every hardware name in groundtruth.csv resolves") {
  const auto table = moesim::config::read_csv(fs::path(MOESIM_MEASUREMENTS_DIR) / "groundtruth.csv");
  std::set<std::string> names;
  for (const auto& row : table.rows) names.insert(row.at("hardware"));
  CHECK(names.size() >= 15);  // 16 spellings before GT070 (the only "GB300") left as a duplicate of GT032
  for (const auto& n : names) {
    CAPTURE(n);
    CHECK(catalog().canonical_name(n).has_value());
  }
  CHECK(catalog().system("GB300 NVL72 (\"theia\")").name == "gb300-nvl72");
  CHECK(catalog().system("GB300 NVL72 (CoreWeave, Spectrum-X)").scale_out.switch_part.kind == SwitchKind::ethernet);
  CHECK(catalog().system("H100 SXM").name == "dgx-h100");
  CHECK(catalog().system("HGX B200 (32 nodes, Quantum IB)").name == "dgx-b200");
  CHECK(catalog().system("DGX-GB200").name == "gb200-nvl72");
}

TEST_CASE("unknown system names list the known ones with a did-you-mean, never a guess") {
  const std::string msg = config_error_text([] { catalog().system("dgx-h10"); });
  CHECK(msg.find("unknown system \"dgx-h10\" (did you mean \"dgx-h100\"?)") != std::string::npos);
  CHECK(msg.find("known systems: dgx-b200, dgx-b300, dgx-h100, dgx-h200, gb200-nvl72, gb300-nvl72, "
                 "gb300-nvl72-spectrum-x, hgx-h800") != std::string::npos);
  CHECK_FALSE(catalog().canonical_name("GB400 NVL144").has_value());
}

TEST_CASE("system fields: extends, defaults derived from the leaf radix, NVL72 placement") {
  const SystemSpec& h200 = catalog().system("dgx-h200");  // extends dgx-h100
  CHECK(h200.gpu.name == "h200-sxm");
  CHECK(h200.gpus_per_node == 8);
  CHECK(h200.scale_out.nic.name == "connectx-7");
  CHECK(h200.calibration.find("nccl_nvlink_ring_busbw")->value_si == 370e9);  // inherited
  CHECK(h200.calibration.find("host_link_measured")->value_si == 52e9);       // added

  const SystemSpec& gb300 = catalog().system("GB300 NVL72");
  CHECK(gb300.gpus_per_node == 4);
  CHECK(gb300.scale_up.domain_size == 72);
  CHECK(gb300.scale_up.gpus_used_per_domain == 64);
  CHECK(gb300.scale_out.rails == 4);
  CHECK(gb300.scale_out.nodes_per_leaf == 72);  // half of the Q3400's 144 ports
  CHECK(gb300.scale_out.nic.Bps_per_direction == 100e9);
  CHECK(gb300.host.gpu_link_Bps_per_direction.value() == 225e9);
  CHECK(catalog().system("gb300-nvl72-spectrum-x").scale_out.nodes_per_leaf == 32);
  CHECK(catalog().system("hgx-h800").scale_out.nodes_per_leaf == 32);
  CHECK(catalog().system("dgx-b300").scale_out.nodes_per_leaf == 72);
  CHECK(catalog().system("dgx-h100").scale_up.switches_per_domain.value() == 4);
  // The host CPU family decides whether the fitted x86 host factor applies (workload step builder).
  CHECK(gb300.host.cpu_family == CpuFamily::grace);
  CHECK(catalog().system("gb200-nvl72").host.cpu_family == CpuFamily::grace);
  CHECK(catalog().system("gb300-nvl72-spectrum-x").host.cpu_family == CpuFamily::grace);
  for (const char* x86 : {"dgx-b200", "dgx-b300", "dgx-h100", "dgx-h200", "hgx-h800"})
    CHECK(catalog().system(x86).host.cpu_family == CpuFamily::x86);
}

TEST_CASE("resolve: an existing path is loaded as a system file, anything else is a name") {
  const auto path = fs::path(MOESIM_SOURCE_DIR) / "topologies" / "systems" / "dgx-h200.json";
  const SystemSpec s = catalog().resolve(path.string());
  CHECK(s.gpu.name == "h200-sxm");
  CHECK(s.name == path.string());
  CHECK(catalog().resolve("dgx-b200").gpu.name == "b200");
}

TEST_CASE("bad system files") {
  SUBCASE("unknown key, with a did-you-mean and its JSON pointer") {
    const std::string msg =
        config_error_text([] { catalog().load_system_file(kFixtures / "system_unknown_key.json"); });
    CHECK(msg.find("system_unknown_key.json:/scale_out/oversubscripton: unknown key \"oversubscripton\" (did you mean "
                   "\"oversubscription\"?)") != std::string::npos);
  }
  SUBCASE("a host CPU family outside the known ones, with its JSON pointer and a did-you-mean") {
    const std::string msg =
        config_error_text([] { catalog().load_system_file(kFixtures / "system_bad_cpu_family.json"); });
    CAPTURE(msg);
    CHECK(msg.find("system_bad_cpu_family.json:/host/cpu_family:") != std::string::npos);
    CHECK(msg.find("\"grase\"") != std::string::npos);
    CHECK(msg.find("did you mean \"grace\"") != std::string::npos);
  }
  SUBCASE("unknown part names: both reported, each with a did-you-mean and the known parts") {
    try {
      catalog().load_system_file(kFixtures / "system_unknown_parts.json");
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      REQUIRE(e.diagnostics().size() == 2);
      CHECK(e.diagnostics()[0].pointer == "/gpu");
      CHECK(e.diagnostics()[0].message.find(
                "unknown gpu part \"h100-sxn\" (did you mean \"h100-sxm\"?); known gpu parts: "
                "b200, b300, gb200, gb300, h100-sxm, h200-sxm, h800-sxm") == 0);
      CHECK(e.diagnostics()[1].pointer == "/scale_out/nic");
      CHECK(e.diagnostics()[1].message.find("unknown nic part \"connectx7\" (did you mean \"connectx-7\"?)") == 0);
    }
  }
  SUBCASE("wrong switch kind and a leaf larger than its radix") {
    const std::string msg =
        config_error_text([] { catalog().load_system_file(kFixtures / "system_wrong_switch_kind.json"); });
    CHECK(msg.find("/scale_up/switch: scale-up switch \"quantum-2-qm9700\" is of kind infiniband, expected nvswitch") !=
          std::string::npos);
    CHECK(msg.find("/scale_out/nodes_per_leaf: a leaf with 40 nodes needs 40 down + 40 up ports") != std::string::npos);
    CHECK(msg.find("more than the radix 64 of \"quantum-2-qm9700\"") != std::string::npos);
  }
  SUBCASE("a missing file") {
    const std::string msg = config_error_text([] { catalog().load_system_file(kFixtures / "nope.json"); });
    CHECK(msg.find("nope.json: cannot open file") != std::string::npos);
  }
}

TEST_CASE("a data dir without topologies/ is a config error") {
  const std::string msg = config_error_text([] { SystemCatalog::load(MOESIM_FIXTURES_DIR); });
  CHECK(msg.find("no topologies/ folder here") != std::string::npos);
}
