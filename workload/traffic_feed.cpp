#include "workload/traffic_feed.hpp"

namespace vramsim {

TrafficFeed::TrafficFeed(const std::map<std::string, TrafficSpec>& traffic, Executor& exec, std::uint64_t seed,
                         SimTime horizon, Serve serve)
    : specs_(traffic), exec_(exec), rng_(seed), horizon_(horizon), serve_(std::move(serve)) {}

void TrafficFeed::schedule() {
  for (const auto& [id, spec] : specs_) {
    Traffic& t = traffic_[id];
    t.source = std::make_unique<TrafficSource>(spec, rng_.stream("serve." + id + ".arrivals"));
    if (spec.start) {
      const std::string app = id;
      const SimTime at = *spec.start;
      exec_.at(at, [this, app, at] { start(app, at); });
    }
  }
}

void TrafficFeed::deployed(const std::string& app) {
  if (auto t = traffic_.find(app); t != traffic_.end() && !t->second.started && !specs_.at(app).start)
    start(app, exec_.now());
}

void TrafficFeed::start(const std::string& app, SimTime origin) {
  Traffic& t = traffic_.at(app);
  t.started = true;
  t.origin = origin;
  t.end = specs_.at(app).end;
  next_arrival(app);
}

void TrafficFeed::next_arrival(const std::string& app) {
  Traffic& t = traffic_.at(app);
  const auto a = t.source->next();
  if (!a) return;
  const SimTime at = t.origin + a->at;
  if ((t.end && at > *t.end) || at > horizon_) return;
  const Duration service = a->service;
  // The map's key outlives the feed's schedule: the closure holds a
  // reference to it.
  const std::string& key = traffic_.find(app)->first;
  exec_.at(at, [this, &key, service] {
    serve_(key, service);
    next_arrival(key);
  });
}

}  // namespace vramsim
