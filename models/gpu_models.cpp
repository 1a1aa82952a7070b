#include "models/gpu_models.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace vramsim {

namespace {

// Datacenter and workstation parts run fp32 accumulation at the full tensor
// rate, so one datasheet figure holds for both modes.
constexpr GpuPeak both(std::string_view tokens, double tflops, std::string_view source) {
  return GpuPeak{tokens, tflops, tflops, source, false};
}

// Figures and their sources: docs/gpu-models.md. Order matters: more
// specific rows first.
constexpr std::array kPeaks = {
    both("GB200", 2500.0, "NVIDIA GB200 NVL72 datasheet, per GPU"),
    both("B200", 2250.0, "NVIDIA HGX B200 datasheet, per GPU"),
    both("B100", 1750.0, "NVIDIA Blackwell architecture technical brief, HGX B100 per GPU"),
    both("GH200", 989.4, "NVIDIA GH200 Grace Hopper Superchip datasheet"),
    both("H200 NVL", 835.5, "NVIDIA H200 Tensor Core GPU datasheet (NVL)"),
    both("H200", 989.4, "NVIDIA H200 Tensor Core GPU datasheet (SXM)"),
    both("H100 PCIe", 756.5, "NVIDIA H100 Tensor Core GPU datasheet (PCIe)"),
    both("H100 NVL", 835.5, "NVIDIA H100 Tensor Core GPU datasheet (NVL)"),
    both("H100", 989.4, "NVIDIA H100 Tensor Core GPU datasheet (SXM)"),  // "NVIDIA H100 80GB HBM3"
    both("H800 PCIe", 756.5, "NVIDIA H800 PCIe datasheet"),
    both("H800", 989.4, "NVIDIA H800 datasheet (the H100 SXM with a slower NVLink)"),
    both("A100", 312.0, "NVIDIA A100 Tensor Core GPU datasheet"),
    both("A800", 312.0, "NVIDIA A800 datasheet (the A100 with a slower NVLink)"),
    both("A30", 165.0, "NVIDIA A30 Tensor Core GPU datasheet"),
    both("A10", 125.0, "NVIDIA A10 Tensor Core GPU datasheet"),
    GpuPeak{"A10G", 70.0, 70.0,
            "assumed: NVIDIA publishes no A10G datasheet; 70 is the figure commonly quoted for the EC2 G5 GPU", true},
    both("A40", 149.7, "NVIDIA A40 datasheet (fp16 with fp16 accumulate and bf16 with fp32 accumulate both 149.7)"),
    both("RTX A6000", 154.8, "NVIDIA RTX A6000 datasheet"),
    both("L40S", 362.05, "NVIDIA L40S datasheet"),
    both("L40", 181.05, "NVIDIA L40 datasheet"),
    both("L4", 121.0, "NVIDIA L4 Tensor Core GPU datasheet"),
    both("V100S", 130.0, "NVIDIA V100S datasheet (PCIe)"),
    both("V100 PCIE", 112.0, "NVIDIA Tesla V100 datasheet (PCIe)"),
    both("V100", 125.0, "NVIDIA Tesla V100 datasheet (SXM2)"),
    both("T4", 65.0, "NVIDIA T4 Tensor Core GPU datasheet"),
    // No tensor cores: 18.7 is the half2 rate, which accumulates in fp16.
    GpuPeak{"P100 PCIE", 0.0, 18.7, "NVIDIA Tesla P100 datasheet (PCIe 16 GB), half precision", false},
    // GeForce: fp32 accumulation at half the fp16-accumulate rate.
    GpuPeak{"RTX 4090", 165.2, 330.3, "NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4090)", false},
    GpuPeak{"RTX 3090", 71.0, 142.0, "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3090)", false},
};

// Device names split on anything that is not a letter or digit, so
// "A100-SXM4-40GB" yields A100, SXM4, 40GB.
std::vector<std::string> tokens_of(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool contains(const std::vector<std::string>& haystack, const std::string& token) {
  return std::find(haystack.begin(), haystack.end(), token) != haystack.end();
}

const GpuPeak& peak_row(std::string_view tokens) {
  for (const auto& p : kPeaks)
    if (p.tokens == tokens) return p;
  throw std::logic_error("gpu_models: no peak row '" + std::string(tokens) + "'");
}

struct ModelRow {
  const char* name;
  const char* device_name;
  std::int64_t vram_mb;
  std::string_view peak;  // the kPeaks row its throughput comes from
  bool assumed;
  std::int64_t cuda_total_mb = 0;  // 0: none known, the rule applies
};

GpuModel model_of(const ModelRow& r) {
  const GpuPeak& p = peak_row(r.peak);
  GpuModel m;
  m.name = r.name;
  m.device_name = r.device_name;
  m.vram_mb = r.vram_mb;
  m.cuda_total_assumed = r.cuda_total_mb == 0;
  m.cuda_total_mb = r.cuda_total_mb ? r.cuda_total_mb : r.vram_mb - kCudaReservedMb;
  m.accumulate = p.fp32_accumulate_tflops > 0 ? Accumulate::Fp32 : Accumulate::Fp16;
  m.fp16_tflops = *p.tflops(m.accumulate);
  m.assumed = r.assumed || p.assumed;
  m.source = r.assumed ? "assumed: the " + std::string(r.peak) + "'s figures (docs/gpu-models.md)"
                       : std::string(p.source);
  return m;
}

// Trace aliases (V100M16, V100, ...) repeat the datasheet model they stand
// for, so a trace's node list resolves without a renaming step.
std::vector<GpuModel> build_table() {
  const ModelRow rows[] = {
      {"A10", "NVIDIA A10", 23028, "A10", false},
      {"A10G", "NVIDIA A10G", 23028, "A10G", false},  // the peak row is assumed
      // CUDA's total: the seed's cold-start log (40440 MiB).
      {"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, "A100", false, 40440},
      {"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920, "A100", false},
      {"A800-SXM4-80GB", "NVIDIA A800-SXM4-80GB", 81920, "A800", false},
      {"H100-PCIE-80GB", "NVIDIA H100 PCIe", 81559, "H100 PCIe", false},
      {"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", 81559, "H100", false},
      // CUDA's total: measured, ../shared/data/gpu-colocation/memory-h200.csv.
      {"H200", "NVIDIA H200", 143771, "H200", false, 143155},
      {"H800", "NVIDIA H800", 81559, "H800", false},
      {"L4", "NVIDIA L4", 23034, "L4", false},
      {"L40S", "NVIDIA L40S", 46068, "L40S", false},
      {"P100", "Tesla P100-PCIE-16GB", 16280, "P100 PCIE", false},
      {"RTX3090", "NVIDIA GeForce RTX 3090", 24576, "RTX 3090", false},
      {"T4", "Tesla T4", 15360, "T4", false},
      {"V100", "Tesla V100-SXM2-16GB", 16384, "V100", false},
      {"V100-SXM2-16GB", "Tesla V100-SXM2-16GB", 16384, "V100", false},
      {"V100-SXM2-32GB", "Tesla V100-SXM2-32GB", 32768, "V100", false},
      {"V100M16", "Tesla V100-SXM2-16GB", 16384, "V100", false},
      {"V100M32", "Tesla V100-SXM2-32GB", 32768, "V100", false},
      // openb's undisclosed models: guesses from the host shapes in the node
      // list (docs/gpu-models.md); a scenario may override them.
      {"G1", "G1", 16384, "V100", true},
      {"G2", "G2", 16384, "V100", true},
      {"G3", "G3", 40960, "A100", true},
  };
  std::vector<GpuModel> t;
  for (const auto& r : rows) t.push_back(model_of(r));
  std::sort(t.begin(), t.end(), [](const GpuModel& a, const GpuModel& b) { return a.name < b.name; });
  return t;
}

}  // namespace

std::string_view accumulate_name(Accumulate a) { return a == Accumulate::Fp32 ? "fp32" : "fp16"; }

std::optional<double> GpuPeak::tflops(Accumulate a) const {
  const double v = a == Accumulate::Fp32 ? fp32_accumulate_tflops : fp16_accumulate_tflops;
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

std::span<const GpuPeak> gpu_peak_table() { return kPeaks; }

const GpuPeak* find_gpu_peak(std::string_view device_name) {
  const auto name_tokens = tokens_of(device_name);
  if (contains(name_tokens, "MIG")) return nullptr;
  for (const auto& entry : kPeaks) {
    const auto wanted = tokens_of(entry.tokens);
    bool all = !wanted.empty();
    for (const auto& w : wanted) all = all && contains(name_tokens, w);
    if (all) return &entry;
  }
  return nullptr;
}

const std::vector<GpuModel>& gpu_model_table() {
  static const std::vector<GpuModel> t = build_table();
  return t;
}

const GpuModel* find_gpu_model(std::string_view name) {
  const auto& t = gpu_model_table();
  auto it = std::lower_bound(t.begin(), t.end(), name, [](const GpuModel& m, std::string_view n) { return m.name < n; });
  return it != t.end() && it->name == name ? &*it : nullptr;
}

GpuModelSet::GpuModelSet() {
  for (const auto& m : gpu_model_table()) models_.emplace(m.name, m);
}

void GpuModelSet::set(const std::string& name, std::int64_t vram_mb, double fp16_tflops) {
  if (vram_mb <= 0 || !(fp16_tflops >= 0)) throw std::invalid_argument("GpuModelSet::set: figures out of range");
  auto [it, added] = models_.try_emplace(name);
  if (added) {
    it->second.name = name;
    it->second.device_name = name;
  }
  it->second.vram_mb = vram_mb;
  // The rule for a model of any size (a made-up one of a few MB holds all).
  it->second.cuda_total_mb = vram_mb > 2 * kCudaReservedMb ? vram_mb - kCudaReservedMb : vram_mb;
  it->second.cuda_total_assumed = true;
  it->second.fp16_tflops = fp16_tflops;
  it->second.assumed = false;
  it->second.source = "scenario";
}

const GpuModel* GpuModelSet::find(std::string_view name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : &it->second;
}

namespace {
// AWS EC2 on-demand list prices, us-east-1, Linux, at each instance type's
// launch, divided by its GPUs. Prices change and differ by region and
// provider: they are there so a cost column exists, not as a quote.
constexpr std::array kPrices = {
    GpuPrice{"A10", -1, "no AWS instance has it (G5 has the A10G); other clouds' prices are not in this table"},
    GpuPrice{"A10G", 1.006, "g5.xlarge (1 x A10G) $1.006/h"},
    GpuPrice{"A100-SXM4-40GB", 4.0966, "p4d.24xlarge (8 x A100 40GB) $32.7726/h / 8"},
    GpuPrice{"A100-SXM4-80GB", 5.1207, "p4de.24xlarge (8 x A100 80GB) $40.9657/h / 8"},
    GpuPrice{"H100-SXM5-80GB", 12.29, "p5.48xlarge (8 x H100 80GB) $98.32/h / 8"},
    GpuPrice{"H200", -1, "p5en.48xlarge (8 x H200)'s on-demand launch price could not be checked for this table"},
    GpuPrice{"L4", 0.8048, "g6.xlarge (1 x L4) $0.8048/h"},
    GpuPrice{"L40S", 1.861, "g6e.xlarge (1 x L40S) $1.861/h"},
    GpuPrice{"RTX3090", -1, "a consumer card: no AWS instance has it"},
    GpuPrice{"T4", 0.526, "g4dn.xlarge (1 x T4) $0.526/h"},
    GpuPrice{"V100-SXM2-16GB", 3.06, "p3.2xlarge (1 x V100 16GB) $3.06/h"},
    GpuPrice{"V100-SXM2-32GB", 3.9015, "p3dn.24xlarge (8 x V100 32GB) $31.212/h / 8"},
};
}  // namespace

std::span<const GpuPrice> gpu_price_table() { return kPrices; }

const GpuPrice* find_gpu_price(std::string_view model) {
  for (const auto& p : kPrices)
    if (p.model == model) return p.priced() ? &p : nullptr;
  return nullptr;
}

}  // namespace vramsim
