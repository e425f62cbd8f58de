#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/opt_layout_flags.hpp"
#include "core/error.hpp"
#include "layout/default_case.hpp"
#include "layout/layout_loader.hpp"

using moesim::Diagnostics;
using moesim::config::Json;

namespace {

// Parses `args` with the layout flags on a fresh subcommand-like app.
moesim::cli::LayoutFlags parse(std::vector<std::string> args) {
  moesim::cli::LayoutFlags flags;
  CLI::App app{"test"};
  moesim::cli::add_layout_flags(app, flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return flags;
}

std::vector<std::string> flag_problems(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d.items()) out.push_back(x.file + " " + x.pointer + ": " + x.message);
  return out;
}

}  // namespace

TEST_CASE("short and Megatron-LM flag names fill the same keys") {
  Diagnostics diags;
  const Json j = moesim::cli::layout_json(parse({"--gpus",
                                                 "1024",
                                                 "--tensor-model-parallel-size",
                                                 "2",
                                                 "--pp",
                                                 "8",
                                                 "--expert-model-parallel-size",
                                                 "64",
                                                 "--gbs",
                                                 "8192",
                                                 "--seq-length",
                                                 "4096",
                                                 "--precision",
                                                 "FP8",
                                                 "--dispatcher",
                                                 "DeepEP",
                                                 "--recompute",
                                                 "selective: mlp",
                                                 "--cuda-graph",
                                                 "partial",
                                                 "--a2a-overlap",
                                                 "--mtp-num-layers",
                                                 "1",
                                                 "--grad-reduce-in-bf16"}),
                                          diags);
  REQUIRE(diags.empty());
  CHECK(j == Json::parse(R"({"gpus": 1024, "tp": 2, "pp": 8, "ep": 64, "gbs": 8192, "seq": 4096,
      "precision": "fp8-tensorwise", "dispatcher": "deepep", "recompute": "selective: mlp", "cuda_graph": "partial",
      "a2a_overlap": true, "mtp": 1, "grad_reduce_dtype": "bf16"})"));
  const auto l = moesim::layout::read_layout(j, "<flags>", diags);
  REQUIRE(diags.empty());
  CHECK(l.etp == 2);  // Megatron's default: expert_tensor_parallel_size = tp
  CHECK(l.edp() == 1);
}

TEST_CASE("boolean flags take an optional value; Megatron recompute flags") {
  Diagnostics diags;
  const Json j = moesim::cli::layout_json(
      parse({"--a2a-overlap=false", "--sequence-parallel", "--recompute-granularity", "selective",
             "--recompute-modules", "mla_up_proj", "mlp", "--use-distributed-optimizer=0"}),
      diags);
  REQUIRE(diags.empty());
  CHECK(j == Json::parse(R"({"a2a_overlap": false, "sequence_parallel": true, "distributed_optimizer": false,
      "recompute_granularity": "selective", "recompute_modules": ["mla_up_proj", "mlp"]})"));
}

TEST_CASE("flags overlay the file or the caller's base; --set comes last") {
  Diagnostics diags;
  const Json base = moesim::layout::default_case_json();
  Json j =
      moesim::cli::layout_json(parse({"--gpus", "512", "--set", "gbs=8192", "--set", "precision=bf16"}), diags, base);
  REQUIRE(diags.empty());
  auto c = moesim::layout::read_case(j, "<flags>", diags);
  REQUIRE(diags.empty());
  CHECK(c.model == "deepseek-v3");
  CHECK(c.layout.gpus == 512);
  CHECK(c.layout.gbs == 8192);
  CHECK(c.layout.ep == 32);
  CHECK(c.layout.precision == moesim::layout::Precision::bf16);

  // A file with Megatron spellings: a flag or --set under the other spelling replaces it (no both-spellings error).
  j = moesim::cli::layout_json(parse({"--layout", MOESIM_FIXTURES_DIR "/layout/megatron_names.json", "--tp", "4",
                                      "--set", "seq=8192", "--recompute", "none"}),
                               diags);
  REQUIRE(diags.empty());
  const auto l = moesim::layout::read_layout(j, "<merged>", diags);
  REQUIRE(diags.empty());
  CHECK(l.tp == 4);
  CHECK(l.seq == 8192);
  CHECK(l.recompute.granularity == moesim::layout::RecomputeGranularity::none);
  CHECK(l.ep == 64);
  CHECK_FALSE(j.contains("tensor_model_parallel_size"));
  CHECK_FALSE(j.contains("recompute_modules"));
}

TEST_CASE("flag errors are reported under <flags> with the flag name, all at once") {
  Diagnostics diags;
  moesim::cli::layout_json(
      parse({"--tp", "0", "--pp", "two", "--precision", "mxpf8", "--pp-layout", "Et*4|(t", "--cuda-graph", "ful",
             "--mtp", "-1", "--recompute-modules", "moe_ac", "--a2a-overlap=maybe"}),
      diags);
  CHECK(flag_problems(diags) ==
        std::vector<std::string>{
            "<flags> --tp: expected a positive integer, got \"0\"",
            "<flags> --pp: expected a positive integer, got \"two\"",
            "<flags> --precision: expected precision bf16 | fp8-tensorwise | fp8-blockwise | mxfp8 | nvfp4, got "
            "\"mxpf8\" (did you mean \"mxfp8\"?)",
            "<flags> --cuda-graph: expected cuda_graph none | partial | full, got \"ful\" (did you mean \"full\"?)",
            "<flags> --a2a-overlap: expected true or false, got \"maybe\"",
            "<flags> --mtp: expected a non-negative integer, got \"-1\"",
            "<flags> --pp-layout: bad pipeline layout \"Et*4|(t\": column 6: unclosed '('",
            "<flags> --recompute-modules: expected recompute module core_attn | mlp | moe | moe_act | layernorm | "
            "mla_up_proj | shared_experts, got \"moe_ac\" (did you mean \"moe_act\"?)"});
}

TEST_CASE("both spellings of one field on the command line, and the not-vpp flag") {
  Diagnostics diags;
  moesim::cli::layout_json(parse({"--tp", "2", "--tensor-model-parallel-size", "2", "--recompute", "full",
                                  "--recompute-granularity", "full", "--num-layers-per-virtual-pipeline-stage", "4"}),
                           diags);
  CHECK(flag_problems(diags) ==
        std::vector<std::string>{
            "<flags> --tensor-model-parallel-size: given both as --tp and --tensor-model-parallel-size; keep one",
            "<flags> --recompute-granularity: given both as --recompute and --recompute-granularity; keep one",
            "<flags> --num-layers-per-virtual-pipeline-stage: --num-layers-per-virtual-pipeline-stage is layers per "
            "virtual stage, not the number of virtual stages; give --vpp (--virtual-pipeline-model-parallel-size) "
            "or --pp-layout instead"});
}

TEST_CASE("nothing given: any() is false and the result is the caller's base") {
  const auto flags = parse({});
  CHECK_FALSE(flags.any());
  Diagnostics diags;
  CHECK(moesim::cli::layout_json(flags, diags) == Json::object());
  CHECK(moesim::cli::layout_json(flags, diags, moesim::layout::default_case_json()) ==
        moesim::layout::default_case_json());
  CHECK(diags.empty());
}

TEST_CASE("a missing --layout file and a malformed --set") {
  Diagnostics diags;
  moesim::cli::layout_json(parse({"--layout", MOESIM_FIXTURES_DIR "/layout/none.json"}), diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].message.find("cannot open") != std::string::npos);
  CHECK_THROWS_AS(moesim::cli::layout_json(parse({"--set", "gbs"}), diags), moesim::UsageError);
}

TEST_CASE("the Transformer Engine release and token-dropping flags: values and errors") {
  Diagnostics ok;
  const Json j = moesim::cli::layout_json(
      parse({"--te-version", "v2.14.1", "--moe-expert-capacity-factor", "1.5", "--pad-expert-input-to-capacity"}), ok);
  REQUIRE(ok.empty());
  CHECK(j["te_version"] == "2.14");
  CHECK(j["expert_capacity_factor"] == 1.5);  // the Megatron spelling lands on the short key
  CHECK(j["pad_expert_input_to_capacity"] == true);
  Diagnostics diags;
  moesim::cli::layout_json(parse({"--te-version", "2.x", "--expert-capacity-factor", "0"}), diags);
  CHECK(flag_problems(diags) ==
        std::vector<std::string>{
            "<flags> --expert-capacity-factor: expected a positive number, got \"0\"",
            "<flags> --te-version: expected a Transformer Engine version MAJOR.MINOR such as \"2.12\", got \"2.x\""});
}
