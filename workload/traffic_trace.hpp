#pragma once
// Request traffic read from a trace file (docs/serving.md, "Traces"):
//   gentd26-requests  Alibaba GenTD26 lora_request_trace.csv: one request per
//                     row, arriving at gmt_create, working exec_time_seconds
//   gentd26-qps       GenTD26 qps.csv: a rate timeline, QPS summed over the
//                     containers of each window (its README's rule), held
//                     until the next window
//   azure-llm         Azure LLM inference CSV (TIMESTAMP, ContextTokens,
//                     GeneratedTokens): one request per row, its work from
//                     its tokens by a linear model (an assumption)
// Bad input throws WorkloadError naming the file, the line and the column.
#include <map>
#include <optional>
#include <string>

#include "workload/swf.hpp"
#include "workload/traffic.hpp"

namespace vramsim {

struct TrafficTraceOptions {
  std::string format;                      // gentd26-requests, gentd26-qps, azure-llm
  std::string path;
  std::optional<std::string> app_column;   // keep rows whose column equals app_id
  std::string app_id;
  std::map<std::string, std::string> filter;  // keep rows whose columns equal these
  double time_scale = 1;                   // arrival offsets x this
  double rate_scale = 1;                   // rates x this (request traces: offsets / this)
  // azure-llm: work = overhead + prefill x context tokens + decode x generated.
  double overhead_s = 0.05, prefill_s_per_token = 0.0002, decode_s_per_token = 0.02;
  std::optional<std::uint64_t> limit;      // rows kept, at most
};

TrafficSpec load_traffic_trace(const TrafficTraceOptions& o);

// "2024-11-15 16:57:50" or "2023-11-16 18:15:46.6805900" (UTC) as seconds
// since 1970; nullopt when it is not that shape or not a calendar date.
std::optional<double> parse_utc_datetime(const std::string& s);

}  // namespace vramsim
