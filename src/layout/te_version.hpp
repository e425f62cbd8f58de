#pragma once
// The Transformer Engine release a run uses. Some costs depend on it (host time per TE module call); the version
// is the only software-stack input moesim reads, because TE's release notes and PRs say what changed when.
#include <compare>
#include <string>
#include <string_view>

namespace moesim::layout {

struct TeVersion {
  int major = 2;
  int minor = 16;
  auto operator<=>(const TeVersion&) const = default;
};

// The newest TE release moesim knows the costs of: 2.16, the TE of the NeMo 26.06 container (Megatron-Bridge
// docs/releases/software-versions.md). The default for a layout that does not name one.
inline constexpr TeVersion kLatestTeVersion{2, 16};

// TE 2.10 merged #2377 "Reduce CPU overheads" and #2400 (Nov 2025); a maintainer then wrote that a BF16 te.Linear
// costs "nearly the same" host time as a plain torch Linear (TE issue #2126, 2026-01-03). Before it, TE issue #2053
// measured te.Linear at 2.7x the torch call on Grace (99.7 vs 37.1 us).
inline constexpr TeVersion kTeHostOverheadReduced{2, 10};

// "MAJOR.MINOR", optionally with a leading 'v' and a patch or local suffix that is ignored ("2.14.1",
// "2.14+71bbefb", "v2.9"). Throws std::invalid_argument naming the expected form.
TeVersion parse_te_version(std::string_view text);
std::string to_string(TeVersion v);

}  // namespace moesim::layout
