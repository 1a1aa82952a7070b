#include "engine/executor.hpp"

#include <stdexcept>

namespace vramsim {

void Executor::Periodic::cancel() {
  if (!state_ || !state_->active) return;
  state_->active = false;
  state_->exec->cancel(state_->current);
  state_->fn = nullptr;  // breaks the cycle fn -> captures -> state
}

void Executor::arm(const std::shared_ptr<Periodic::State>& st, Duration delay) {
  std::weak_ptr<Periodic::State> weak = st;
  st->current = st->exec->after(delay, [weak] {
    auto s = weak.lock();
    if (!s || !s->active) return;
    // Re-arm first so the callback may cancel its own timer.
    arm(s, s->period);
    auto fn = s->fn;
    fn();
  });
}

Executor::Periodic Executor::every(Duration period, Callback fn, Duration first) {
  if (period <= 0) throw std::invalid_argument("Executor::every: period must be positive");
  Periodic p;
  p.state_ = std::make_shared<Periodic::State>();
  p.state_->exec = this;
  p.state_->period = period;
  p.state_->fn = std::move(fn);
  arm(p.state_, first < 0 ? period : first);
  return p;
}

}  // namespace vramsim
