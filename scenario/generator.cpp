#include "scenario/generator.hpp"

#include <cmath>
#include <sstream>

#include "engine/random.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {
namespace {

std::optional<std::int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long v = std::stoll(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The index of a weighted draw: one uniform number against the cumulative weights.
std::size_t draw(RandomStream& rng, const std::vector<Weighted>& mix) {
  double total = 0;
  for (const auto& w : mix) total += w.weight;
  double x = rng.uniform01() * total;
  for (std::size_t i = 0; i < mix.size(); ++i) {
    if (x < mix[i].weight) return i;
    x -= mix[i].weight;
  }
  return mix.size() - 1;  // rounding at the top end
}

std::string mix_spelling(const std::vector<Weighted>& mix) {
  std::string s;
  for (const auto& w : mix) s += (s.empty() ? "" : ",") + std::to_string(w.value);
  return s;
}

}  // namespace

std::optional<std::vector<Weighted>> parse_weighted_list(const std::string& text) {
  std::vector<Weighted> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Weighted w;
    const auto colon = item.find(':');
    const auto value = parse_int(item.substr(0, colon));
    if (!value) return std::nullopt;
    w.value = *value;
    if (colon != std::string::npos) {
      const std::string ws = item.substr(colon + 1);
      std::size_t used = 0;
      try {
        w.weight = std::stod(ws, &used);
      } catch (const std::exception&) {
        return std::nullopt;
      }
      if (used != ws.size() || !(w.weight > 0) || !std::isfinite(w.weight)) return std::nullopt;
    }
    out.push_back(w);
  }
  if (out.empty() || text.back() == ',') return std::nullopt;
  return out;
}

std::string validate(const GeneratorOptions& o) {
  if (o.apps < 1) return "--apps: expected an integer >= 1";
  if (o.replicas.empty()) return "--replicas: expected a non-empty list";
  for (const auto& r : o.replicas)
    if (r.value < 1 || r.value > 100000) return "--replicas: expected counts in [1, 100000]";
  if (o.sizes.empty()) return "--sizes: expected a non-empty list";
  for (const auto& s : o.sizes)
    if (s.value < -1) return "--sizes: expected gpu_memory_mb values >= -1";
  if (o.arrival != "fixed" && o.arrival != "poisson")
    return "--arrival: expected \"fixed\" or \"poisson\", got \"" + o.arrival + "\"";
  if (o.interval < 0) return "--interval: expected a non-negative duration";
  if (o.arrival == "poisson" && o.interval <= 0) return "--interval: expected a positive mean for poisson arrivals";
  if (o.nodes < 0) return "--nodes: expected an integer >= 0";
  if (o.gpus_per_node < 0 || o.gpus_per_node > 64) return "--gpus-per-node: expected an integer in [0, 64]";
  if (o.gpu_models.empty()) return "--gpu: expected at least one GPU model";
  for (const auto& m : o.gpu_models)
    if (!gpu_catalogue().count(m)) {
      std::string known;
      for (const auto& [k, _] : gpu_catalogue()) known += (known.empty() ? "" : ", ") + k;
      return "--gpu: unknown GPU model '" + m + "' (expected one of: " + known + ")";
    }
  const int nodes = o.nodes > 0 ? o.nodes : std::max(1, o.apps / 2);
  if (nodes < static_cast<int>(o.gpu_models.size()))
    return "--nodes: expected at least one node per GPU model";
  if (o.max_workers < 0) return "--max-workers: expected an integer >= 0";
  if (o.min_workers < 0 || o.min_workers > (o.max_workers > 0 ? o.max_workers : nodes))
    return "--min-workers: expected an integer in [0, max_workers]";
  if (o.initial_workers < 0 || o.initial_workers > nodes)
    return "--initial-workers: expected an integer in [0, " + std::to_string(nodes) + "] (the node count)";
  if (o.worker_cpus && (*o.worker_cpus < 1 || *o.worker_cpus > 64))
    return "--worker-cpus: expected an integer in [1, 64] (the nodes have 64 CPUs)";
  if (o.worker_gpus && (*o.worker_gpus < 0 || *o.worker_gpus > o.gpus_per_node))
    return "--worker-gpus: expected an integer in [0, " + std::to_string(o.gpus_per_node) + "] (--gpus-per-node)";
  if (o.horizon <= 0) return "--horizon: expected a positive duration";
  if (o.shutdown_at && *o.shutdown_at < 0) return "--shutdown-at: expected a non-negative duration";
  return "";
}

Json generate_scenario(const GeneratorOptions& o) {
  const int nodes = o.nodes > 0 ? o.nodes : std::max(1, o.apps / 2);
  RandomStreams rng(o.seed);
  RandomStream& sizes = rng.stream("gen.size");
  RandomStream& replicas = rng.stream("gen.replicas");
  RandomStream& arrivals = rng.stream("gen.arrival");

  Json doc = Json::object();
  doc["name"] = o.name.empty() ? "gen-" + std::to_string(o.apps) + "-apps-" + std::to_string(nodes) + "-nodes"
                               : o.name;
  doc["description"] = "Generated: " + std::to_string(o.apps) + " apps (replicas " + mix_spelling(o.replicas) +
                       ", gpu_memory_mb " + mix_spelling(o.sizes) + "), " + o.arrival + " arrivals every " +
                       format_duration(o.interval) + ", " + std::to_string(nodes) + " nodes of " +
                       std::to_string(o.gpus_per_node) + " GPUs, seed " + std::to_string(o.seed) + ".";
  doc["seed"] = o.seed;
  doc["horizon"] = format_duration(o.horizon);

  Json cluster = Json::object();
  cluster["max_workers"] = o.max_workers > 0 ? o.max_workers : nodes;
  if (o.min_workers > 0) cluster["min_workers"] = o.min_workers;
  if (o.initial_workers > 0) cluster["initial_workers"] = o.initial_workers;
  if (o.worker_cpus || o.worker_gpus) {
    Json wd = Json::object();
    if (o.worker_cpus) wd["cpus"] = *o.worker_cpus;
    if (o.worker_gpus) wd["gpus"] = *o.worker_gpus;
    cluster["worker_defaults"] = wd;
  }
  Json partition = Json::array();
  const int models = static_cast<int>(o.gpu_models.size());
  for (int i = 0; i < models; ++i) {
    // The first (nodes % models) types take one node more.
    const int count = nodes / models + (i < nodes % models ? 1 : 0);
    partition.push_back(
        {{"count", count}, {"cpus", 64}, {"memory_gb", 1024}, {"gpus", o.gpus_per_node}, {"gpu", o.gpu_models[i]}});
  }
  cluster["partition"] = partition;
  doc["cluster"] = cluster;

  Json apps = Json::array();
  const int width = static_cast<int>(std::to_string(o.apps - 1).size());
  SimTime at = o.first_deploy;
  for (int i = 0; i < o.apps; ++i) {
    if (i > 0) {
      Duration gap = o.interval;
      // Millisecond draws, as the latency models round theirs.
      if (o.arrival == "poisson")
        gap = static_cast<Duration>(std::llround(arrivals.exponential(to_seconds(o.interval)) * 1000)) * kMillisecond;
      at += gap;
    }
    std::string id = std::to_string(i);
    id = "app-" + std::string(static_cast<std::size_t>(width) - id.size(), '0') + id;
    Json app = Json::object();
    app["id"] = id;
    app["gpu_memory_mb"] = o.sizes[draw(sizes, o.sizes)].value;
    app["replicas"] = o.replicas[draw(replicas, o.replicas)].value;
    app["deploy_at"] = format_duration(at);
    apps.push_back(app);
  }
  doc["apps"] = apps;
  Json actions = Json::array();
  if (o.shutdown_at) actions.push_back({{"at", format_duration(*o.shutdown_at)}, {"do", "shutdown"}});
  doc["actions"] = actions;
  return doc;
}

}  // namespace vramsim
