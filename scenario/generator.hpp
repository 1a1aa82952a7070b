#pragma once
// Synthetic scenarios for scale studies: N apps with replica counts and VRAM
// sizes drawn from given mixes, deployed by a fixed-interval or Poisson
// arrival process onto a partition of GPU nodes. The output is an ordinary
// scenario document (docs/scenario-format.md); `vramsim gen` writes it. The
// knobs are described in docs/generator.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/time.hpp"
#include "engine/trace.hpp"

namespace vramsim {

// A value drawn with a relative weight.
struct Weighted {
  std::int64_t value = 0;
  double weight = 1;
};

struct GeneratorOptions {
  int apps = 100;
  std::vector<Weighted> replicas = {{1, 1}, {2, 1}, {4, 1}};
  // gpu_memory_mb per replica; -1 books a whole GPU, 0 none.
  std::vector<Weighted> sizes = {{2000, 1}, {4000, 1}, {8000, 1}, {16000, 1}, {-1, 1}};
  std::string arrival = "fixed";       // "fixed" (every `interval`) or "poisson" (mean `interval`)
  Duration interval = 2 * kSecond;
  Duration first_deploy = 10 * kSecond;
  int nodes = 0;                       // partition nodes; 0: max(1, apps / 2)
  int gpus_per_node = 4;
  std::vector<std::string> gpu_models = {"A100-SXM4-80GB"};  // nodes split evenly, in this order
  int max_workers = 0;                 // 0: the node count
  int min_workers = 0;
  int initial_workers = 0;             // warm workers at t=0
  std::optional<int> worker_cpus, worker_gpus;  // worker_defaults; absent: the scenario defaults
  Duration horizon = 48 * kHour;
  std::optional<Duration> shutdown_at = 40 * kHour;
  std::uint64_t seed = 1;
  std::string name;                    // empty: derived from the knobs
};

// Parses "1,2,4" or "2000:3,-1:1" (value[:weight]); nullopt on bad input.
std::optional<std::vector<Weighted>> parse_weighted_list(const std::string& text);

// Checks the knobs; returns "" or "<knob>: <what was expected>".
std::string validate(const GeneratorOptions& o);

// The scenario document; the same options always give the same document.
// Precondition: validate(o) is empty.
Json generate_scenario(const GeneratorOptions& o);

}  // namespace vramsim
