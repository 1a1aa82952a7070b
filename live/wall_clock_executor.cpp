#include "live/wall_clock_executor.hpp"

#include <cmath>
#include <stdexcept>

namespace vramsim {

WallClockExecutor::WallClockExecutor(boost::asio::io_context& io, double time_scale)
    : io_(io), scale_(time_scale), start_(std::chrono::steady_clock::now()) {
  if (!(time_scale > 0) || time_scale > 1000)
    throw std::invalid_argument("time scale must be in (0, 1000], got " + std::to_string(time_scale));
}

WallClockExecutor::~WallClockExecutor() {
  for (auto& [id, t] : timers_) t->cancel();
}

SimTime WallClockExecutor::now() const {
  const auto wall = std::chrono::steady_clock::now() - start_;
  const double us = std::chrono::duration<double, std::micro>(wall).count() / scale_;
  return static_cast<SimTime>(us);
}

std::chrono::nanoseconds WallClockExecutor::to_wall(Duration d) const {
  if (d <= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(static_cast<double>(d) * 1000.0 * scale_)));
}

TimerId WallClockExecutor::at(SimTime t, Callback fn) {
  const TimerId id = next_++;
  auto timer = std::make_unique<boost::asio::steady_timer>(io_);
  timer->expires_at(start_ + to_wall(t));
  timer->async_wait([this, id, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    // Keep the timer alive until its handler returns; drop the entry first
    // so the callback may schedule or cancel freely.
    auto keep = std::move(it->second);
    timers_.erase(it);
    ++fired_;
    fn();
  });
  timers_.emplace(id, std::move(timer));
  return id;
}

bool WallClockExecutor::cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  it->second->cancel();
  timers_.erase(it);
  return true;
}

}  // namespace vramsim
