#pragma once
// Internal to topology/: JSON -> part structs, through the strict ObjectReader. Problems go to the
// reader's Diagnostics; the caller throws once per file (or once for the whole catalog).
#include <string>

#include "config/object_reader.hpp"
#include "topology/parts.hpp"

namespace moesim::topology::detail {

// The optional "calibration" object of `parent`: { name: {value, unit, source, note?} }.
CalibrationFigures read_calibration(config::ObjectReader& parent);

GpuSpec read_gpu(config::ObjectReader& r, std::string name);
NicSpec read_nic(config::ObjectReader& r, std::string name);
SwitchSpec read_switch(config::ObjectReader& r, std::string name);

}  // namespace moesim::topology::detail
