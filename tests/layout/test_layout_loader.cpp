#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/document.hpp"
#include "core/error.hpp"
#include "layout/default_case.hpp"
#include "layout/feasibility.hpp"
#include "layout/layout_fields.hpp"
#include "layout/layout_loader.hpp"
#include "layout_test_support.hpp"

using namespace moesim;
using namespace moesim::layout;

namespace {

const std::string kDir = MOESIM_FIXTURES_DIR "/layout/";

// "pointer: message" of every diagnostic from reading a fixture as a case.
std::vector<std::string> case_problems(const std::string& name) {
  Diagnostics diags;
  const config::Document doc = config::load_file(kDir + name, diags);
  REQUIRE(diags.empty());
  read_case(doc.json, doc.file, diags);
  std::vector<std::string> out;
  for (const auto& d : diags.items()) {
    CHECK(d.file == kDir + name);
    out.push_back(d.pointer + ": " + d.message);
  }
  return out;
}

Layout read_text(const std::string& text, Diagnostics& diags) {
  return read_layout(config::Json::parse(text), "<test>", diags);
}

using test::deepseek_v3;

}  // namespace

TEST_CASE("the default case is GT001: DeepSeek-V3 on 256 GB300, and it is feasible") {
  Diagnostics diags;
  const CaseSpec c = read_case(default_case_json(), "<built-in>", diags);
  REQUIRE(diags.empty());
  CHECK(c.model == "deepseek-v3");
  CHECK(c.system == "gb300-nvl72");
  const Layout& l = c.layout;
  CHECK(l.gpus == 256);
  CHECK(l.tp == 1);
  CHECK(l.pp == 2);
  CHECK(l.vpp == 8);
  CHECK(l.cp == 1);
  CHECK(l.ep == 32);
  CHECK(l.etp == 1);
  CHECK(l.mbs == 1);
  CHECK(l.gbs == 4096);
  CHECK(l.seq == 4096);
  CHECK(l.precision == Precision::mxfp8);
  CHECK(l.dispatcher == Dispatcher::hybridep);
  CHECK(l.recompute.granularity == RecomputeGranularity::none);
  CHECK(l.mtp == 1);
  CHECK(l.cuda_graph == CudaGraph::full);
  CHECK(l.a2a_overlap);
  CHECK(l.pp_layout == "Et*4|(t*4|)*14tmL");
  CHECK(l.distributed_optimizer);
  CHECK(l.grad_reduce_dtype == Dtype::bf16);
  CHECK(l.optimizer_moment_dtype == Dtype::bf16);
  CHECK(l.dp() == 128);
  CHECK(l.edp() == 4);
  CHECK(l.num_microbatches() == 32);
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
}

TEST_CASE("a plain layout rejects model/system keys; a case accepts them") {
  Diagnostics diags;
  read_layout(default_case_json(), "<built-in>", diags);
  REQUIRE(diags.size() == 2);
  CHECK(diags.items()[0].pointer == "/model");
  CHECK(diags.items()[0].message.rfind("unknown key \"model\"", 0) == 0);
  CHECK(diags.items()[1].pointer == "/system");
}

TEST_CASE("defaults: Megatron's etp = tp, vpp from pp_layout, required keys") {
  Diagnostics diags;
  Layout l = read_text(R"({"gpus": 64, "tp": 4, "gbs": 64, "seq": 8192})", diags);
  REQUIRE(diags.empty());
  CHECK(l.etp == 4);
  CHECK(l.vpp == 1);
  CHECK(l.uses_sequence_parallel());
  CHECK(l.precision == Precision::bf16);
  CHECK(l.grad_reduce_dtype == Dtype::fp32);

  l = read_text(R"({"gpus": 256, "pp": 8, "gbs": 64, "seq": 4096, "pp_layout": "Et|(tt|)*30L"})", diags);
  REQUIRE(diags.empty());
  CHECK(l.vpp == 4);  // 32 stages / pp 8

  read_text(R"({"tp": 2})", diags);
  REQUIRE(diags.size() == 3);
  CHECK(diags.items()[0].message == "missing required key \"gpus\"");
  CHECK(diags.items()[1].message == "missing required key \"gbs\" (Megatron-LM: \"global_batch_size\")");
  CHECK(diags.items()[2].message == "missing required key \"seq\" (Megatron-LM: \"seq_length\")");
}

TEST_CASE("Megatron-LM names read like the short ones") {
  Diagnostics diags;
  const config::Document doc = config::load_file(kDir + "megatron_names.json", diags);
  const Layout l = read_layout(doc.json, doc.file, diags);
  REQUIRE(diags.empty());
  CHECK(l.gpus == 1024);
  CHECK(l.tp == 2);
  CHECK(l.pp == 8);
  CHECK(l.vpp == 1);  // null = no interleaving
  CHECK(l.ep == 64);
  CHECK(l.gbs == 8192);
  CHECK(l.seq == 4096);
  CHECK(l.dispatcher == Dispatcher::alltoall);
  CHECK(l.recompute == parse_recompute("selective: mlp, mla_up_proj"));
  CHECK(l.mtp == 1);
  CHECK(l.grad_reduce_dtype == Dtype::bf16);
  CHECK(l.sequence_parallel == true);
  CHECK(l.dp() == 64);
  CHECK(l.edp() == 2);  // H100 recipe of moe-modeling.md §3.1: TP2 PP8 EP64 on 1024 GPUs, EDP=2
}

TEST_CASE("token dropping: capacity factor and padding, in both spellings; padding alone is infeasible") {
  Diagnostics diags;
  auto read = [&](const std::string& text) { return read_layout(config::Json::parse(text), "<json>", diags); };
  const Layout a = read(R"({"gpus": 8, "gbs": 8, "seq": 4096, "expert_capacity_factor": 1.5,
                            "pad_expert_input_to_capacity": true})");
  const Layout b = read(R"({"gpus": 8, "gbs": 8, "seq": 4096, "moe_expert_capacity_factor": 1.5,
                            "moe_pad_expert_input_to_capacity": true})");
  REQUIRE(diags.empty());
  CHECK(a.expert_capacity_factor == 1.5);
  CHECK(a.pad_expert_input_to_capacity);
  CHECK(a == b);
  CHECK_FALSE(a.syncs_token_counts());
  Layout dropless = a;
  dropless.expert_capacity_factor.reset();
  dropless.pad_expert_input_to_capacity = false;
  CHECK(dropless.syncs_token_counts());
  read(R"({"gpus": 8, "gbs": 8, "seq": 4096, "expert_capacity_factor": 0})");
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].pointer == "/expert_capacity_factor");
}

TEST_CASE("te_version must be a quoted string: a JSON number cannot tell 2.1 from 2.10") {
  Diagnostics diags;
  const Layout l =
      read_layout(config::Json::parse(R"({"gpus": 8, "gbs": 8, "seq": 4096, "te_version": "2.10"})"), "<json>", diags);
  REQUIRE(diags.empty());
  CHECK(l.te_version == TeVersion{2, 10});
  read_layout(config::Json::parse(R"({"gpus": 8, "gbs": 8, "seq": 4096, "te_version": 2.10})"), "<json>", diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].pointer == "/te_version");
  CHECK(diags.items()[0].message ==
        "expected a string such as \"2.12\", got the number 2.1; quote the version (a JSON number cannot tell 2.1 "
        "from 2.10)");
}

TEST_CASE("every field has distinct spellings and the table finds both") {
  for (const auto& f : layout_fields()) {
    CHECK(find_layout_field(f.key) == &f);
    if (!f.megatron.empty()) CHECK(find_layout_field(f.megatron) == &f);
  }
  CHECK(find_layout_field("num_layers_per_virtual_pipeline_stage") == nullptr);
}

// Bad-input fixtures: every problem of a file in one pass, exact pointer and message.
TEST_CASE("fixture: unknown keys with did-you-mean") {
  const auto p = case_problems("unknown_key.json");
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "/dispatchr: unknown key \"dispatchr\" (did you mean \"dispatcher\"?)");
  CHECK(p[1] ==
        "/tensor_model_paralel_size: unknown key \"tensor_model_paralel_size\" (did you mean "
        "\"tensor_model_parallel_size\"?)");
}

TEST_CASE("fixture: both spellings of one field") {
  CHECK(case_problems("both_spellings.json") ==
        std::vector<std::string>{
            "/tensor_model_parallel_size: \"tp\" and its Megatron-LM name \"tensor_model_parallel_size\" are both "
            "given; keep one",
            "/global_batch_size: \"gbs\" and its Megatron-LM name \"global_batch_size\" are both given; keep one",
            "/recompute: give recompute either as \"recompute\" or as Megatron-LM's recompute_granularity / "
            "recompute_modules / recompute_method / recompute_num_layers, not both"});
}

TEST_CASE("fixture: bad enum values with did-you-mean") {
  CHECK(case_problems("bad_enums.json") ==
        std::vector<std::string>{
            "/precision: expected precision bf16 | fp8-tensorwise | fp8-blockwise | mxfp8 | nvfp4, got \"mxpf8\" "
            "(did you mean \"mxfp8\"?)",
            "/dispatcher: \"flex\" is Megatron's dispatcher type; name its backend instead: deepep or hybridep",
            "/cuda_graph: expected cuda_graph none | partial | full, got \"ful\" (did you mean \"full\"?)",
            "/recompute: expected recompute module core_attn | mlp | moe | moe_act | layernorm | mla_up_proj | "
            "shared_experts, got \"moe_ac\" (did you mean \"moe_act\"?)",
            "/te_version: expected a Transformer Engine version MAJOR.MINOR such as \"2.12\", got \"2.x\"",
            "/grad_reduce_dtype: expected dtype bf16 | fp32, got \"fp16\" (did you mean \"bf16\"?)"});
}

TEST_CASE("fixture: zero, negative and fractional sizes") {
  CHECK(case_problems("zero_sizes.json") ==
        std::vector<std::string>{"/gpus: expected a positive integer, got 0",
                                 "/tp: expected a positive integer, got -1", "/mbs: expected a positive integer, got 0",
                                 "/seq: expected a positive integer, got number 4096.5",
                                 "/mtp: expected a non-negative integer, got -1",
                                 "/a2a_overlap: expected true or false, got string \"yes\""});
}

TEST_CASE("fixture: pipeline layout syntax error with its column (exit 2)") {
  CHECK(case_problems("bad_pp_layout.json") ==
        std::vector<std::string>{"/pp_layout: bad pipeline layout \"Et*4|(t*4|)*14tmL)\": column 18: unmatched ')'"});
}

TEST_CASE("fixture: num_layers_per_virtual_pipeline_stage is not vpp") {
  CHECK(case_problems("not_vpp.json") ==
        std::vector<std::string>{
            "/num_layers_per_virtual_pipeline_stage: num_layers_per_virtual_pipeline_stage is layers per virtual "
            "stage, not the number of virtual stages; give vpp (virtual_pipeline_model_parallel_size) or a "
            "pp_layout instead"});
}

TEST_CASE("fixture: a well-formed case that does not divide is infeasible (exit 3), all problems at once") {
  Diagnostics diags;
  const config::Document doc = config::load_file(kDir + "not_divisible.json", diags);
  const CaseSpec c = read_case(doc.json, doc.file, diags);
  REQUIRE(diags.empty());
  CHECK(c.model == "deepseek-v3");
  try {
    check_feasibility(c.layout, deepseek_v3());
    FAIL("expected InfeasibleError");
  } catch (const InfeasibleError& e) {
    CHECK(static_cast<int>(e.code()) == 3);
    CHECK(std::string(e.what()) ==
          "etp*ep*pp=96 does not divide 256 GPUs\n"
          "gbs=100 is not a multiple of mbs*dp=128 (mbs=1, dp=128)\n"
          "ep=48 does not divide 256 experts");
  }
}

TEST_CASE("bad config problems become one ConfigError with exit code 2") {
  Diagnostics diags;
  const config::Document doc = config::load_file(kDir + "bad_enums.json", diags);
  read_case(doc.json, doc.file, diags);
  try {
    diags.throw_if_any();
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(static_cast<int>(e.code()) == 2);
    CHECK(e.diagnostics().size() == 6);
    CHECK(std::string(e.what()).find(kDir + "bad_enums.json:/cuda_graph: expected cuda_graph") != std::string::npos);
  }
}

TEST_CASE("align_param_gather: unset by default (the schedule decides), a boolean when given, else an error") {
  Diagnostics diags;
  CHECK_FALSE(read_text(R"({"gpus": 8, "gbs": 8, "seq": 4096})", diags).align_param_gather.has_value());
  const Layout off = read_text(R"({"gpus": 8, "gbs": 8, "seq": 4096, "align_param_gather": false})", diags);
  REQUIRE(diags.empty());
  CHECK(off.align_param_gather == false);
  read_text(R"({"gpus": 8, "gbs": 8, "seq": 4096, "align_param_gather": "off"})", diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].pointer == "/align_param_gather");
  CHECK(diags.items()[0].message.find("expected") != std::string::npos);
}
