// Every constant names its source, checked entry by entry over the calibration data files: the kernel
// efficiency set (kernels-sim/data/efficiency/builtin.json: scalars, per-expert GEMMs, elementwise fractions,
// GEMM ceilings and tilings, attention curves) and the step parameters (data/params/step_params.json).
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "config/data_dir.hpp"
#include "kernels/efficiency_params.hpp"
#include "workload/step_params_file.hpp"

using namespace moesim;
using nlohmann::json;

namespace {

json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  REQUIRE(in.good());
  return json::parse(in);
}

// The [Sn] tags data/reference/hardware.json "sources" resolves.
std::set<std::string> known_tags() {
  const json hardware = read_json(std::filesystem::path(MOESIM_REFERENCE_DIR) / "hardware.json");
  std::set<std::string> tags;
  for (const auto& [tag, _] : hardware.at("sources").items()) tags.insert(tag);
  return tags;
}

enum class Kind { tagged, document, assumption, judgement, fitted, none };

// What kind of source `s` is; every [Sn] tag it names (in "[S2]" or "[S10, S12]") must resolve.
Kind classify(const std::string& s, const std::set<std::string>& tags) {
  static const std::regex group(R"(\[(S\d+(?:\s*,\s*S\d+)*)\])"), tag(R"(S\d+)");
  bool tagged = false;
  for (std::sregex_iterator g(s.begin(), s.end(), group), end; g != end; ++g) {
    const std::string inner = (*g)[1];
    for (std::sregex_iterator t(inner.begin(), inner.end(), tag); t != end; ++t) {
      CAPTURE(s);
      CHECK_MESSAGE(tags.count(t->str()), "unresolved tag " << t->str());
      tagged = true;
    }
  }
  if (s.rfind("FITTED: moesim validate --fit ", 0) == 0) return Kind::fitted;
  if (s.rfind("assumption: ", 0) == 0) return Kind::assumption;
  if (s.rfind("judgement: ", 0) == 0) return Kind::judgement;
  if (tagged) return Kind::tagged;
  // A document: a repository path (a file or folder), a section, or an upstream issue / pull request.
  static const std::regex document(R"(([\w.-]+/[\w./*-]+)|(\.(md|json|csv)\b)|§|(issue|PR) #\d+)");
  if (std::regex_search(s, document)) return Kind::document;
  return Kind::none;
}

struct Counts {
  int entries = 0, assumptions = 0, judgements = 0, fits = 0;
};

void check_entry(const json& e, const std::string& where, const std::set<std::string>& tags, Counts& n) {
  CAPTURE(where);
  REQUIRE(e.contains("source"));
  REQUIRE(e["source"].is_string());
  const std::string s = e["source"];
  CHECK(!s.empty());
  const Kind k = classify(s, tags);
  CHECK(k != Kind::none);
  ++n.entries;
  n.assumptions += k == Kind::assumption;
  n.judgements += k == Kind::judgement;
  n.fits += k == Kind::fitted;
}

}  // namespace

TEST_CASE("every kernel efficiency entry names its source: a resolvable tag, a document, an assumption or a fit") {
  const auto tags = known_tags();
  const json j = read_json(kernels::builtin_kernel_efficiency_file(config::data_dir()));
  Counts n;
  for (const char* scalar : {"hbm_fraction", "kernel_fixed_us", "grouped_gemm_overhead_rows", "per_expert_gemms"})
    check_entry(j.at(scalar), scalar, tags, n);
  for (const char* rows : {"elementwise_hbm", "gemm_ceilings", "gemm_tilings", "attention"}) {
    REQUIRE(j.at(rows).is_array());
    for (std::size_t i = 0; i < j[rows].size(); ++i)
      check_entry(j[rows][i], std::string(rows) + "/" + std::to_string(i), tags, n);
  }
  CHECK(n.entries == 4 + 3 + 11 + 3 + 22);
  // Keep in step with kernels-sim/README.md: the fixed kernel time, the three tilings, Blackwell Ultra's FP4
  // ceiling and six attention curves are assumptions; the Blackwell MXFP8 ceiling and the Blackwell elementwise
  // fraction are fitted (two rows each: blackwell, blackwell_ultra).
  CHECK(n.assumptions == 11);
  CHECK(n.fits == 4);
  CHECK(n.judgements == 0);
}

TEST_CASE("every step parameter names its source, and the fitted ones say with which command") {
  const auto tags = known_tags();
  const json j = read_json(workload::step_params_file(config::data_dir()));
  Counts n;
  for (const auto& [name, e] : j.at("params").items()) {
    check_entry(e, name, tags, n);
    CHECK(e.at("fitted").get<bool>() == (e.at("source").get<std::string>().rfind("FITTED: ", 0) == 0));
  }
  CHECK(n.entries == static_cast<int>(workload::step_param_names().size()));
  CHECK(n.fits == 3);  // framework_host_factor, x86_host_factor, unbound_host_factor
  // The reader agrees with the file, in step_param_names() order.
  const auto entries = workload::step_param_entries(config::data_dir());
  REQUIRE(entries.size() == workload::step_param_names().size());
  for (std::size_t i = 0; i < entries.size(); ++i) CHECK(entries[i].name == workload::step_param_names()[i]);
}
