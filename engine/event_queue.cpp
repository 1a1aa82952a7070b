#include "engine/event_queue.hpp"

#include <stdexcept>
#include <utility>

namespace vramsim {

template <unsigned Arity>
EventHandle DaryHeapQueue<Arity>::insert(SimTime time, Callback fn) {
  std::uint32_t slot;
  if (next_seq_ >> (64 - kSlotBits)) throw std::length_error("EventQueue: 2^40 inserts exhausted");
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() > kSlotMask) throw std::length_error("EventQueue: more than 2^24 events pending");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot].fn = std::move(fn);
  slots_[slot].seq = seq;
  heap_.push_back(Entry{time, (seq << kSlotBits) | slot});
  sift_up(heap_.size() - 1);
  ++counters_.inserted;
  return EventHandle{slot, seq};
}

template <unsigned Arity>
void DaryHeapQueue<Arity>::sift_up(std::size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / Arity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

// Bottom-up removal: walk the hole at the root down to a leaf along the
// smaller children, then drop the last entry into it and sift it up. The last
// entry is usually large, so this saves the compare against it at every level.
template <unsigned Arity>
void DaryHeapQueue<Arity>::pop_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  while (true) {
    const std::size_t first = i * Arity + 1;
    if (first >= n) break;
    const std::size_t end = first + Arity < n ? first + Arity : n;
    std::size_t best = first;
    for (std::size_t c = first + 1; c < end; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    const std::size_t next = best * Arity + 1;
    if (next < n) __builtin_prefetch(&heap_[next]);
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  sift_up(i);
}

template <unsigned Arity>
void DaryHeapQueue<Arity>::drop_dead_top() {
  while (!heap_.empty() && !live(heap_.front())) pop_top();
}

template <unsigned Arity>
SimTime DaryHeapQueue<Arity>::peek_time() {
  drop_dead_top();
  return heap_.empty() ? kTimeMax : heap_.front().time;
}

template <unsigned Arity>
Event DaryHeapQueue<Arity>::pop() {
  drop_dead_top();
  if (heap_.empty()) throw std::logic_error("EventQueue::pop on an empty queue");
  const Entry top = heap_.front();
  pop_top();
  Slot& s = slots_[top.slot()];
  Event ev{top.time, top.seq(), std::move(s.fn)};
  s.fn = nullptr;
  s.seq = 0;
  free_.push_back(top.slot());
  ++counters_.popped;
  // The next pop reads the new root's slot first (liveness, then the
  // callback); fetch it now so the miss overlaps the caller's work.
  if (!heap_.empty()) __builtin_prefetch(&slots_[heap_.front().slot()]);
  return ev;
}

template <unsigned Arity>
bool DaryHeapQueue<Arity>::cancel(EventHandle h) {
  if (!h.valid() || h.slot >= slots_.size() || slots_[h.slot].seq != h.seq) return false;
  Slot& s = slots_[h.slot];
  s.fn = nullptr;
  s.seq = 0;  // the heap entry no longer matches: skipped when it surfaces
  free_.push_back(h.slot);
  ++counters_.cancelled;
  return true;
}

template class DaryHeapQueue<2>;
template class DaryHeapQueue<4>;

}  // namespace vramsim
