#pragma once
// Number spellings shared by messages, summaries and status lines.
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/resources.hpp"

namespace vramsim {

// Messages and summaries: integral values without a decimal point ("8",
// "1024"), others in the shortest general form ("0.01").
inline std::string format_number(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Resource amounts in status lines, as Ray prints them: an integer when the
// amount is integral at the scheduler's 1e-4 resolution, else up to four
// decimals without trailing zeros ("0.04", "0.3333").
inline std::string format_amount(double v) {
  char buf[64];
  // Past 1e15 (or not finite) no decimals are meaningful and "%.4f" would
  // not fit: the shortest general form, as format_number does.
  if (!(std::fabs(v) < 1e15)) {
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  const double r = std::round(v);
  if (std::fabs(v - r) < 0.5 / kAmountScale) {
    std::snprintf(buf, sizeof buf, "%.0f", r == 0 ? 0.0 : r);  // no "-0"
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace vramsim
