#include "models/fragmentation.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace vramsim {

std::size_t NodeFreeHash::operator()(const NodeFree& n) const {
  std::size_t h = std::hash<Amount>()(n.cpus);
  for (Amount f : n.gpu_free) h = h * 1000003u ^ std::hash<Amount>()(f);
  return h * 1000003u ^ std::hash<std::string>()(n.model);
}

bool runs_on_model(const std::vector<std::string>& models, const std::string& node_model) {
  return models.empty() || std::binary_search(models.begin(), models.end(), node_model);
}

bool any_names_models(const std::vector<TaskShape>& tasks) {
  return std::any_of(tasks.begin(), tasks.end(), [](const TaskShape& t) { return !t.models.empty(); });
}

namespace {
constexpr std::string_view kAcceleratorPrefix = "accelerator_type:";
}  // namespace

std::string accelerator_resource(std::vector<std::string> models) {
  std::sort(models.begin(), models.end());
  std::string name(kAcceleratorPrefix);
  for (std::size_t i = 0; i < models.size(); ++i) name += (i ? "|" : "") + models[i];
  return name;
}

std::vector<std::string> accelerator_models(std::string_view resource) {
  constexpr std::string_view kPrefix = kAcceleratorPrefix;
  std::vector<std::string> models;
  if (resource.substr(0, kPrefix.size()) != kPrefix) return models;
  resource.remove_prefix(kPrefix.size());
  while (!resource.empty()) {
    const auto bar = resource.find('|');
    if (bar != 0) models.emplace_back(resource.substr(0, bar));
    if (bar == std::string_view::npos) break;
    resource.remove_prefix(bar + 1);
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

Amount unallocatable_gpu(const NodeFree& n, const TaskShape& t) {
  Amount idle = 0;
  for (Amount f : n.gpu_free) idle += f;
  // The task does not fit the node's CPU, asks for no GPU at all, or may
  // not run on the node's GPU model: no free GPU capacity of the node can go
  // to it.
  if (t.cpus > n.cpus || t.gpus <= 0 || !runs_on_model(t.models, n.model)) return idle;
  if (t.gpus < kAmountScale) {
    // A share must fit inside one GPU: GPUs with less free are fragments.
    Amount frag = 0;
    for (Amount f : n.gpu_free)
      if (f < t.gpus) frag += f;
    return frag;
  }
  const Amount whole = (t.gpus + kAmountScale - 1) / kAmountScale;
  Amount free_whole = 0, partial = 0;
  for (Amount f : n.gpu_free) {
    if (f >= kAmountScale) ++free_whole;
    else partial += f;
  }
  // Whole GPUs: too few wholly free ones and the task cannot start here;
  // otherwise the partly used GPUs are what it cannot use.
  return free_whole < whole ? idle : partial;
}

double expected_unallocatable_gpu(const NodeFree& n, const std::vector<TaskShape>& tasks) {
  double sum = 0, weight = 0;
  for (const auto& t : tasks) {
    sum += t.weight * static_cast<double>(unallocatable_gpu(n, t));
    weight += t.weight;
  }
  return weight > 0 ? sum / weight : 0;
}

std::vector<TaskShape> merge_shapes(const std::vector<TaskShape>& tasks) {
  std::map<std::tuple<Amount, Amount, std::vector<std::string>>, double> w;
  for (const auto& t : tasks) w[{t.cpus, t.gpus, t.models}] += t.weight;
  std::vector<TaskShape> out;
  out.reserve(w.size());
  for (const auto& [k, v] : w) out.push_back(TaskShape{std::get<0>(k), std::get<1>(k), v, std::get<2>(k)});
  return out;
}

std::vector<TaskShape> typical_tasks(const std::vector<TaskShape>& tasks, double popularity) {
  std::vector<TaskShape> shapes = merge_shapes(tasks);
  std::stable_sort(shapes.begin(), shapes.end(),
                   [](const TaskShape& a, const TaskShape& b) { return a.weight > b.weight; });
  double total = 0;
  for (const auto& t : shapes) total += t.weight;
  std::vector<TaskShape> kept;
  double sum = 0;
  for (const auto& t : shapes) {
    if (total <= 0 || sum >= popularity * total) break;
    kept.push_back(t);
    sum += t.weight;
  }
  return kept;
}

}  // namespace vramsim
