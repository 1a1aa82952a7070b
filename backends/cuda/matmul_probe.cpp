// The device side of the probe: cuBLASLt fp16 GEMM, fp32 accumulation.

#include "backends/cuda/matmul_probe.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/cublaslt_loader.hpp"
#include "backends/cuda/cuda_status.hpp"
#include "backends/cuda/fp16.hpp"
#include "backends/cuda/probe_method.hpp"
#include "backends/cuda/reference_gemm.hpp"
#include "backends/cuda/sm_clock.hpp"
#include "backends/cuda/throughput.hpp"

// Propagates an std::optional<Error> out of the enclosing function.
#define VRAMSIM_TRY(expr)                                  \
  do {                                                     \
    if (auto vramsim_err_ = (expr)) return *vramsim_err_;  \
  } while (0)

namespace vramsim::gpu {

namespace {

using detail::describe;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// cuBLAS recommends 32 MiB of workspace on Hopper; the heuristic reports how
// much of it the chosen algorithm needs and only that is allocated.
constexpr std::uint64_t kMaxWorkspace = 32 * kMiB;
constexpr std::uint64_t kSeedA = 0xA11, kSeedB = 0xB22;
constexpr std::uint64_t kCheckSeedA = 0xC0A, kCheckSeedB = 0xC0B;

std::string mib(std::size_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB"; }

std::optional<Error> cuda_check(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return std::nullopt;
  return Error{ErrorKind::CudaFailure, what + ": " + describe(status)};
}

// The loaded cuBLASLt (cublaslt_loader.hpp); set before any call below.
const CublasLtApi* lt = nullptr;

std::optional<Error> lt_check(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return std::nullopt;
  const ErrorKind kind = status == CUBLAS_STATUS_ALLOC_FAILED ? ErrorKind::OutOfMemory : ErrorKind::CudaFailure;
  return Error{kind, what + ": " + lt->GetStatusName(status) + ": " + lt->GetStatusString(status)};
}

struct AllocationTracker {
  std::size_t current = 0;
  std::size_t peak = 0;
};

// Plain cudaMalloc (never managed memory), counted so peak_alloc_mb is the
// bytes this probe held at once.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  std::optional<Error> allocate(AllocationTracker& tracker, std::size_t bytes, const char* what) {
    reset();
    if (bytes == 0) return std::nullopt;
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      std::string note;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        note = " (" + mib(free_bytes) + " free of " + mib(total_bytes) + ")";
      }
      const ErrorKind kind =
          status == cudaErrorMemoryAllocation ? ErrorKind::OutOfMemory : ErrorKind::CudaFailure;
      return Error{kind, "cudaMalloc(" + mib(bytes) + ") for " + what + ": " + describe(status) + note};
    }
    ptr_ = p;
    bytes_ = bytes;
    tracker_ = &tracker;
    tracker.current += bytes;
    tracker.peak = std::max(tracker.peak, tracker.current);
    return std::nullopt;
  }

  void reset() {
    if (ptr_ == nullptr) return;
    (void)cudaFree(ptr_);
    tracker_->current -= bytes_;
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* get() const { return ptr_; }
  std::uint16_t* half_data() const { return static_cast<std::uint16_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  AllocationTracker* tracker_ = nullptr;
};

struct LtHandle {
  cublasLtHandle_t handle = nullptr;
  LtHandle() = default;
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  ~LtHandle() {
    if (handle != nullptr) (void)lt->Destroy(handle);
  }
};

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }
};

struct Event {
  cudaEvent_t event = nullptr;
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
};

// Descriptors for C = A * B, all n x n fp16 column-major, fp32 compute and
// scale. fp16 inputs with CUBLAS_COMPUTE_32F run on tensor cores; fp32
// accumulation is what the CPU reference models.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;

  GemmPlan() = default;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan() {
    if (pref != nullptr) (void)lt->MatmulPreferenceDestroy(pref);
    if (c != nullptr) (void)lt->MatrixLayoutDestroy(c);
    if (b != nullptr) (void)lt->MatrixLayoutDestroy(b);
    if (a != nullptr) (void)lt->MatrixLayoutDestroy(a);
    if (desc != nullptr) (void)lt->MatmulDescDestroy(desc);
  }
};

std::optional<Error> make_plan(cublasLtHandle_t handle, std::int64_t n, GemmPlan& plan) {
  VRAMSIM_TRY(lt_check(lt->MatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                       "cublasLtMatmulDescCreate"));
  const cublasOperation_t op = CUBLAS_OP_N;
  VRAMSIM_TRY(lt_check(lt->MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op),
                       "cublasLtMatmulDescSetAttribute(TRANSA)"));
  VRAMSIM_TRY(lt_check(lt->MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof op),
                       "cublasLtMatmulDescSetAttribute(TRANSB)"));
  const auto rows = static_cast<std::uint64_t>(n);
  VRAMSIM_TRY(lt_check(lt->MatrixLayoutCreate(&plan.a, CUDA_R_16F, rows, rows, n), "layout A"));
  VRAMSIM_TRY(lt_check(lt->MatrixLayoutCreate(&plan.b, CUDA_R_16F, rows, rows, n), "layout B"));
  VRAMSIM_TRY(lt_check(lt->MatrixLayoutCreate(&plan.c, CUDA_R_16F, rows, rows, n), "layout C"));
  VRAMSIM_TRY(lt_check(lt->MatmulPreferenceCreate(&plan.pref), "cublasLtMatmulPreferenceCreate"));
  const std::uint64_t max_workspace = kMaxWorkspace;
  VRAMSIM_TRY(lt_check(lt->MatmulPreferenceSetAttribute(plan.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &max_workspace, sizeof max_workspace),
                       "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)"));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  VRAMSIM_TRY(lt_check(lt->MatmulAlgoGetHeuristic(handle, plan.desc, plan.a, plan.b, plan.c, plan.c, plan.pref,
                                                      1, &result, &found),
                       "cublasLtMatmulAlgoGetHeuristic"));
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    return Error{ErrorKind::CudaFailure,
                 "cuBLASLt offers no fp16 GEMM algorithm for n=" + std::to_string(n)};
  }
  plan.algo = result.algo;
  plan.workspace = result.workspaceSize;
  return std::nullopt;
}

std::optional<Error> gemm(cublasLtHandle_t handle, const GemmPlan& plan, const DeviceBuffer& a,
                          const DeviceBuffer& b, const DeviceBuffer& c, const DeviceBuffer& workspace,
                          cudaStream_t stream) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  return lt_check(lt->Matmul(handle, plan.desc, &alpha, a.get(), plan.a, b.get(), plan.b, &beta, c.get(),
                                 plan.c, c.get(), plan.c, &plan.algo, workspace.get(), plan.workspace, stream),
                  "cublasLtMatmul");
}

// Fills on the host in bounded chunks and copies, so host memory stays small
// even for n = 16384 (512 MiB per matrix).
std::optional<Error> upload_inputs(const DeviceBuffer& dst, std::size_t elements, std::uint64_t seed) {
  constexpr std::size_t kChunk = std::size_t{1} << 23;
  std::vector<std::uint16_t> host(std::min(elements, kChunk));
  for (std::size_t offset = 0; offset < elements; offset += host.size()) {
    const std::size_t count = std::min(host.size(), elements - offset);
    fill_fp16(std::span(host.data(), count), seed, offset);
    VRAMSIM_TRY(cuda_check(cudaMemcpy(dst.half_data() + offset, host.data(), count * sizeof(std::uint16_t),
                                      cudaMemcpyHostToDevice),
                           "cudaMemcpy (inputs)"));
  }
  return std::nullopt;
}

std::optional<Error> check_correctness(cublasLtHandle_t handle, cudaStream_t stream, AllocationTracker& tracker,
                                       std::int64_t n) {
  GemmPlan plan;
  VRAMSIM_TRY(make_plan(handle, n, plan));
  const auto elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t bytes = elements * sizeof(std::uint16_t);
  DeviceBuffer a, b, c, workspace;
  VRAMSIM_TRY(a.allocate(tracker, bytes, "check matrix A"));
  VRAMSIM_TRY(b.allocate(tracker, bytes, "check matrix B"));
  VRAMSIM_TRY(c.allocate(tracker, bytes, "check matrix C"));
  VRAMSIM_TRY(workspace.allocate(tracker, plan.workspace, "cuBLASLt workspace"));
  VRAMSIM_TRY(upload_inputs(a, elements, kCheckSeedA));
  VRAMSIM_TRY(upload_inputs(b, elements, kCheckSeedB));
  VRAMSIM_TRY(cuda_check(cudaMemsetAsync(c.get(), 0, bytes, stream), "cudaMemsetAsync (check C)"));
  VRAMSIM_TRY(gemm(handle, plan, a, b, c, workspace, stream));
  VRAMSIM_TRY(cuda_check(cudaStreamSynchronize(stream), "check GEMM"));

  std::vector<std::uint16_t> device_c(elements);
  VRAMSIM_TRY(cuda_check(cudaMemcpy(device_c.data(), c.get(), bytes, cudaMemcpyDeviceToHost),
                         "cudaMemcpy (check result)"));
  std::vector<std::uint16_t> host_a(elements), host_b(elements);
  fill_fp16(host_a, kCheckSeedA);
  fill_fp16(host_b, kCheckSeedB);
  const auto reference = reference_gemm_fp16(n, host_a, host_b);
  std::vector<float> result(elements);
  std::transform(device_c.begin(), device_c.end(), result.begin(), half_to_float);
  const auto check = check_tolerance(result, reference, n);
  if (!check.ok) return Error{ErrorKind::CorrectnessFailed, check.message};
  return std::nullopt;
}

// The timed GEMM: C = A * B at size n on the probe's stream, with the
// events that time a batch of them.
struct TimedGemm {
  cublasLtHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  std::int64_t n = 0;
  GemmPlan plan;
  DeviceBuffer a, b, c, workspace;
  Event start, stop;

  // Plans, checks the matrices fit, allocates and fills them.
  std::optional<Error> prepare(AllocationTracker& tracker) {
    VRAMSIM_TRY(make_plan(handle, n, plan));
    const auto elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    const std::size_t bytes = elements * sizeof(std::uint16_t);
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      VRAMSIM_TRY(check_fits(n, plan.workspace, free_bytes));
    (void)cudaGetLastError();
    VRAMSIM_TRY(a.allocate(tracker, bytes, "matrix A"));
    VRAMSIM_TRY(b.allocate(tracker, bytes, "matrix B"));
    VRAMSIM_TRY(c.allocate(tracker, bytes, "matrix C"));
    VRAMSIM_TRY(workspace.allocate(tracker, plan.workspace, "cuBLASLt workspace"));
    VRAMSIM_TRY(upload_inputs(a, elements, kSeedA));
    VRAMSIM_TRY(upload_inputs(b, elements, kSeedB));
    VRAMSIM_TRY(cuda_check(cudaMemsetAsync(c.get(), 0, bytes, stream), "cudaMemsetAsync (C)"));
    VRAMSIM_TRY(cuda_check(cudaEventCreate(&start.event), "cudaEventCreate"));
    VRAMSIM_TRY(cuda_check(cudaEventCreate(&stop.event), "cudaEventCreate"));
    return std::nullopt;
  }

  // Runs `count` GEMMs between the two events; `during` runs on the host
  // while the device works (the clock query), then the stream is awaited.
  std::optional<Error> timed(int count, double& ms, const std::function<void()>& during) {
    VRAMSIM_TRY(cuda_check(cudaEventRecord(start.event, stream), "cudaEventRecord"));
    for (int i = 0; i < count; ++i) VRAMSIM_TRY(gemm(handle, plan, a, b, c, workspace, stream));
    VRAMSIM_TRY(cuda_check(cudaEventRecord(stop.event, stream), "cudaEventRecord"));
    if (during) during();
    VRAMSIM_TRY(cuda_check(cudaEventSynchronize(stop.event), "timed GEMMs"));
    float elapsed = 0.0f;
    VRAMSIM_TRY(cuda_check(cudaEventElapsedTime(&elapsed, start.event, stop.event), "cudaEventElapsedTime"));
    VRAMSIM_TRY(cuda_check(cudaGetLastError(), "timed GEMMs"));
    if (!(elapsed > 0.0f)) return Error{ErrorKind::CudaFailure, "CUDA events measured a non-positive time"};
    ms = static_cast<double>(elapsed);
    return std::nullopt;
  }
};

struct WarmUp {
  double ms = 0.0;           // the untimed batches' device time
  double ms_per_gemm = 0.0;  // from the last batch
};

// Untimed batches of about 50 ms until both the GEMM count and the duration
// are reached, so the SM clock has ramped before sampling. The last batch
// also calibrates how many GEMMs make one sample.
std::optional<Error> warm_up(TimedGemm& gemm, const ProbeOptions& options, WarmUp& out) {
  int warm_gemms = 0, batch = 1;
  while (warm_gemms < std::max(options.warmup, 1) || out.ms < options.warmup_ms) {
    double ms = 0.0;
    VRAMSIM_TRY(gemm.timed(batch, ms, {}));
    out.ms += ms;
    warm_gemms += batch;
    out.ms_per_gemm = ms / batch;
    batch = iterations_for(out.ms_per_gemm, 50.0, 1);
  }
  return std::nullopt;
}

struct Samples {
  std::vector<double> tflops, durations, clocks;
  std::string clock_source;
};

// Reads the SM clock in the middle of a sample, and keeps the reading only
// when the device had started the sample before it and had not finished it
// when it returned (nvidia-smi can take longer than a sample; NVML answers
// in microseconds).
std::optional<int> clock_mid_sample(const TimedGemm& gemm, SmClockReader& reader, double expected_sample_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool started = false;
  while (!(started = cudaEventQuery(gemm.start.event) == cudaSuccess) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(expected_sample_ms * 400.0)));
  const auto reading = reader.read();
  const bool finished = cudaEventQuery(gemm.stop.event) == cudaSuccess;
  (void)cudaGetLastError();  // cudaErrorNotReady is the expected answer
  if (reading && clock_reading_inside(started, finished)) return reading;
  return std::nullopt;
}

// The timed samples, each `per_sample` GEMMs, with a clock reading where
// the device's PCI bus id names a clock to read.
std::optional<Error> take_samples(TimedGemm& gemm, const ProbeOptions& options, int per_sample,
                                  double ms_per_gemm, Samples& out) {
  char bus_id[32] = {};
  const bool have_bus_id = cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) == cudaSuccess;
  (void)cudaGetLastError();
  std::optional<SmClockReader> clock_reader;
  if (have_bus_id) clock_reader.emplace(bus_id);
  const double expected_sample_ms = ms_per_gemm * per_sample;
  for (int s = 0; s < options.samples; ++s) {
    double ms = 0.0;
    std::optional<int> clock;
    VRAMSIM_TRY(gemm.timed(per_sample, ms, [&] {
      if (clock_reader) clock = clock_mid_sample(gemm, *clock_reader, expected_sample_ms);
    }));
    out.tflops.push_back(matmul_tflops(gemm.n, per_sample, ms / 1e3));
    out.durations.push_back(ms);
    if (clock) out.clocks.push_back(*clock);
  }
  if (!out.clocks.empty()) out.clock_source = clock_reader->source();
  return std::nullopt;
}

// The timed kernel's own output: sampled rows and columns of C against a
// CPU fp32 dot product of the same inputs. Returns the elements checked.
Expected<std::int64_t> check_timed_output(const TimedGemm& gemm, const ProbeOptions& options) {
  const std::int64_t n = gemm.n;
  const auto rows = sample_indices(n, options.check_samples, 0x5EED1);
  const auto cols = sample_indices(n, options.check_samples, 0x5EED2);
  std::vector<std::uint16_t> column(static_cast<std::size_t>(n));
  std::vector<float> sampled(rows.size() * cols.size());
  for (std::size_t ci = 0; ci < cols.size(); ++ci) {
    VRAMSIM_TRY(cuda_check(cudaMemcpy(column.data(), gemm.c.half_data() + static_cast<std::size_t>(cols[ci] * n),
                                      column.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost),
                           "cudaMemcpy (timed output column)"));
    for (std::size_t ri = 0; ri < rows.size(); ++ri)
      sampled[ri * cols.size() + ci] = half_to_float(column[static_cast<std::size_t>(rows[ri])]);
  }
  const auto sampled_check =
      check_sampled(sampled, sampled_reference(n, kSeedA, kSeedB, rows, cols), n, rows, cols);
  if (!sampled_check.ok) return Error{ErrorKind::CorrectnessFailed, sampled_check.message};
  return static_cast<std::int64_t>(sampled.size());
}

ProbeReport make_report(const cudaDeviceProp& prop, const AllocationTracker& tracker, std::int64_t n,
                        int per_sample, const WarmUp& warm, const Samples& samples) {
  const SampleStats stats = summarize(samples.tflops);
  ProbeReport report;
  report.gpu = prop.name;
  report.gpu_total_mb = static_cast<std::int64_t>(prop.totalGlobalMem / kMiB);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  report.visible_devices = visible != nullptr ? visible : "";
  report.matmul_tflops = stats.median;
  report.peak_alloc_mb = static_cast<std::int64_t>((tracker.peak + kMiB - 1) / kMiB);
  report.n = n;
  report.iterations = per_sample;
  report.samples = stats.count;
  report.tflops_min = stats.min;
  report.tflops_max = stats.max;
  report.spread_pct = stats.spread_pct;
  report.sample_ms = summarize(samples.durations).median;
  report.warmup_ms = warm.ms;
  if (!samples.clocks.empty()) {
    report.sm_clock_mhz = static_cast<int>(std::lround(summarize(samples.clocks).median));
    report.sm_clock_source = samples.clock_source;
  }
  return report;
}

}  // namespace

Expected<ProbeReport> run_matmul_probe(const ProbeOptions& options) {
  if (auto err = validate(options)) return *err;
  // cuBLASLt first: its absence is "no usable CUDA" whether or not a device
  // is visible, and it is checked before any device work.
  const auto& api = cublaslt();
  if (!api) return api.error();
  lt = &*api;
  const auto count = detail::visible_device_count();
  if (!count) return count.error();

  VRAMSIM_TRY(cuda_check(cudaSetDevice(0), "cudaSetDevice(0)"));
  cudaDeviceProp prop{};
  VRAMSIM_TRY(cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties(0)"));

  LtHandle lt_handle;
  VRAMSIM_TRY(lt_check(lt->Create(&lt_handle.handle), "cublasLtCreate"));
  Stream stream;
  VRAMSIM_TRY(cuda_check(cudaStreamCreate(&stream.stream), "cudaStreamCreate"));
  AllocationTracker tracker;
  VRAMSIM_TRY(check_correctness(lt_handle.handle, stream.stream, tracker, options.check_n));

  TimedGemm gemm;
  gemm.handle = lt_handle.handle;
  gemm.stream = stream.stream;
  gemm.n = options.n;
  VRAMSIM_TRY(gemm.prepare(tracker));
  WarmUp warm;
  VRAMSIM_TRY(warm_up(gemm, options, warm));
  const int per_sample = iterations_for(warm.ms_per_gemm, options.sample_ms, options.iterations);
  Samples samples;
  VRAMSIM_TRY(take_samples(gemm, options, per_sample, warm.ms_per_gemm, samples));
  const auto checked = check_timed_output(gemm, options);
  if (!checked) return checked.error();

  ProbeReport report = make_report(prop, tracker, options.n, per_sample, warm, samples);
  report.checked_elements = *checked;
  return report;
}

}  // namespace vramsim::gpu
