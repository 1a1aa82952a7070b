#include "runner/sweep_parts.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "engine/text.hpp"
#include "runner/sweep.hpp"

namespace vramsim {
namespace {

constexpr const char* kMagic = "vramsim-sweep-part 1";

bool parse_size(std::string_view s, std::size_t& v) {
  const auto x = parse_integer<std::size_t>(s);
  if (x) v = *x;
  return x.has_value();
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The lines of `text`, without their newlines.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// A checksum shortened for a message.
std::string short_sum(const std::string& sum) { return sum.substr(0, 12); }

bool is_final_state(const std::string& s) {
  static const char* const kFinal[] = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",   "NODE_FAIL",   "OUT_OF_MEMORY",
                                       "BOOT_FAIL", "DEADLINE",  "PREEMPTED", "REVOKED",   "SPECIAL_EXIT"};
  return std::find(std::begin(kFinal), std::end(kFinal), s) != std::end(kFinal);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  return to_hex(std::string_view(reinterpret_cast<const char*>(md), len));
}

// Streamed in 1 MiB blocks: the file (the binary itself, 100 MiB and more
// with debug information) is never held in memory whole.
std::optional<std::string> file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("SHA-256 failed");
  std::vector<char> block(std::size_t{1} << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const std::streamsize got = in.gcount();
    if (got > 0 && EVP_DigestUpdate(ctx.get(), block.data(), static_cast<std::size_t>(got)) != 1)
      throw std::runtime_error("SHA-256 failed");
  }
  if (!in.eof()) return std::nullopt;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw std::runtime_error("SHA-256 failed");
  return to_hex(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string format_part_stamp(const PartStamp& s) {
  return std::string(kMagic) + "\nbinary " + s.binary + "\nscenario " + s.scenario + "\ngrid " + s.grid + "\nslice " +
         std::to_string(s.slice) + "/" + std::to_string(s.slices) + "\nrows " + std::to_string(s.rows) + "\ncsv " +
         s.csv + "\n";
}

std::optional<PartStamp> parse_part_stamp(const std::string& text) {
  const auto lines = lines_of(text);
  if (lines.empty() || lines[0] != kMagic) return std::nullopt;
  std::map<std::string, std::string> f;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto sp = lines[i].find(' ');
    if (sp == std::string::npos || !f.emplace(lines[i].substr(0, sp), lines[i].substr(sp + 1)).second)
      return std::nullopt;
  }
  for (const char* key : {"binary", "scenario", "grid", "slice", "rows", "csv"})
    if (!f.count(key)) return std::nullopt;
  PartStamp s;
  s.binary = f["binary"];
  s.scenario = f["scenario"];
  s.grid = f["grid"];
  s.csv = f["csv"];
  const std::string& slice = f["slice"];
  const auto slash = slice.find('/');
  if (!is_hex64(s.binary) || !is_hex64(s.scenario) || !is_hex64(s.csv) || slash == std::string::npos ||
      !parse_size(slice.substr(0, slash), s.slice) || !parse_size(slice.substr(slash + 1), s.slices) ||
      s.slice >= s.slices || !parse_size(f["rows"], s.rows))
    return std::nullopt;
  return s;
}

std::string grid_arguments(const std::vector<std::string>& sets, const std::string& seeds) {
  std::string out;
  for (const auto& s : sets) out += (out.empty() ? "" : " ") + std::string("--set ") + shell_quote(s);
  if (!seeds.empty()) out += (out.empty() ? "" : " ") + std::string("--seeds ") + shell_quote(seeds);
  // One line in the record, whatever a value holds.
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::string part_file(const std::string& parts_dir, std::size_t slice) {
  return parts_dir + "/part-" + std::to_string(slice) + ".csv";
}

std::string stamp_file(const std::string& part) { return part + ".sum"; }

PartCheck check_part(const std::optional<std::string>& csv, const std::optional<std::string>& stamp,
                     const PartStamp& expected, const std::string& header, std::size_t runs) {
  using S = PartCheck::State;
  if (!csv) return {S::Missing, "missing"};
  if (!stamp) return {S::Stale, "no checksum record beside it (its task did not finish)"};
  const auto got = parse_part_stamp(*stamp);
  if (!got) return {S::Stale, "its checksum record is not one vramsim wrote"};
  if (got->binary != expected.binary)
    return {S::Stale, "made by another vramsim build (binary sha256 " + short_sum(got->binary) + "..., this one " +
                          short_sum(expected.binary) + "...)"};
  if (got->scenario != expected.scenario)
    return {S::Stale, "made from another scenario file (sha256 " + short_sum(got->scenario) + "..., now " +
                          short_sum(expected.scenario) + "...)"};
  if (got->grid != expected.grid)
    return {S::Stale, "made for another grid ('" + got->grid + "', this sweep '" + expected.grid + "')"};
  if (got->slice != expected.slice || got->slices != expected.slices)
    return {S::Stale, "slice " + std::to_string(got->slice) + "/" + std::to_string(got->slices) + ", expected " +
                          std::to_string(expected.slice) + "/" + std::to_string(expected.slices)};
  if (sha256_hex(*csv) != got->csv) return {S::Stale, "its bytes differ from its checksum record (changed or cut short)"};
  const auto [b, e] = slice_range(runs, expected.slice, expected.slices);
  if (got->rows != e - b)
    return {S::Stale, "its checksum record counts " + std::to_string(got->rows) + " row(s), the slice has " +
                          std::to_string(e - b)};
  if (std::string why = part_shape_problem(header, *csv, e - b); !why.empty()) return {S::Stale, why};
  return {};
}

std::vector<std::size_t> slices_to_rerun(const std::vector<PartCheck>& checks) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < checks.size(); ++i)
    if (checks[i].state != PartCheck::State::Good) out.push_back(i);
  return out;
}

std::string array_spec(const std::vector<std::size_t>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::map<std::size_t, TaskEnding> parse_array_endings(const std::string& out, const std::string& job) {
  std::map<std::size_t, TaskEnding> endings;
  for (const std::string& line : lines_of(out)) {
    std::string task, state, exit_code;
    if (line.find('|') != std::string::npos) {
      // sacct: JOB_I|STATE|EXIT, the state perhaps "CANCELLED by 1000".
      std::vector<std::string> f;
      std::istringstream in(line);
      for (std::string x; std::getline(in, x, '|');) f.push_back(x);
      if (f.size() < 3 || f[0].rfind(job + "_", 0) != 0) continue;
      task = f[0].substr(job.size() + 1);
      state = f[1].substr(0, f[1].find(' '));
      exit_code = f[2];
    } else {
      // scontrol --oneliner: Key=Value fields separated by blanks.
      std::map<std::string, std::string> f;
      std::istringstream in(line);
      for (std::string x; in >> x;)
        if (const auto eq = x.find('='); eq != std::string::npos) f.emplace(x.substr(0, eq), x.substr(eq + 1));
      if (f["ArrayJobId"] != job) continue;
      task = f["ArrayTaskId"];
      state = f["JobState"];
      exit_code = f["ExitCode"];
    }
    std::size_t i = 0;
    if (!parse_size(task, i) || !is_final_state(state)) continue;  // "5-9", "[5-9]": not yet started
    endings[i] = TaskEnding{state, exit_code};
  }
  return endings;
}

std::string task_state_line(std::size_t task, const TaskEnding* ending) {
  std::string line = "task " + std::to_string(task) + ": ";
  if (!ending) return line + "unknown";
  line += ending->state;
  const auto colon = ending->exit_code.find(':');
  const std::string code = ending->exit_code.substr(0, colon);
  const std::string signal = colon == std::string::npos ? "" : ending->exit_code.substr(colon + 1);
  if (!code.empty() && code != "0") line += " (exit " + code + ")";
  else if (!signal.empty() && signal != "0") line += " (signal " + signal + ")";
  return line;
}

}  // namespace vramsim
