#pragma once
// Simulated time: a signed count of microseconds. Integer time keeps event
// ordering exact and traces byte-identical across runs and platforms.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramsim {

using SimTime = std::int64_t;   // microseconds since the start of the run
using Duration = std::int64_t;  // microseconds

constexpr Duration kMicrosecond = 1;
constexpr Duration kMillisecond = 1000;
constexpr Duration kSecond = 1000 * kMillisecond;
constexpr Duration kMinute = 60 * kSecond;
constexpr Duration kHour = 60 * kMinute;
constexpr SimTime kTimeMax = INT64_MAX;

constexpr Duration seconds(double s) { return static_cast<Duration>(s * 1e6 + (s >= 0 ? 0.5 : -0.5)); }
constexpr double to_seconds(Duration d) { return static_cast<double>(d) / 1e6; }

// Parses "250ms", "90s", "1.5s", "5m", "2h", "1d", "4:00:00" (H:MM:SS, SLURM
// style, also D-HH:MM:SS and MM:SS) and bare numbers (seconds). Returns nullopt
// on anything else, including negative values.
std::optional<Duration> parse_duration(std::string_view text);

// Shortest exact spelling: "250ms", "90s", "1.5s", "5m", "4h"; "0s" for zero.
std::string format_duration(Duration d);

// SLURM --time spelling: "4:00:00", "1-00:00:00" for a day or more.
std::string format_slurm_time(Duration d);

// Fixed three-decimal seconds for tables: "181.000".
std::string format_seconds(Duration d);

}  // namespace vramsim
