#pragma once
// Which Transformer Engine a published measurement ran on, read from its source text (groundtruth.csv's
// `source` column names the NeMo container or the guide it comes from).
#include <optional>
#include <string_view>

#include "layout/te_version.hpp"

namespace moesim::predict {

// The TE release of the NeMo container named in `source` ("26.02 NeMo container", "ngc26.04"), or of the
// Megatron-LM DeepSeek-V3 GB200 optimisation guide; nullopt when the text names neither, or a container older
// than the table (the layout default applies). A container between or after listed ones reads as the newest
// listed one before it (26.08 as 26.06: kLatestTeVersion).
std::optional<layout::TeVersion> te_version_from_source(std::string_view source);

}  // namespace moesim::predict
