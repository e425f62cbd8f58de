// Fuzz target: config loading. Each input is written to a file and read as every JSON input moesim takes: a model
// (catalog format or Hugging Face config.json), a system (against the bundled parts), a layout / case, a GPU, NIC
// and switch part. What loads is then counted (parameters, FLOPs) and checked (layout feasibility), since absurd
// but well-typed sizes are where overflows hide.
#include <cstdint>

#include "config/document.hpp"
#include "fuzz_support.hpp"
#include "layout/feasibility.hpp"
#include "layout/layout_loader.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "model/flops.hpp"
#include "model/model_loader.hpp"
#include "model/parameters.hpp"
#include "topology/part_files.hpp"
#include "topology/system_catalog.hpp"

using namespace moesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto systems = topology::SystemCatalog::load(MOESIM_SOURCE_DIR);
  static const auto deepseek =
      memory::model_facts(model::load_model_file(MOESIM_SOURCE_DIR "/models/deepseek-v3.json"));
  if (size > 64 * 1024) return 0;
  const std::string path = fuzz::write_input(data, size, "input.json");
  fuzz::expect_answer("model", [&] {
    const auto m = model::load_model_file(path);
    const auto counts = model::count_parameters(m);
    (void)model::training_flops_per_token(m);
    (void)counts;
  });
  fuzz::expect_answer("system", [&] { (void)systems.load_system_file(path); });
  fuzz::expect_answer("layout", [&] {
    Diagnostics diags;
    const auto doc = config::load_file(path, diags);
    diags.throw_if_any();
    const auto c = layout::read_case(doc.json, doc.file, diags);
    diags.throw_if_any();
    (void)layout::feasibility_problems(c.layout, deepseek);
  });
  fuzz::expect_answer("gpu", [&] { (void)topology::read_gpu_file(path); });
  fuzz::expect_answer("nic", [&] { (void)topology::read_nic_file(path); });
  fuzz::expect_answer("switch", [&] { (void)topology::read_switch_file(path); });
  return 0;
}
