#include "backends/slurm/ids.hpp"

#include <cctype>

namespace vramsim::slurm {

std::string id_problem(std::string_view id) {
  if (id.empty() || id.size() > 128) return "expected 1..128 printable ASCII characters, no spaces";
  for (char c : id)
    if (c < '!' || c > '~') return "expected 1..128 printable ASCII characters, no spaces";
  return "";
}

std::string run_id_problem(std::string_view id) {
  if (id.empty()) return "expected a non-empty run id";
  if (id.size() > 64) return "expected at most 64 characters, got " + std::to_string(id.size());
  if (id[0] == '-' || id[0] == '.') return "expected a run id that does not start with '-' or '.'";
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-') return "expected only letters, digits, '.', '_' and '-'";
  return "";
}

}  // namespace vramsim::slurm
