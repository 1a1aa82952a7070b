// $.expect: one reader per kind of expectation.
#include <algorithm>

#include "scenario/run_metrics.hpp"
#include "scenario/scenario_parse.hpp"

namespace vramsim::scenario_parse {
namespace {

using scenario_fields::enum_field;
using scenario_fields::object_field;
using scenario_fields::one_of;
using scenario_fields::opt_number;
using scenario_fields::opt_string;
using Fields = std::vector<std::string>;

const std::vector<std::string> kAppStates = {"NOT_STARTED", "DEPLOYING", "RUNNING", "DEPLOY_FAILED",
                                              "UNHEALTHY", "DELETING", "DELETED"};
const std::vector<std::string> kInvariants = {"max_worker_jobs", "device_vram_within_total",
                                              "no_jobs_after_shutdown"};

// The fields a kind of expectation takes; any other field is refused by name.
void takes(Fields& fields, std::initializer_list<const char*> keys) {
  fields.insert(fields.end(), keys.begin(), keys.end());
}

// "event": a kind engine/trace_kinds.hpp declares (docs/trace-format.md).
TraceKind event_kind(Obj& o) {
  const std::string word = o.string("event", "");
  if (word.empty()) o.fail(o.at("event"), "expected a non-empty event kind");
  const auto kind = trace_kind_named(word);
  if (!kind) o.fail(o.at("event"), "expected an event kind of docs/trace-format.md, got \"" + word + "\"");
  return *kind;
}

EventPattern parse_pattern(const Json& j, const std::string& path, const std::string& file) {
  Obj o(j, path, file);
  EventPattern p;
  if (!o.has("event")) o.fail(o.at("event"), "expected an event kind (a string)");
  p.event = event_kind(o);
  if (o.has("match")) p.match = object_field(o, "match");
  o.finish();
  return p;
}

void read_app_expectation(Obj& o, Expectation& x, Fields& fields, [[maybe_unused]] const std::string& path,
    [[maybe_unused]] const AppsById& apps) {
  takes(fields, {"app", "state", "within", "at_end", "admitted", "message", "message_contains", "reservation"});
  x.app = o.string("app", "");
  if (!apps.count(x.app)) o.fail(o.at("app"), "unknown app '" + x.app + "' (declare it in $.apps)");
  if (o.has("state")) x.state = enum_field(o, "state", kAppStates, "an app state");
  x.at_end = o.boolean("at_end", false);
  if (o.has("admitted")) x.admitted = o.boolean("admitted", false);
  x.message = opt_string(o, "message");
  x.message_contains = opt_string(o, "message_contains");
  if (x.message && x.message_contains)
    o.fail(o.at("message_contains"), "expected one of \"message\" or \"message_contains\", not both");
  if (o.has("reservation")) x.reservation = object_field(o, "reservation");
  if (!x.state && !x.admitted && !x.message && !x.message_contains && !x.reservation)
    o.fail(path, "an app expectation must check something: give \"state\", \"admitted\", \"message\", "
                 "\"message_contains\" or \"reservation\"");
  if (x.within && !x.state) o.fail(o.at("within"), "\"within\" needs \"state\" (the state to reach in time)");
  if (o.has("at_end") && !x.state) o.fail(o.at("at_end"), "\"at_end\" needs \"state\"");
  if (!x.within && o.has("at_end") && !x.at_end)
    o.fail(o.at("at_end"), "\"at_end\": false needs \"within\" (else the state is checked nowhere)");
  if (!x.within) x.at_end = true;  // a state with no deadline is the final state
}

void read_event_expectation(Obj& o, Expectation& x, Fields& fields, [[maybe_unused]] const std::string& path,
    [[maybe_unused]] const AppsById& apps) {
  takes(fields, {"event", "match", "within", "after", "before", "count", "min_count", "max_count"});
  x.pattern.event = event_kind(o);
  if (o.has("match")) x.pattern.match = object_field(o, "match");
  if (o.has("after")) x.after = parse_pattern(*o.get("after"), o.at("after"), o.file());
  if (o.has("before")) x.before = parse_pattern(*o.get("before"), o.at("before"), o.file());
  if (x.after && x.before) o.fail(o.at("before"), "expected one of \"after\" or \"before\", not both");
  if (x.before && x.within)
    o.fail(o.at("within"), "\"within\" does not apply with \"before\" (use \"after\" for a deadline)");
  const bool count = o.has("count"), lo = o.has("min_count"), hi = o.has("max_count");
  if (count && (lo || hi))
    o.fail(o.at("count"), "expected \"count\" alone, or \"min_count\" and/or \"max_count\"");
  if (count) x.min_count = x.max_count = o.integer("count", 0, 0, std::numeric_limits<std::int64_t>::max());
  if (hi) { x.max_count = o.integer("max_count", 0, 0, std::numeric_limits<std::int64_t>::max()); x.min_count = 0; }
  if (lo) x.min_count = o.integer("min_count", 0, 0, std::numeric_limits<std::int64_t>::max());
  if (x.min_count > x.max_count)
    o.fail(o.at("max_count"), "expected max_count >= min_count (" + std::to_string(x.min_count) + "), got " +
                                  std::to_string(x.max_count));
}

void read_metric_expectation(Obj& o, Expectation& x, Fields& fields, [[maybe_unused]] const std::string& path,
    [[maybe_unused]] const AppsById& apps) {
  takes(fields, {"metric", "equals", "min", "max"});
  x.metric = o.string("metric", "");
  if (!find_run_metric(x.metric))
    o.fail(o.at("metric"), "expected a run metric of docs/sweeps.md (such as jobs_submitted), got \"" + x.metric + "\"");
  x.equals = opt_number(o, "equals");
  x.min = opt_number(o, "min");
  x.max = opt_number(o, "max");
  if (!x.equals && !x.min && !x.max)
    o.fail(path, "a metric expectation must compare: give \"equals\", \"min\" or \"max\"");
  if (x.min && x.max && *x.min > *x.max) o.fail(o.at("max"), "expected max >= min");
}

void read_invariant_expectation(Obj& o, Expectation& x, Fields& fields, [[maybe_unused]] const std::string& path,
    [[maybe_unused]] const AppsById& apps) {
  takes(fields, {"invariant", "max"});
  x.invariant = enum_field(o, "invariant", kInvariants, "an invariant");
  if (x.invariant == "max_worker_jobs") {
    if (!o.has("max")) o.fail(o.at("max"), "max_worker_jobs needs \"max\", a non-negative integer");
    x.max = static_cast<double>(o.integer("max", 0, 0, std::numeric_limits<std::int64_t>::max()));
  }
}

void read_status_line_expectation(Obj& o, Expectation& x, Fields& fields, [[maybe_unused]] const std::string& path,
    [[maybe_unused]] const AppsById& apps) {
  takes(fields, {"status_line"});
  Obj so(*o.get("status_line"), o.at("status_line"), o.file());
  x.node = so.string("node", "");
  if (x.node.empty()) so.fail(so.at("node"), "expected a node id such as \"node-1\" (a string)");
  x.contains = so.string("contains", "");
  if (x.contains.empty()) so.fail(so.at("contains"), "expected the text the line must contain (a string)");
  if (!so.has("at")) so.fail(so.at("at"), "expected the time of the status, such as \"200s\"");
  x.at = so.duration("at", 0);
  so.finish();
}

// Reads and type-checks one expectation; every field is checked here, once,
// so that a run never meets a value of the wrong type.
Expectation parse_expectation(const Json& e, const std::string& path, const std::string& file, const AppsById& apps) {
  Obj o(e, path, file);
  Expectation x;
  x.json_path = path;
  static const std::vector<std::pair<const char*, Expectation::Kind>> kinds = {
      {"app", Expectation::Kind::App},
      {"event", Expectation::Kind::Event},
      {"metric", Expectation::Kind::Metric},
      {"invariant", Expectation::Kind::Invariant},
      {"status_line", Expectation::Kind::StatusLine}};
  int n_kinds = 0;
  for (const auto& [key, kind] : kinds)
    if (o.has(key)) { x.kind = kind; ++n_kinds; }
  if (n_kinds != 1)
    o.fail(path, std::string(n_kinds == 0 ? "an expectation needs" : "an expectation takes exactly") +
                     " one of \"app\", \"event\", \"metric\", \"invariant\" or \"status_line\"");
  x.name = o.string("name", "");
  Fields fields = {"name"};
  if (o.has("within")) x.within = o.duration("within", 0);
  using Reader = void (*)(Obj&, Expectation&, Fields&, const std::string&, const AppsById&);
  Reader read = nullptr;
  switch (x.kind) {
    case Expectation::Kind::App: read = read_app_expectation; break;
    case Expectation::Kind::Event: read = read_event_expectation; break;
    case Expectation::Kind::Metric: read = read_metric_expectation; break;
    case Expectation::Kind::Invariant: read = read_invariant_expectation; break;
    case Expectation::Kind::StatusLine: read = read_status_line_expectation; break;
  }
  read(o, x, fields, path, apps);
  for (auto it = e.begin(); it != e.end(); ++it)
    if (std::find(fields.begin(), fields.end(), it.key()) == fields.end())
      o.fail(o.at(it.key()), "field does not apply to this kind of expectation (expected one of: " +
                                 one_of(fields) + ")");
  o.finish();
  return x;
}

}  // namespace

void parse_expectations(Obj& root, Scenario& s, const AppsById& by_id) {
  const Json* ex = root.get("expect");
  if (!ex) return;
  if (!ex->is_array()) root.fail(root.at("expect"), "expected an array of expectations");
  for (std::size_t i = 0; i < ex->size(); ++i)
    s.expectations.push_back(parse_expectation((*ex)[i], "$.expect[" + std::to_string(i) + "]", root.file(), by_id));
}

}  // namespace vramsim::scenario_parse
