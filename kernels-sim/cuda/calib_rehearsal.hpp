#pragma once
// Rehearsal of a calibration run without a GPU, and the run's time estimate. Host-only.
//
// The rehearsal writes the records a run of the plan would write, in the program's exact format, with FAKE
// timings from a formula (fake_time_us) and a device and source that say so ("REHEARSAL ..."). It exists to
// test the writer against `moesim fit` (tests/kernels/calibration_format_sample/, tests/kernels/
// test_calib_rehearsal.cpp); its output is never a measurement and never goes under kernels-sim/data/
// (`moesim fit` refuses REHEARSAL records unless told --allow-rehearsal).
#include <ostream>
#include <string>

#include "calib_plan.hpp"

namespace calib {

// The source field of every rehearsal record; `moesim fit` recognises the "REHEARSAL" prefix.
extern const char* const rehearsal_source;

// The written_at stamp of every rehearsal line: plainly not a real time.
extern const char* const rehearsal_written_at;

// The device the rehearsal pretends to run on: an H200's name and SM count (so the fitter finds its peaks),
// versions and date that are plainly not real.
DeviceInfo rehearsal_device();

// A made-up time for a case: fixed cost + work at assumed fractions of the H200 datasheet peaks. Not a
// prediction of anything; positive and above the roofline bound so the fit accepts it.
double fake_time_us(const Record& r);

// Writes the whole plan as JSONL: every case timed with fake_time_us, except every 17th, written as a skip
// record (so the sample carries that form too).
void write_rehearsal(const PlanOptions& options, std::ostream& out);

// Seconds the GPU run of a suite is expected to take: per configuration, (warm-up + timed calls) x (fake time +
// 80 us of flush, spin and event overhead) + allocation and random fill. An estimate for the dry run only.
double estimated_seconds(const Suite& suite);

// The dry run's table: each suite, its configurations, records and estimated time, and the totals.
void print_plan(const std::vector<Suite>& plan, std::ostream& out);

}  // namespace calib
