#include "observers/critical_paths.hpp"

namespace vramsim {

TraceKindSet CriticalPaths::kinds() const {
  TraceKindSet s;
  for (TraceKind k : all_trace_kinds())
    if (on_critical_paths(k)) s.set(static_cast<std::size_t>(k));
  return s;
}

void CriticalPaths::conclude(RunResult& result) {
  std::vector<std::string> ids;
  for (const auto& a : result.apps) ids.push_back(a.id);
  for (auto& p : critical_paths(events_, ids))
    if (p) result.critical_paths.push_back(std::move(*p));
  events_.clear();
}

}  // namespace vramsim
