#pragma once
// Megatron DDP's gradient / parameter buckets of one model chunk (Megatron-LM 99a10812
// param_and_grad_buffer.py:940-990: the chunk's parameters are laid out in reverse of their registration, i.e. in
// the order the backward produces their gradients, and a new bucket starts once the current one holds
// bucket_size parameters; dense and expert parameters live in separate buffers with buckets of their own,
// distributed_data_parallel.py:294-305). Here a bucket boundary falls inside a unit (a layer, the embedding, the
// head) in proportion to its parameters; Megatron's falls after the parameter that fills the bucket.
#include <array>
#include <map>
#include <utility>
#include <vector>

#include "memory/memory_model.hpp"

namespace moesim::workload {

class BucketPlan {
 public:
  // `units`: (key, parameters per GPU) in backward order; `bucket`: the bucket size in parameters (> 0).
  BucketPlan(const std::vector<std::pair<int, memory::LayerShare>>& units, double bucket);

  static constexpr int kSides = 2;  // 0 dense, 1 expert
  // Each side's bucket sizes in parameters, in backward (bucket index) order; the last one holds the remainder.
  const std::vector<double>& sizes(int side) const { return sizes_[static_cast<std::size_t>(side)]; }
  // The bucket indices unit `key` has parameters in on `side`, lowest first; empty if none (or an unknown key).
  std::vector<int> buckets_of(int key, int side) const;
  // Where unit `key`'s parameters end on `side`, in parameters from the start of the backward order.
  double end_of(int key, int side) const;
  double total(int side) const { return totals_[static_cast<std::size_t>(side)]; }

 private:
  double bucket_;
  std::array<std::vector<double>, kSides> sizes_;
  std::array<double, kSides> totals_{};
  std::map<int, std::array<std::pair<double, double>, kSides>> ranges_;  // by key: [begin, end) per side
};

}  // namespace moesim::workload
