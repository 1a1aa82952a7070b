#pragma once
// Number spelling shared by messages and summaries: integral values without
// a decimal point ("8", "1024"), others in the shortest general form ("0.01").
#include <cmath>
#include <cstdio>
#include <string>

namespace vramsim {

inline std::string format_number(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace vramsim
