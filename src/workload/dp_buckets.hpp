#pragma once
// Megatron DDP's gradient / parameter buckets of one model chunk (Megatron-LM 99a10812
// param_and_grad_buffer.py:940-990: the chunk's parameters are laid out in reverse of their registration, i.e. in
// the order the backward produces their gradients, and a new bucket starts once the current one holds
// bucket_size parameters; dense and expert parameters live in separate buffers with buckets of their own,
// distributed_data_parallel.py:294-305). Here a bucket boundary falls inside a unit (a layer, the embedding, the
// head) in proportion to its parameters; Megatron's falls after the parameter that fills the bucket.
//
// With FP8 parameters the FP8 weights and the rest (embedding, output layer) sit in two buffers, and Megatron
// merges every bucket of the non-FP8 buffer into the FP8 buffer's last bucket group (the start of the model):
// one coalesced collective, gathered first in the forward and reduce-scattered last in the backward
// (Megatron-LM 25.09-alpha.rc1 param_and_grad_buffer.py:877-990 partition_buckets, case 3). Those units are the
// plan's `tail`: they join the last bucket whatever its size.
#include <array>
#include <map>
#include <utility>
#include <vector>

#include "memory/memory_model.hpp"

namespace moesim::workload {

class BucketPlan {
 public:
  using Units = std::vector<std::pair<int, memory::LayerShare>>;
  // `units`: (key, parameters per GPU) in backward order; `bucket`: the bucket size in parameters (> 0);
  // `tail`: units merged into the last bucket (the non-FP8 buffer of an FP8-parameter model), after `units`.
  BucketPlan(const Units& units, double bucket, const Units& tail = {});

  static constexpr int kSides = 2;  // 0 dense, 1 expert
  // Each side's bucket sizes in parameters, in backward (bucket index) order; the last one holds the remainder
  // and the tail.
  const std::vector<double>& sizes(int side) const { return sizes_[static_cast<std::size_t>(side)]; }
  // Of each bucket's parameters, those of tail units (zero except in the last bucket).
  const std::vector<double>& tail_params(int side) const { return tail_[static_cast<std::size_t>(side)]; }
  // The bucket indices unit `key` has parameters in on `side`, lowest first; empty if none (or an unknown key).
  std::vector<int> buckets_of(int key, int side) const;
  // Unit `key`'s parameters in each of its buckets on `side`: (bucket index, parameters), lowest index first.
  std::vector<std::pair<int, double>> shares_of(int key, int side) const;
  double total(int side) const { return totals_[static_cast<std::size_t>(side)]; }

 private:
  std::array<std::vector<double>, kSides> sizes_, tail_;
  std::array<std::vector<double>, kSides> ends_;  // cumulative end of each bucket on the unit axis
  std::array<double, kSides> totals_{};
  std::map<int, std::array<std::pair<double, double>, kSides>> ranges_;  // by key: [begin, end) per side
};

}  // namespace moesim::workload
