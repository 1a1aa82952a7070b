#pragma once
// Virtual-time executor: the simulation kernel's run loop. Time advances only
// by popping the next event; callbacks may schedule more.
#include <memory>

#include "engine/event_queue.hpp"
#include "engine/executor.hpp"

namespace vramsim {

class EventLoop final : public Executor {
 public:
  explicit EventLoop(std::unique_ptr<EventQueue> queue = nullptr);

  SimTime now() const override { return now_; }
  TimerId at(SimTime t, Callback fn) override;
  bool cancel(TimerId id) override;

  // Runs one event; false when none is pending.
  bool step();
  // Runs until no event is pending or the next one is after `until`; the
  // clock then stands at `until` (if given and reached) or at the last event.
  void run(SimTime until = kTimeMax);
  // Ends run() after the event in progress.
  void stop() { stopped_ = true; }
  bool empty() const { return queue_->empty(); }
  std::uint64_t events_run() const { return executed_; }
  const EventQueue& queue() const { return *queue_; }

 private:
  std::unique_ptr<EventQueue> queue_;
  // The queue as its own (final) type where it is the default one: calls
  // through it are direct, not virtual.
  DefaultEventQueue* const default_queue_;
  SimTime now_ = 0;
  bool stopped_ = false;
  std::uint64_t executed_ = 0;  // counted here, apart from the queue's own counters
};

}  // namespace vramsim
