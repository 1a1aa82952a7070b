#pragma once
// The scenario parser, one function per section of the format
// (docs/scenario-format.md). parse_scenario (scenario.cpp) calls them in
// the order the sections are checked, so the first error a file has is the
// one reported.
#include <map>
#include <string>

#include "scenario/scenario.hpp"
#include "scenario/scenario_fields.hpp"

namespace vramsim::scenario_parse {

using scenario_fields::Obj;
using AppsById = std::map<std::string, AppSpec>;

// $.policies: a preset name or {preset, model: variant}.
void parse_policies(Obj& root, Scenario& s);
// $.cluster: head, worker defaults, warm workers, partition, background load,
// latency, autoscaler, introspection. Without it, one default node type.
void parse_cluster(Obj& root, Scenario& s);
// After the cluster and the workload: the partition's size and the warm
// workers that must fit on it.
void check_partition(Obj& root, const Json& doc, const Scenario& s);
// $.apps; fills by_id with every app (a workload's included).
void parse_apps(Obj& root, Scenario& s, AppsById& by_id);
// $.actions, then every action sorted by time.
void parse_actions(Obj& root, Scenario& s, const AppsById& by_id);
// $.expect.
void parse_expectations(Obj& root, Scenario& s, const AppsById& by_id);

// $.ray_serve: the Ray Serve version and environment variables.
void parse_ray_serve(Obj& root, Scenario& s);
// $.apps[i].serve: the app's ServeSpec, its traffic into s.traffic.
void parse_serve(Obj& ao, AppSpec& a, Scenario& s);
// One app's fields over base (a redeploy's overrides) or the defaults.
// `cuda_context_mb`: the cluster's, for an app without a base.
AppSpec parse_app(Obj& o, const AppSpec* base, std::int64_t cuda_context_mb);

}  // namespace vramsim::scenario_parse
