#pragma once
// EventQueue: a binary min-heap of events ordered by (time, sequence number). The sequence number is the
// order of push, so events at the same picosecond pop in the order they were scheduled and a run is
// bit-for-bit reproducible (no pointer or hash order anywhere). O(log n) push and pop.
#include <cstdint>
#include <queue>
#include <vector>

#include "core/units.hpp"

namespace moesim::engine {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    Picoseconds time;
    std::uint64_t seq;
    Payload payload;
  };

  void push(Picoseconds time, Payload payload) { heap_.push(Event{time, next_seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // Precondition: !empty().
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace moesim::engine
