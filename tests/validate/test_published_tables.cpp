// data/measurements/published_2026_12.csv (38 rows), coreweave-gb300-dsv3.csv (3 rows) and
// mlperf-v5.1-uf-llama31-8b-b200.csv (6 rows), development tables bundled 2026-12: every row must become a case (a spelling validate cannot read, a hardware or model name it
// does not know, would silently drop the row from the tables' figures), with a unique id and its source.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

namespace {

const config::CsvTable& table_of(const std::string& file) {
  static std::map<std::string, config::CsvTable> tables;
  auto it = tables.find(file);
  if (it == tables.end())
    it = tables.emplace(file, config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/" + file)).first;
  return it->second;
}

// The layout validate predicts row `id` of `file` with (columns, then data/rules/row_settings.json).
layout::Layout layout_of(const std::string& file, const std::string& id) {
  for (const auto& row : table_of(file).rows)
    if (row.at("id") == id) {
      const auto rc = validate::case_from_row(row, test::catalog_resolvers());
      REQUIRE_MESSAGE(rc.c.has_value(), rc.skipped);
      return rc.c->layout;
    }
  FAIL("no row " << id);
  return {};
}

int cases_of(const std::string& file, const std::string& id_prefix) {
  const auto& table = table_of(file);
  const auto resolve = test::catalog_resolvers();
  std::set<std::string> ids;
  int cases = 0;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    CHECK(id.rfind(id_prefix, 0) == 0);
    CHECK_FALSE(row.at("source").empty());
    CHECK_FALSE(row.at("notes").empty());
    const auto rc = validate::case_from_row(row, resolve);
    CHECK_MESSAGE(rc.c.has_value(), rc.skipped);
    if (rc.c) ++cases;
  }
  return cases;
}

}  // namespace

TEST_CASE("every row of the December 2026 published table becomes a case") {
  CHECK(cases_of("published_2026_12.csv", "NR") == 38);
}

TEST_CASE("every row of the CoreWeave GB300 DeepSeek-V3 series becomes a case") {
  CHECK(cases_of("coreweave-gb300-dsv3.csv", "MLS") == 3);
}

TEST_CASE("every row of University of Florida's MLPerf v5.1 Llama 3.1 8B series becomes a case, with its settings") {
  CHECK(cases_of("mlperf-v5.1-uf-llama31-8b-b200.csv", "UF") == 6);
  // The same NeMo code as NVIDIA's 8B rows: eager optimizer, FP8 weights, BF16 averaged reduction, NVLS off; UF's
  // configs keep conf/custom.yaml's 128M-parameter buckets.
  const auto uf006 = layout_of("mlperf-v5.1-uf-llama31-8b-b200.csv", "UF006");
  CHECK(uf006.cp == 2);
  CHECK(uf006.ddp_bucket_size == 134217728);
  CHECK_FALSE(uf006.optimizer_in_graph);
  CHECK(uf006.fp8_param_gather);
  CHECK(uf006.average_in_collective);
  CHECK_FALSE(uf006.nccl_nvls);
}

TEST_CASE("the recipes' DDP settings reach the rows: MLPerf Llama 3.1 8B, the MLPerf DeepSeek-V3 series") {
  // NeMo's MLPerf v5.1 pretrain.py: BF16 reduction, averaged in the collective; the 8B configs' 768M buckets.
  const auto nr019 = layout_of("published_2026_12.csv", "NR019");
  CHECK(nr019.ddp_bucket_size == 768000000);
  CHECK(nr019.average_in_collective);
  CHECK(nr019.grad_reduce_dtype == layout::Dtype::bf16);
  CHECK(nr019.overlap_grad_reduce);
  // Its config_common.sh: FP8 weights gathered as such, NVLS off; the FP4 405B rows keep BF16 gathers.
  CHECK(nr019.fp8_param_gather);
  CHECK_FALSE(nr019.nccl_nvls);
  CHECK_FALSE(layout_of("published_2026_12.csv", "NR013").fp8_param_gather);
  CHECK_FALSE(layout_of("published_2026_12.csv", "NR013").nccl_nvls);
  // NeMo 2's full-iteration graph wraps the forward-backward only: the v5.1 rows' optimizer runs eagerly; the
  // Megatron-Bridge DeepSeek-V3 rows keep the default.
  CHECK_FALSE(nr019.optimizer_in_graph);
  CHECK_FALSE(layout_of("published_2026_12.csv", "NR020").optimizer_in_graph);
  CHECK(layout_of("coreweave-gb300-dsv3.csv", "MLS009").optimizer_in_graph);
  // The DeepSeek-V3 yaml's 128M buckets; Megatron-Bridge's recipes average in the collective.
  const auto mls009 = layout_of("coreweave-gb300-dsv3.csv", "MLS009");
  CHECK(mls009.ddp_bucket_size == 134217728);
  CHECK(mls009.average_in_collective);
  // CoreWeave's 1,024- and 2,048-node wrappers skip the training graph's parameter gathers; its 512-node folder
  // (no wrapper in the mirror) and NVIDIA's GB200 series keep them in the step.
  CHECK_FALSE(mls009.param_gather_in_step);
  CHECK_FALSE(layout_of("coreweave-gb300-dsv3.csv", "MLS008").param_gather_in_step);
  CHECK(layout_of("coreweave-gb300-dsv3.csv", "MLS007").param_gather_in_step);
  CHECK(layout_of("mlperf-v6-dsv3-gb200-scaling.csv", "MLG004").param_gather_in_step);
  // MLPerf GPT-OSS-20B's yaml sets the same 128M buckets (not Megatron's max(40M, 1M x DP 64) default).
  CHECK(layout_of("groundtruth.csv", "GT062").ddp_bucket_size == 134217728);
  // SimuMax's launchers overlap no gradient reduction.
  CHECK_FALSE(layout_of("simumax_b200.csv", "SB001").overlap_grad_reduce);
  CHECK_FALSE(layout_of("simumax_b200.csv", "SB001").overlap_param_gather);
  CHECK(nr019.overlap_param_gather);
  // A NeMo 2 performance-page row keeps Megatron's defaults.
  const auto nr023 = layout_of("published_2026_12.csv", "NR023");
  CHECK(nr023.ddp_bucket_size == 0);
  CHECK_FALSE(nr023.average_in_collective);
  CHECK_FALSE(nr023.fp8_param_gather);
  CHECK(nr023.nccl_nvls);
}
