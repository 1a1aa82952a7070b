#include "engine/time.hpp"
#include "engine/text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace vramsim {
namespace {

std::optional<std::int64_t> parse_uint(std::string_view s) {
  const auto v = parse_integer<std::int64_t>(s);
  if (v && *v < 0) return std::nullopt;
  return v;
}

// SLURM time spellings: "MM:SS", "HH:MM:SS", and with a day prefix "D-HH",
// "D-HH:MM", "D-HH:MM:SS". Fields are bounded so the total cannot overflow.
std::optional<Duration> parse_clock(std::string_view text) {
  constexpr std::int64_t kMaxField = 1'000'000'000;
  std::optional<std::int64_t> days;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    days = parse_uint(text.substr(0, dash));
    if (!days || *days > 100'000) return std::nullopt;
    text = text.substr(dash + 1);
  }
  std::vector<std::int64_t> parts;
  while (true) {
    auto colon = text.find(':');
    auto p = parse_uint(text.substr(0, colon));
    if (!p || *p > kMaxField) return std::nullopt;
    parts.push_back(*p);
    if (colon == std::string_view::npos) break;
    text = text.substr(colon + 1);
  }
  std::int64_t h = 0, m = 0, s = 0;
  if (days) {
    if (parts.size() == 1) { h = parts[0]; }
    else if (parts.size() == 2) { h = parts[0]; m = parts[1]; }
    else if (parts.size() == 3) { h = parts[0]; m = parts[1]; s = parts[2]; }
    else return std::nullopt;
    if (h >= 24) return std::nullopt;
  } else {
    if (parts.size() == 2) { m = parts[0]; s = parts[1]; }
    else if (parts.size() == 3) { h = parts[0]; m = parts[1]; s = parts[2]; }
    else return std::nullopt;
    if (h > 2'000'000) return std::nullopt;  // ~228 years: far beyond any horizon
  }
  if (m >= 60 || s >= 60) return std::nullopt;
  return ((days.value_or(0) * 24 + h) * 60 + m) * 60 * kSecond + s * kSecond;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // A colon, or a dash after the first character ("2-5", days-hours), is the
  // SLURM clock spelling; a leading dash is a negative number, refused below.
  const auto dash = text.find('-');
  if (text.find(':') != std::string_view::npos || (dash != std::string_view::npos && dash > 0))
    return parse_clock(text);
  struct Unit { std::string_view suffix; double scale; };
  // Longest suffixes first so "ms" is not read as "s".
  static constexpr Unit units[] = {{"us", 1.0}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6},
                                   {"h", 3600e6}, {"d", 86400e6}};
  double scale = 1e6;
  std::string_view number = text;
  for (const auto& u : units) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      auto head = text.substr(0, text.size() - u.suffix.size());
      // "ms" ends with "s": accept the unit only if what precedes is a number.
      if (!parse_double(head)) continue;
      number = head;
      scale = u.scale;
      break;
    }
  }
  auto v = parse_double(number);
  if (!v || *v < 0) return std::nullopt;
  double us = *v * scale;
  if (us > 9.0e18) return std::nullopt;
  return static_cast<Duration>(std::llround(us));
}

std::string format_duration(Duration d) {
  if (d == 0) return "0s";
  std::string sign = d < 0 ? "-" : "";
  Duration a = d < 0 ? -d : d;
  char buf[64];
  if (a % kHour == 0) std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(a / kHour));
  else if (a % kMinute == 0) std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(a / kMinute));
  else if (a % kSecond == 0) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(a / kSecond));
  else if (a % kMillisecond == 0) {
    if (a >= kSecond) std::snprintf(buf, sizeof buf, "%.3gs", to_seconds(a));
    else std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(a / kMillisecond));
    // %.3g loses digits for long durations; fall back to exact milliseconds.
    if (a >= kSecond && parse_duration(buf) != a)
      std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(a / kMillisecond));
  } else std::snprintf(buf, sizeof buf, "%lldus", static_cast<long long>(a));
  return sign + buf;
}

std::string format_slurm_time(Duration d) {
  long long total = static_cast<long long>((d < 0 ? 0 : d) / kSecond);
  long long days = total / 86400, h = (total / 3600) % 24, m = (total / 60) % 60, s = total % 60;
  char buf[64];
  if (days > 0) std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", days, h, m, s);
  else std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  return buf;
}

std::string format_seconds(Duration d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", to_seconds(d));
  return buf;
}

}  // namespace vramsim
