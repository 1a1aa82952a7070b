#pragma once
// Reader for the Alibaba "openb" GPU-sharing trace (cluster-trace-gpu-v2023,
// Weng et al., ATC '23): its node lists and pod lists as plain records. The
// format and the checks are documented in docs/workloads-openb.md. Every
// malformed row is refused with the file, the line, the column and what was
// expected; nothing is guessed.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim {

// A malformed openb file: "FILE:LINE: column K (NAME): PROBLEM".
class OpenbError : public std::runtime_error {
 public:
  OpenbError(std::string file, std::size_t line, std::size_t column, std::string column_name, std::string problem);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }      // 1-based; 0: the file as a whole
  std::size_t column() const { return column_; }  // 1-based; 0: the row as a whole
  const std::string& column_name() const { return column_name_; }
  const std::string& problem() const { return problem_; }
  // "line 12, column 5 (gpu_milli)": where, without the file.
  std::string where() const;

 private:
  std::string file_;
  std::size_t line_, column_;
  std::string column_name_, problem_;
};

// One row of a node list: `sn,cpu_milli,memory_mib,gpu,model`.
struct OpenbNode {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;        // empty for a CPU-only node
  std::size_t line = 0;     // where it was read, for later messages
};

// One row of a pod list (11 columns, docs/workloads-openb.md).
struct OpenbPod {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                   // share of one GPU, 1-1000 when num_gpu > 0
  std::vector<std::string> gpu_spec;   // allowed models, file order, no repeats; empty: any
  std::string qos;                     // LS | BE | Burstable | Guaranteed
  std::string phase;                   // Running | Succeeded | Failed | Pending
  std::int64_t creation_time = 0;      // seconds from the trace start
  std::int64_t deletion_time = 0;      // >= creation_time
  std::optional<std::int64_t> scheduled_time;
  std::size_t line = 0;
  bool sharing() const { return num_gpu == 1 && gpu_milli < 1000; }
};

// Ranges the reader accepts (well above the trace's own values).
namespace openb_limits {
constexpr std::int64_t kMaxCpuMilli = 4096 * 1000;
constexpr std::int64_t kMaxMemoryMib = std::int64_t{1} << 30;  // 1 PiB
constexpr int kMaxGpus = 64;
constexpr std::int64_t kMaxTime = std::int64_t{10} * 365 * 24 * 3600;  // ten years of seconds
}  // namespace openb_limits

// Parse the text of a file named `file` (for messages). `limit` > 0 keeps the
// first `limit` pods and does not read further.
std::vector<OpenbNode> parse_openb_nodes(std::string_view text, const std::string& file);
std::vector<OpenbPod> parse_openb_pods(std::string_view text, const std::string& file, std::size_t limit = 0);
// The same from a file on disk; an unreadable file is an OpenbError at line 0.
std::vector<OpenbNode> load_openb_nodes(const std::string& path);
std::vector<OpenbPod> load_openb_pods(const std::string& path, std::size_t limit = 0);

}  // namespace vramsim
