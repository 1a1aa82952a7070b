#pragma once
// The one GPU table: per device its dense fp16 peak throughput, each figure
// with the accumulate mode it holds for and its source, and per model name
// (as scenarios and traces spell it) its VRAM. Capacity planning weighs GPUs
// by it, the fp16 matmul probe (backends/cuda) divides its measurement by it.
// It covers the models the bundled traces name (openb, PAI 2020, the 2026
// spot list) and the common datacenter GPUs; sources and assumptions are in
// docs/gpu-models.md. Undisclosed trace models (openb G1-G3) carry assumed
// figures a scenario may override.
//
// Standard library only: the probe's standalone build (tools/probe/standalone)
// compiles this file with nothing but a C++ compiler.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim {

// How a tensor-core fp16 GEMM accumulates. Datacenter and workstation GPUs
// run both at the same rate; GeForce cards run fp32 accumulation at half the
// fp16-accumulate rate. The probe and PyTorch's default fp16 matmul
// accumulate in fp32.
enum class Accumulate { Fp32, Fp16 };
std::string_view accumulate_name(Accumulate a);  // "fp32" or "fp16"

// One device's dense (no structured sparsity) fp16 peaks, TFLOPS.
struct GpuPeak {
  // Whole tokens of the device name, space separated ("H100 PCIe"); all
  // must appear in a device name for the row to match it.
  std::string_view tokens;
  double fp32_accumulate_tflops = 0;  // 0: the source gives none (no tensor cores)
  double fp16_accumulate_tflops = 0;
  std::string_view source;
  bool assumed = false;  // no datasheet: an assumption (docs/gpu-models.md)

  // The figure for one mode; std::nullopt where the table holds none.
  std::optional<double> tflops(Accumulate a) const;
};

// Every peak row, more specific rows first ("H100 PCIe" before "H100").
std::span<const GpuPeak> gpu_peak_table();

// The row whose tokens all appear in `device_name` (case-insensitive, whole
// tokens split on anything but letters and digits, so "A10" does not match
// "A100" or "A10G"), first row wins. nullptr for unknown devices and for MIG
// slices (a slice has only part of the SMs, so the whole-GPU peak would
// overstate it).
const GpuPeak* find_gpu_peak(std::string_view device_name);

// memory.total less what CUDA can give, where no figure is known: the H200
// measured 616 MiB, the A100-SXM4-40GB 520 (docs/gpu-models.md).
constexpr std::int64_t kCudaReservedMb = 520;

struct GpuModel {
  std::string name;          // short name scenarios and traces use ("A100-SXM4-80GB", "V100M16")
  std::string device_name;   // nvidia-smi name ("NVIDIA A100-SXM4-80GB")
  std::int64_t vram_mb = 0;  // nvidia-smi memory.total where known, else nominal GB x 1024
  // What CUDA can give (cudaMemGetInfo's total): less than memory.total.
  // Measured or from a stated source where `cuda_total_assumed` is false,
  // else the rule vram_mb - kCudaReservedMb.
  std::int64_t cuda_total_mb = 0;
  bool cuda_total_assumed = true;
  // Dense fp16 throughput planning weighs by: the fp32-accumulate peak where
  // the table has one, else the fp16-accumulate one (the P100's half2 rate).
  double fp16_tflops = 0;
  bool assumed = false;      // figures are an assumption, not a datasheet's
  Accumulate accumulate = Accumulate::Fp32;  // the mode fp16_tflops holds for
  std::string source;        // where fp16_tflops comes from ("scenario" for an override)
};

// Every built-in model, sorted by name.
const std::vector<GpuModel>& gpu_model_table();
// A built-in model by its exact name; nullptr if none.
const GpuModel* find_gpu_model(std::string_view name);

// The built-in table with a scenario's overrides applied on top.
class GpuModelSet {
 public:
  GpuModelSet();
  // Replaces the figures of `name` (or adds it). vram_mb > 0, fp16_tflops >= 0.
  void set(const std::string& name, std::int64_t vram_mb, double fp16_tflops);
  const GpuModel* find(std::string_view name) const;
  const std::map<std::string, GpuModel, std::less<>>& all() const { return models_; }

 private:
  std::map<std::string, GpuModel, std::less<>> models_;
};

// The GPU models a partition node may name (the partition catalogue,
// docs/scenario-format.md), each with its on-demand price per GPU-hour for
// cost figures (docs/gpu-models.md, "Prices": a cloud instance's list price
// divided by its GPUs, CPU and memory included; an assumption a scenario or
// --gpu-price overrides) or why it has none. One table, so every priced
// model can be placed and every placeable one is priced or says why not.
struct GpuPrice {
  std::string_view model;          // GpuModel::name
  double usd_per_gpu_hour = -1;    // < 0: no built-in price
  std::string_view source;         // the instance and its price; without one, why
  bool priced() const { return usd_per_gpu_hour >= 0; }
};
std::span<const GpuPrice> gpu_price_table();
// The built-in price of a model by its exact name; nullptr if none (not in
// the table, or unpriced).
const GpuPrice* find_gpu_price(std::string_view model);

}  // namespace vramsim
