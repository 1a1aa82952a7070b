#pragma once
// A run's trace events in Chrome Trace Event format, the JSON object
// ({"traceEvents": [...]}) that Perfetto and chrome://tracing open. Apps,
// SLURM worker jobs and cluster nodes are processes with named tracks; app
// states, job queue wait and run time, node lifetimes and replicas (placed,
// then running, until removed) are complete ("X") slices; rejections and
// refusals are instant events. One converter serves `vramsim run
// --chrome-trace` and `vramsim explain TRACE --chrome-trace`, so a live
// trace converts as a simulated one does. The layout is in docs/explain.md.
#include <memory>
#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace vramsim {

namespace chrome_trace_detail {
class TrackBuilder;
}

// The converter, one event at a time (a run's observer): add every event in
// trace order, then finish at the last one's time.
class ChromeTraceConverter {
 public:
  ChromeTraceConverter();
  ~ChromeTraceConverter();
  void add(const TraceEvent& e);
  Json finish(SimTime end);
  // Writes finish(end) through a checked OutputFile; throws OutputError.
  void write(SimTime end, const std::string& path);

 private:
  std::unique_ptr<chrome_trace_detail::TrackBuilder> tracks_;
};

Json chrome_trace(const std::vector<TraceEvent>& events);
// Writes chrome_trace(events) through a checked OutputFile; throws OutputError.
void write_chrome_trace(const std::vector<TraceEvent>& events, const std::string& path);

}  // namespace vramsim
