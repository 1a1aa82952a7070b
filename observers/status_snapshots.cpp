#include "observers/status_snapshots.hpp"

#include <algorithm>

#include "engine/format.hpp"
#include "engine/output_file.hpp"
#include "models/status.hpp"
#include "observers/json_match.hpp"

namespace vramsim {

bool StatusSnapshots::reads_status() const {
  const Scenario& sc = ctx().scenario;
  // A scenario that reads the status keeps each pass's snapshot from the start.
  return !at_.empty() ||
         std::any_of(sc.expectations.begin(), sc.expectations.end(),
                     [](const Expectation& ex) { return ex.kind == Expectation::Kind::StatusLine; }) ||
         std::any_of(sc.actions.begin(), sc.actions.end(),
                     [](const ScenarioAction& a) { return a.kind == ActionKind::Status; });
}

void StatusSnapshots::start() {
  for (Duration t : at_) ctx().exec.at(t, [this] { take("--status-at", Json::object(), "--status-at"); });
}

void StatusSnapshots::on_action(const ScenarioAction& a) {
  if (a.kind == ActionKind::Status) take(a.json_path, a.expect, a.json_path);
}

Json StatusSnapshots::take(const std::string& source, const Json& expect, const std::string& path) {
  const RunContext& w = ctx();
  RunResult& result = w.result;
  const SimTime now = w.exec.now();
  Json state = w.control.status();
  const auto pass = w.control.status_from_pass();
  result.status_lines.push_back("status at " + format_seconds(now) + " s (" + source +
                                (pass ? ", the pass at " + format_seconds(*pass) + " s" : std::string()) +
                                "): " + vram_summary(state));
  for (const auto& l : format_status_text(state)) result.status_lines.push_back(l);
  Json line_json = Json::array();
  for (const auto& l : format_status_lines(state)) line_json.push_back(l);
  w.trace.record(now, TraceKind::status, {{"source", source}, {"lines", line_json}});
  Json snapshot = {{"t", now}, {"source", source}, {"state", state}};
  if (pass) snapshot["pass_t"] = *pass;
  snapshots_.push_back(std::move(snapshot));
  for (auto it = expect.begin(); it != expect.end(); ++it) {
    ExpectationResult r;
    r.path = path + ".expect." + it.key();
    r.description = "status " + it.key() + " == " + it.value().dump() + " at " + format_seconds(now) + " s";
    const Json* got = lookup_path(state, it.key());
    r.held = got && json_matches(it.value(), *got);
    r.why = got ? "was " + got->dump() : "no such field";
    result.expectations.push_back(r);
  }
  return state;
}

void StatusSnapshots::close(SimTime) {
  if (json_path_.empty()) return;
  OutputFile out(json_path_);
  out.write(snapshots_.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  out.close();
}

void StatusSnapshots::conclude(RunResult& result) {
  if (keep_) result.status_snapshots = std::move(snapshots_);
}

}  // namespace vramsim
