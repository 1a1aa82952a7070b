#pragma once
// GPU fragmentation as the FGD paper measures it (Weng et al., "Beware of
// Fragmentation", ATC '23): the GPU capacity of a node that a typical task
// of the workload could not be given, from the node's free CPU and per-GPU
// free shares. Pure functions: the utilisation sampler (analysis/) and the
// fgd placement policy use them. The cases: docs/workloads-openb.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/resources.hpp"

namespace vramsim {

// One kind of task and how often it occurs in the workload.
struct TaskShape {
  Amount cpus = 0;  // per task
  Amount gpus = 0;  // below kAmountScale: a share of one GPU; else whole GPUs
  double weight = 1;
  // The GPU models the task may run on (an openb pod's gpu_spec), sorted,
  // without repeats; empty: any model.
  std::vector<std::string> models = {};
};

// A node as fragmentation sees it: free CPU, each GPU's free share and the
// GPU model (its accelerator type; left empty where no task names a model).
struct NodeFree {
  Amount cpus = 0;
  std::vector<Amount> gpu_free;  // per device, in [0, kAmountScale]
  std::string model = {};
  bool operator==(const NodeFree& o) const = default;
};
struct NodeFreeHash {
  std::size_t operator()(const NodeFree& n) const;
};

// Whether a task that names `models` (empty: any) may run on a node of GPU
// model `node_model`. A GPU task that may not is as unable to use the node's
// GPUs as one that does not fit (the FGD simulator's "no access" case).
bool runs_on_model(const std::vector<std::string>& models, const std::string& node_model);
// Whether any task names GPU models: only then does a node's model matter.
bool any_names_models(const std::vector<TaskShape>& tasks);
// The custom resource a task limited to `models` asks for (an openb pod's
// gpu_spec), `accelerator_type:<m1>|<m2>...`: one name per set of allowed
// models (sorted, so "A|B" and "B|A" are one resource), offered by every
// node whose model is in the set. Ray's own accelerator constraint is the
// same mechanism with one model per name.
std::string accelerator_resource(std::vector<std::string> models);
// The models such a resource allows, sorted; empty for any other resource.
std::vector<std::string> accelerator_models(std::string_view resource);

// GPUs (in kAmountScale units) of `n` that task `t` cannot use.
Amount unallocatable_gpu(const NodeFree& n, const TaskShape& t);
// The same averaged over the tasks by weight; 0 without tasks.
double expected_unallocatable_gpu(const NodeFree& n, const std::vector<TaskShape>& tasks);
// Tasks with equal requests (CPU, GPU and models) merged, weights summed, in
// request order.
std::vector<TaskShape> merge_shapes(const std::vector<TaskShape>& tasks);
// The workload's typical tasks: shapes merged, the most frequent first, kept
// until they make up `popularity` (in (0, 1]) of the weight; the paper's
// popularity threshold is 0.95. Ties keep request order.
std::vector<TaskShape> typical_tasks(const std::vector<TaskShape>& tasks, double popularity);

}  // namespace vramsim
