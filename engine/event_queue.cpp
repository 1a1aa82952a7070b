#include "engine/event_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace vramsim {

QueueEntry SlottedEventQueue::take_slot(SimTime time, Callback fn) {
  std::uint32_t slot;
  if (next_seq_ >> (64 - QueueEntry::kSlotBits)) throw std::length_error("EventQueue: 2^40 inserts exhausted");
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() > QueueEntry::kSlotMask) throw std::length_error("EventQueue: more than 2^24 events pending");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot].fn = std::move(fn);
  slots_[slot].seq = seq;
  ++counters_.inserted;
  return QueueEntry{time, (seq << QueueEntry::kSlotBits) | slot};
}

Event SlottedEventQueue::release(const QueueEntry& e) {
  Slot& s = slots_[e.slot()];
  Event ev{e.time, e.seq(), std::move(s.fn)};
  s.fn = nullptr;
  s.seq = 0;
  free_.push_back(e.slot());
  ++counters_.popped;
  return ev;
}

bool SlottedEventQueue::cancel(EventHandle h) {
  if (!h.valid() || h.slot >= slots_.size() || slots_[h.slot].seq != h.seq) return false;
  Slot& s = slots_[h.slot];
  s.fn = nullptr;
  s.seq = 0;  // the queue's entry no longer matches: skipped when it surfaces
  free_.push_back(h.slot);
  ++counters_.cancelled;
  return true;
}

template <unsigned Arity>
EventHandle DaryHeapQueue<Arity>::insert(SimTime time, Callback fn) {
  const Entry e = take_slot(time, std::move(fn));
  heap_.push_back(e);
  sift_up(heap_size() - 1);
  return EventHandle{e.slot(), e.seq()};
}

template <unsigned Arity>
void DaryHeapQueue<Arity>::sift_up(std::size_t i) {
  Entry* const h = heap();
  Entry e = h[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / Arity;
    if (!before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

// Bottom-up removal: walk the hole at the root down to a leaf along the
// smaller children, then drop the last entry into it and sift it up. The
// last entry is usually large, so this saves the compare against it at every
// level. The choice among siblings is made without a branch (a mispredicted
// jump per level otherwise), and every child's children are fetched before
// it, so the next level's load starts whichever child wins.
template <unsigned Arity>
void DaryHeapQueue<Arity>::pop_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_size();
  if (n == 0) return;
  Entry* const h = heap();
  std::size_t i = 0;
  while (true) {
    const std::size_t first = i * Arity + 1;
    if (first >= n) break;
    const std::size_t end = first + Arity < n ? first + Arity : n;
    const std::size_t grand = first * Arity + 1;
    for (std::size_t g = grand; g < grand + Arity * Arity && g < n; g += 64 / sizeof(Entry))
      __builtin_prefetch(&h[g]);
    std::size_t best = first;
    __int128 best_rank = h[first].rank();
    for (std::size_t c = first + 1; c < end; ++c) {
      const __int128 r = h[c].rank();
      const bool smaller = r < best_rank;
      best = smaller ? c : best;
      best_rank = smaller ? r : best_rank;
    }
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  sift_up(i);
}

template <unsigned Arity>
void DaryHeapQueue<Arity>::drop_dead_top() {
  while (heap_size() != 0 && !live(heap()[0])) pop_top();
}

template <unsigned Arity>
SimTime DaryHeapQueue<Arity>::peek_time() {
  drop_dead_top();
  return heap_size() == 0 ? kTimeMax : heap()[0].time;
}

template <unsigned Arity>
Event DaryHeapQueue<Arity>::pop() {
  drop_dead_top();
  if (heap_size() == 0) throw std::logic_error("EventQueue::pop on an empty queue");
  const Entry top = heap()[0];
  pop_top();
  // The next pop reads the new root's slot first (liveness, then the
  // callback); fetch it now so the miss overlaps the caller's work.
  if (heap_size() != 0) prefetch_slot(heap()[0]);
  return release(top);
}

template class DaryHeapQueue<2>;
template class DaryHeapQueue<4>;

namespace {
// early_'s order: a min-heap under std::push_heap's max-heap convention.
bool later(const QueueEntry& a, const QueueEntry& b) { return a.rank() > b.rank(); }
}  // namespace

EventHandle RadixHeapQueue::insert(SimTime time, Callback fn) {
  const QueueEntry e = take_slot(time, std::move(fn));
  if (time < last_) {
    early_.push_back(e);
    std::push_heap(early_.begin(), early_.end(), later);
  } else {
    put(e);
  }
  return EventHandle{e.slot(), e.seq()};
}

bool RadixHeapQueue::settle() {
  while (!early_.empty()) {
    if (live(early_.front())) return true;
    std::pop_heap(early_.begin(), early_.end(), later);
    early_.pop_back();
  }
  for (;;) {
    std::vector<QueueEntry>& zero = buckets_[0];
    while (front_ < zero.size() && !live(zero[front_])) ++front_;
    if (front_ < zero.size()) return true;
    zero.clear();
    front_ = 0;
    nonempty_ &= ~std::uint64_t{1};
    if (nonempty_ == 0) return false;
    spread_lowest();
  }
}

// The lowest non-empty bucket's entries differ from last_ first at the same
// bit, so around the earliest of them they all differ at lower bits only:
// they go to lower buckets, in the order they were in.
void RadixHeapQueue::spread_lowest() {
  const int b = __builtin_ctzll(nonempty_);
  std::vector<QueueEntry> moving;
  moving.swap(buckets_[b]);
  nonempty_ &= ~(std::uint64_t{1} << b);
  SimTime least = moving.front().time;
  for (const QueueEntry& e : moving) least = std::min(least, e.time);
  last_ = least;
  for (const QueueEntry& e : moving) put(e);
  moving.clear();
  buckets_[b].swap(moving);  // bucket b stays empty: its capacity is kept for later
}

SimTime RadixHeapQueue::peek_time() {
  if (!settle()) return kTimeMax;
  return early_.empty() ? buckets_[0][front_].time : early_.front().time;
}

Event RadixHeapQueue::pop() {
  if (!settle()) throw std::logic_error("EventQueue::pop on an empty queue");
  if (!early_.empty()) {
    std::pop_heap(early_.begin(), early_.end(), later);
    const QueueEntry e = early_.back();
    early_.pop_back();
    return release(e);
  }
  const QueueEntry e = buckets_[0][front_++];
  Event ev = release(e);
  // Line up the next event now and fetch its slot (the next pop reads it
  // first), so the miss overlaps the caller's run of this one.
  if (front_ == buckets_[0].size() && early_.empty()) {
    buckets_[0].clear();
    front_ = 0;
    nonempty_ &= ~std::uint64_t{1};
    if (nonempty_ != 0) spread_lowest();
  }
  if (front_ < buckets_[0].size()) prefetch_slot(buckets_[0][front_]);
  return ev;
}

std::size_t RadixHeapQueue::memory_bytes() const {
  std::size_t entries = early_.capacity();
  for (const auto& b : buckets_) entries += b.capacity();
  return entries * sizeof(QueueEntry) + slot_bytes();
}

}  // namespace vramsim
