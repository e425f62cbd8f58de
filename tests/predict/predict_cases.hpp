#pragma once
// Small cases for the step-level tests: the hand-written small-moe model (tests/fixtures/predict/small_moe.json)
// with a layout file from tests/fixtures/predict/ on a catalog system.
#include <memory>
#include <string>

#include "config/document.hpp"
#include "core/error.hpp"
#include "layout/layout_loader.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"
#include "predict/predict_step.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::test {

inline const std::string kPredictFixtures = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

inline const topology::SystemCatalog& systems() {
  static const auto catalog = topology::SystemCatalog::load(MOESIM_SOURCE_DIR);
  return catalog;
}

// small-moe with the layout of `layout_file` (under tests/fixtures/predict/) on catalog system `system`.
inline predict::Case small_case(const std::string& layout_file, const std::string& system) {
  Diagnostics diags;
  const auto doc = config::load_file(kPredictFixtures + layout_file, diags);
  auto layout = layout::read_layout(doc.json, doc.file, diags);
  diags.throw_if_any();
  return {model::load_model_file(kPredictFixtures + "small_moe.json"), systems().resolve(system), layout};
}

// The two reference cases: 8 GPUs of a DGX H100 (1F1B, BF16 all-to-all) and 64 GPUs of a GB200 NVL72
// (interleaved, MXFP8 HybridEP, A2A overlap, partial CUDA graphs).
inline predict::Case h100x8() { return small_case("h100x8.json", "dgx-h100"); }
inline predict::Case gb200x64() { return small_case("gb200x64.json", "gb200-nvl72"); }

}  // namespace moesim::test

namespace moesim::test {
// The GB200 case scaled to 256 GPUs (4 NVL72 racks at 64 GPUs each, EP64 spanning racks, GBS 1024): EP, DP and
// PP traffic cross the NIC and are exposed at the same instants.
inline predict::Case gb200x256() {
  auto c = gb200x64();
  c.layout.gpus = 256;
  c.layout.gbs = 1024;
  c.layout.ep = 64;
  return c;
}
}  // namespace moesim::test
