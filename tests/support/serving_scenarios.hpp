#pragma once
// Serving scenarios the runner's tests share, as JSON documents.
#include <cstdint>

#include "engine/trace.hpp"  // Json

namespace vramsim::testing_support {

// A static cluster of `replicas` one-GPU nodes, one app of `replicas`
// replicas with max_ongoing_requests 1: an M/x/c queue once it runs.
inline Json queue_scenario(int replicas, double rate, const Json& service, std::uint64_t requests) {
  return Json{
      {"name", "queue"},
      {"horizon", "30d"},
      {"cluster",
       {{"mode", "static"},
        {"initial_workers", replicas},
        {"worker_defaults", {{"time_limit", "365d"}}},
        {"partition", Json::array({{{"count", replicas}, {"gpus", 1}, {"gpu", "A100-SXM4-80GB"}}})}}},
      // A whole GPU per replica: independent servers, as Erlang C assumes.
      {"apps", Json::array({{{"id", "m"},
                             {"gpu_memory_mb", -1},
                             {"replicas", replicas},
                             {"deploy_at", 0},
                             {"serve",
                              {{"max_ongoing_requests", 1},
                               {"service_time", service},
                               {"traffic",
                                {{"process", "poisson"},
                                 {"rate_per_s", rate},
                                 {"start", "60s"},
                                 {"max_requests", requests}}}}}}})}};
}

}  // namespace vramsim::testing_support
