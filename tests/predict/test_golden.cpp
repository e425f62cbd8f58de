// Golden step reports: the full `moesim run --json` StepReport of two small cases, compared byte for byte with
// the reviewed files in tests/golden/. After an intended model change, regenerate them with
//   MOESIM_UPDATE_GOLDEN=1 ./test_predict -tc='golden*'
// and review the diff (git diff tests/golden/) before committing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "predict_cases.hpp"

namespace {
using namespace moesim;

const std::string kGolden = std::string(MOESIM_SOURCE_DIR) + "/tests/golden/";

bool updating() {
  const char* v = std::getenv("MOESIM_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

void check_golden(const std::string& name, const predict::Case& c) {
  const std::string actual = report::to_json_text(predict::predict_step(c).report);
  const std::string path = kGolden + name + ".json";
  if (updating()) {
    std::ofstream(path) << actual;
    MESSAGE("rewrote " << path);
    return;
  }
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "missing golden file " << path << " (run with MOESIM_UPDATE_GOLDEN=1)");
  std::stringstream expected;
  expected << in.rdbuf();
  CHECK_MESSAGE(actual == expected.str(),
                "step report differs from " << path
                                            << "; if intended, rerun with MOESIM_UPDATE_GOLDEN=1 and review the diff\n"
                                            << actual);
}
}  // namespace

TEST_CASE("golden: small-moe on 8 x DGX H100 (1F1B PP2 EP4, BF16 all-to-all)") {
  check_golden("small_moe_h100x8", test::h100x8());
}

TEST_CASE("golden: small-moe on 64 x GB200 NVL72 (PP2 VPP2 EP32, MXFP8 HybridEP, A2A overlap)") {
  check_golden("small_moe_gb200x64", test::gb200x64());
}
