#pragma once
// The one byte count of a pass over routed token copies (permute, unpermute and the dispatchers' sorts), used
// by both sides of calibration so they cannot disagree:
//   - the step builder prices each such pass as a MemoryBound kernel of these bytes
//     (src/workload/layer_costs.cpp, token_copies);
//   - the fitter's byte feature of the permute and unpermute families (kernels/fit/features.cpp), so a fitted
//     coefficient multiplies exactly the bytes the builder hands the fitted model.
// Count: every routed copy (tokens x top_k, times the capacity scale of token dropping) read once and written once,
// hidden x element_bytes each. This is the builder's modelling choice; the physically smallest traffic of a permute
// (each token read once, top_k copies written) or an unpermute (top_k copies read, one token written) is
// tokens x hidden x element_bytes x (1 + top_k) (min_permute_bytes), which the fitter uses only as the physical
// floor below which a measurement is refused.
namespace moesim::kernels {

inline double routed_copy_pass_bytes(double tokens, double top_k, double hidden, double element_bytes,
                                     double copies_scale = 1.0) {
  return tokens * top_k * hidden * element_bytes * 2 * copies_scale;
}

inline double min_permute_bytes(double tokens, double top_k, double hidden, double element_bytes) {
  return tokens * hidden * element_bytes * (1 + top_k);
}

}  // namespace moesim::kernels
