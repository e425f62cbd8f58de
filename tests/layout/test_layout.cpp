#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "layout/layout.hpp"

using namespace moesim::layout;

namespace {

// Minimal RFC 4180 reader: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::uint32_t bits(std::initializer_list<RecomputeModule> ms) {
  std::uint32_t b = 0;
  for (auto m : ms) b |= static_cast<std::uint32_t>(m);
  return b;
}

}  // namespace

TEST_CASE("derived sizes follow Megatron: dp, edp, micro-batches") {
  Layout l;
  l.gpus = 256, l.tp = 1, l.pp = 2, l.vpp = 8, l.ep = 32, l.etp = 1, l.mbs = 1, l.gbs = 4096, l.seq = 4096;
  CHECK(l.dp() == 128);
  CHECK(l.edp() == 4);
  CHECK(l.num_microbatches() == 32);
  CHECK(l.tokens_per_step() == 4096LL * 4096);
  CHECK_FALSE(l.uses_sequence_parallel());
  l.tp = 4;
  CHECK(l.uses_sequence_parallel());  // default on with tp > 1
  l.sequence_parallel = false;
  CHECK_FALSE(l.uses_sequence_parallel());
  l.tp = 1;
  l.sequence_parallel = true;
  CHECK_FALSE(l.uses_sequence_parallel());  // never with tp == 1
}

TEST_CASE("precision names: canonical, case-insensitive, notes ignored, fp8 = fp8-tensorwise") {
  CHECK(parse_precision("bf16") == Precision::bf16);
  CHECK(parse_precision("BF16") == Precision::bf16);
  CHECK(parse_precision("MXFP8") == Precision::mxfp8);
  CHECK(parse_precision("MXFP8 (routed experts only)") == Precision::mxfp8);
  CHECK(parse_precision("NVFP4") == Precision::nvfp4);
  CHECK(parse_precision("FP8") == Precision::fp8_tensorwise);
  CHECK(parse_precision("FP8 (current scaling)") == Precision::fp8_tensorwise);
  CHECK(parse_precision("fp8-blockwise") == Precision::fp8_blockwise);
  CHECK(parse_precision("fp8_blockwise") == Precision::fp8_blockwise);
  CHECK(to_string(Precision::fp8_tensorwise) == "fp8-tensorwise");
  CHECK(error_of([] { parse_precision("mxpf8"); }) ==
        "expected precision bf16 | fp8-tensorwise | fp8-blockwise | mxfp8 | nvfp4, got \"mxpf8\" (did you mean "
        "\"mxfp8\"?)");
}

TEST_CASE("dispatcher, cuda graph and dtype names") {
  CHECK(parse_dispatcher("hybridep") == Dispatcher::hybridep);
  CHECK(parse_dispatcher("HybridEP (likely)") == Dispatcher::hybridep);
  CHECK(parse_dispatcher("DeepEP") == Dispatcher::deepep);
  CHECK(parse_dispatcher("alltoall") == Dispatcher::alltoall);
  CHECK(error_of([] { parse_dispatcher("flex"); }) ==
        "\"flex\" is Megatron's dispatcher type; name its backend instead: deepep or hybridep");
  CHECK(error_of([] { parse_dispatcher("hybirdep"); }) ==
        "expected dispatcher alltoall | allgather | deepep | hybridep, got \"hybirdep\" (did you mean \"hybridep\"?)");
  CHECK(parse_cuda_graph("full") == CudaGraph::full);
  CHECK(parse_cuda_graph("Partial") == CudaGraph::partial);
  CHECK(error_of([] { parse_cuda_graph("ful"); }) ==
        "expected cuda_graph none | partial | full, got \"ful\" (did you mean \"full\"?)");
  CHECK(parse_dtype("BF16") == Dtype::bf16);
  CHECK(parse_dtype("fp32") == Dtype::fp32);
  // Graph scopes: "partial" alone = Megatron's four scopes; an explicit list; canonical text back.
  const auto dflt = parse_cuda_graph_setting("partial");
  CHECK(dflt.mode == CudaGraph::partial);
  CHECK(dflt.scopes == kDefaultGraphScopes);
  CHECK(cuda_graph_text(dflt.mode, dflt.scopes) == "partial");
  const auto some = parse_cuda_graph_setting("Partial: moe_router, attn,shared_experts");
  CHECK(some.scopes ==
        (static_cast<std::uint32_t>(GraphScope::attn) | static_cast<std::uint32_t>(GraphScope::moe_router) |
         static_cast<std::uint32_t>(GraphScope::shared_experts)));
  CHECK(cuda_graph_text(some.mode, some.scopes) == "partial: attn,moe_router,shared_experts");
  CHECK(parse_cuda_graph_setting("full").mode == CudaGraph::full);
  // A trailing "(note)" is dropped before the scope list is read, ':' inside it included.
  CHECK(parse_cuda_graph_setting("none (see: notes)").mode == CudaGraph::none);
  CHECK(parse_cuda_graph_setting("partial: attn (TE)").scopes == static_cast<std::uint32_t>(GraphScope::attn));
  CHECK(cuda_graph_text(CudaGraph::full, some.scopes) == "full");
  CHECK(error_of([] { parse_cuda_graph_setting("partial: atn"); }) ==
        "expected graph scope attn | mlp | moe_router | moe_preprocess | shared_experts, got \"atn\" (did you mean "
        "\"attn\"?)");
  CHECK(error_of([] { parse_cuda_graph_setting("full: attn"); }) ==
        "a graph scope list only goes with partial, got \"full: attn\"");
  CHECK(error_of([] { parse_cuda_graph_setting("partial:"); }) == "\"partial:\" needs at least one graph scope");
  CHECK(parse_grouped_gemm("per_expert") == GroupedGemm::per_expert);
  CHECK(parse_grouped_gemm("Fused") == GroupedGemm::fused);
  CHECK(error_of([] { parse_grouped_gemm("fuse"); }) ==
        "expected grouped_gemm auto | per-expert | fused | fused-mlp, got \"fuse\" (did you mean \"fused\"?)");
  // auto: the single grouped kernel only under a full-iteration graph (the graph-safe path); else TE's per-expert loop.
  Layout l;
  CHECK_FALSE(l.uses_fused_grouped_gemm());
  l.cuda_graph = CudaGraph::full;
  CHECK(l.uses_fused_grouped_gemm());
  l.grouped_gemm = GroupedGemm::per_expert;
  CHECK_FALSE(l.uses_fused_grouped_gemm());
  l.cuda_graph = CudaGraph::none;
  l.grouped_gemm = GroupedGemm::fused;
  CHECK(l.uses_fused_grouped_gemm());
}

TEST_CASE("Transformer Engine versions: MAJOR.MINOR, patch and local suffixes ignored, ordered") {
  CHECK(parse_te_version("2.9") == TeVersion{2, 9});
  CHECK(parse_te_version(" v2.14.1 ") == TeVersion{2, 14});
  CHECK(parse_te_version("2.14+71bbefb") == TeVersion{2, 14});
  CHECK(to_string(parse_te_version("2.10")) == "2.10");
  CHECK(TeVersion{2, 9} < kTeHostOverheadReduced);  // 2.9 < 2.10: compared as numbers, not text
  CHECK(TeVersion{2, 12} > kTeHostOverheadReduced);
  CHECK(Layout{}.te_version == kLatestTeVersion);
  // The cuDNN of the NeMo container that ships each TE release (software-versions.md): 25.09 / 25.11 / 26.02 / 26.06.
  CHECK(cudnn_release_of(TeVersion{2, 7}) == 91100);
  CHECK(cudnn_release_of(TeVersion{2, 9}) == 91301);
  CHECK(cudnn_release_of(TeVersion{2, 11}) == 91301);
  CHECK(cudnn_release_of(TeVersion{2, 12}) == 91800);
  CHECK(cudnn_release_of(kLatestTeVersion) == 92101);
  for (const char* bad : {"", "2", "2.", "two.nine", "2.9x", "2.9.", ".9", "0.9", "2..9"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(
        parse_te_version(bad),
        (std::string("expected a Transformer Engine version MAJOR.MINOR such as \"2.12\", got \"") + bad + "\"")
            .c_str(),
        std::invalid_argument);
  }
}

TEST_CASE("recompute text: forms and canonical output") {
  Recompute r = parse_recompute("none");
  CHECK(r.granularity == RecomputeGranularity::none);
  CHECK(r.to_string() == "none");

  r = parse_recompute("selective");
  CHECK(r.modules == bits({RecomputeModule::core_attn}));  // Megatron's default module

  r = parse_recompute("selective: mlp,moe_act");
  CHECK(r.granularity == RecomputeGranularity::selective);
  CHECK(r.modules == bits({RecomputeModule::mlp, RecomputeModule::moe_act}));
  CHECK(r.to_string() == "selective: mlp,moe_act");
  CHECK(parse_recompute(r.to_string()) == r);

  r = parse_recompute("selective: shared_experts layernorm, core_attn");
  CHECK(r.modules == bits({RecomputeModule::shared_experts, RecomputeModule::layernorm, RecomputeModule::core_attn}));
  CHECK(r.to_string() == "selective: core_attn,layernorm,shared_experts");

  r = parse_recompute("full");
  CHECK(r.granularity == RecomputeGranularity::full);
  CHECK(r.method == RecomputeMethod::uniform);
  CHECK(r.num_layers == 1);
  r = parse_recompute("full: block 4");
  CHECK(r.method == RecomputeMethod::block);
  CHECK(r.num_layers == 4);
  CHECK(r.to_string() == "full: block 4");
  CHECK(parse_recompute(r.to_string()) == r);

  CHECK(error_of([] { parse_recompute(""); }) ==
        "empty recompute: write none, selective[: modules] or full[: uniform|block N]");
  CHECK(error_of([] { parse_recompute("selective: mla_upproj"); }) ==
        "expected recompute module core_attn | mlp | moe | moe_act | layernorm | mla_up_proj | shared_experts, "
        "got \"mla_upproj\" (did you mean \"mla_up_proj\"?)");
  CHECK(error_of([] { parse_recompute("selectiv"); }) ==
        "expected recompute none | selective | full, got \"selectiv\" (did you mean \"selective\"?)");
  CHECK(error_of([] { parse_recompute("full: block 0"); }) ==
        "expected a positive number of layers after the recompute method, got \"0\"");
  CHECK(error_of([] { parse_recompute("none: mlp"); }) == "recompute \"none\" takes no arguments, got \"none: mlp\"");
}

TEST_CASE("recompute: every distinct value of groundtruth.csv's recompute column") {
  const auto rows = read_csv(MOESIM_MEASUREMENTS_DIR "/groundtruth.csv");
  REQUIRE(rows.size() > 1);
  std::size_t col = 0;
  while (col < rows[0].size() && rows[0][col] != "recompute") ++col;
  REQUIRE(col < rows[0].size());
  std::set<std::string> values;
  for (std::size_t i = 1; i < rows.size(); ++i) values.insert(rows[i].at(col));

  using M = RecomputeModule;
  // The expected reading of each value; a value missing here fails the test, so new rows get reviewed.
  const std::map<std::string, std::uint32_t> expected = {
      {"none", 0},
      {"selective: layernorm, moe", bits({M::layernorm, M::moe})},
      {"selective: layernorm, moe_act", bits({M::layernorm, M::moe_act})},
      {"selective: mla_up_proj", bits({M::mla_up_proj})},
      {"selective: mla_up_proj (as 26.06)", bits({M::mla_up_proj})},
      {"selective: mla_up_proj (assumed, MB 25.11 GB200 recipe)", bits({M::mla_up_proj})},
      {"selective: mla_up_proj (recipe)", bits({M::mla_up_proj})},
      {"selective: mlp", bits({M::mlp})},
      {"selective: mlp, mla_up_proj", bits({M::mlp, M::mla_up_proj})},
      {"selective: mlp, moe_act", bits({M::mlp, M::moe_act})},
      {"selective: moe_act, layernorm", bits({M::moe_act, M::layernorm})},
  };
  CHECK(values.size() >= 10);
  for (const auto& v : values) {
    CAPTURE(v);
    if (v.empty()) {  // "not stated" is not "none"
      CHECK_THROWS_AS(parse_recompute(v), std::invalid_argument);
      continue;
    }
    const auto it = expected.find(v);
    REQUIRE_MESSAGE(it != expected.end(), "new recompute value in groundtruth.csv: add it to this test");
    const Recompute r = parse_recompute(v);
    CHECK(r.granularity == (it->second == 0 ? RecomputeGranularity::none : RecomputeGranularity::selective));
    CHECK(r.modules == it->second);
  }
}
