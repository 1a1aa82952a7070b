#include "engine/event_loop.hpp"

#include <algorithm>
#include <stdexcept>

namespace vramsim {

namespace {
// A TimerId packs the queue handle: slot in the high 24 bits, seq in the low
// 40. Both stay far below those bounds in any run we can hold in memory.
TimerId pack(EventHandle h) { return (static_cast<TimerId>(h.slot) << 40) | h.seq; }
EventHandle unpack(TimerId id) {
  return EventHandle{static_cast<std::uint32_t>(id >> 40), id & ((TimerId{1} << 40) - 1)};
}
}  // namespace

EventLoop::EventLoop(std::unique_ptr<EventQueue> queue)
    : queue_(queue ? std::move(queue) : std::make_unique<DefaultEventQueue>()),
      default_queue_(dynamic_cast<DefaultEventQueue*>(queue_.get())) {}

TimerId EventLoop::at(SimTime t, Callback fn) {
  if (t < now_) t = now_;  // the past is not schedulable; run as soon as possible
  return pack(default_queue_ ? default_queue_->insert(t, std::move(fn)) : queue_->insert(t, std::move(fn)));
}

bool EventLoop::cancel(TimerId id) { return id != 0 && queue_->cancel(unpack(id)); }

bool EventLoop::step() {
  if (queue_->empty()) return false;
  Event ev = default_queue_ ? default_queue_->pop() : queue_->pop();
  now_ = ev.time;
  ++executed_;
  ev.fn();
  return true;
}

void EventLoop::run(SimTime until) {
  stopped_ = false;
  while (!stopped_ && !queue_->empty()) {
    if (queue_->peek_time() > until) {
      now_ = std::max(now_, until);  // time never runs backwards
      return;
    }
    step();
  }
  // Every event scheduled was either run here or cancelled: checked against
  // the loop's own count, so a queue that drops an entry is caught.
  const auto& c = queue_->counters();
  if (queue_->empty() && c.inserted != executed_ + c.cancelled)
    throw std::logic_error("EventLoop: events lost (scheduled != run + cancelled)");
}

}  // namespace vramsim
