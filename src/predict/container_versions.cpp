#include "predict/container_versions.hpp"

#include <array>
#include <regex>
#include <string>

namespace moesim::predict {
namespace {

struct ContainerTe {
  const char* container;
  layout::TeVersion te;
};

// Megatron-Bridge docs/releases/software-versions.md @067f987d ("Software Component Versions"); 26.04.01 is
// Bridge 0.4.2 (docs/fern/docs.yml), whose uv.lock pins TE 2.14.1.
constexpr ContainerTe kContainers[] = {
    {"25.09", {2, 7}}, {"25.11", {2, 9}}, {"26.02", {2, 12}}, {"26.04", {2, 14}}, {"26.04.01", {2, 14}}, {"26.06", {2, 16}},
};

// "YY.MM" or "YY.MM.PP" as comparable numbers.
std::array<int, 3> release_of(const std::string& name) {
  std::array<int, 3> v{0, 0, 0};
  std::size_t i = 0;
  for (int part = 0; part < 3 && i < name.size(); ++part) {
    std::size_t used = 0;
    v[static_cast<std::size_t>(part)] = std::stoi(name.substr(i), &used);
    i += used + 1;  // past the number and its dot
  }
  return v;
}

// The TE of the newest listed container at or before `name` (a container ships what its predecessor did or
// newer; 26.08 reads as 26.06's 2.16, the newest known); nullopt before the first listed one.
std::optional<layout::TeVersion> container_te(const std::string& name) {
  std::optional<layout::TeVersion> te;
  for (const auto& c : kContainers)
    if (release_of(c.container) <= release_of(name)) te = c.te;
  return te;
}

}  // namespace

std::optional<layout::TeVersion> te_version_from_source(std::string_view source) {
  const std::string s(source);
  // Megatron-LM docs/discussions/deepseek-v3-gb200-optimization: its reproduce guide builds "TE v2.9 plus" three
  // CPU / quantization commits (Megatron-LM 1d9edcf8c7, deepseek-v3-gb200-reproduce-guide.md).
  if (s.find("deepseek-v3-gb200-optimization") != std::string::npos) return layout::TeVersion{2, 9};
  static const std::regex named(R"((\d\d\.\d\d(?:\.\d\d)?) NeMo container)", std::regex::icase);
  static const std::regex ngc(R"(ngc(\d\d\.\d\d(?:\.\d\d)?))", std::regex::icase);
  std::smatch m;
  if (std::regex_search(s, m, named) || std::regex_search(s, m, ngc)) return container_te(m[1].str());
  return std::nullopt;
}

}  // namespace moesim::predict
