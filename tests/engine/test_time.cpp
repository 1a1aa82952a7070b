#include "engine/time.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace vramsim {
namespace {

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("250ms"), 250 * kMillisecond);
  EXPECT_EQ(parse_duration("90s"), 90 * kSecond);
  EXPECT_EQ(parse_duration("1.5s"), 1500 * kMillisecond);
  EXPECT_EQ(parse_duration("5m"), 5 * kMinute);
  EXPECT_EQ(parse_duration("2h"), 2 * kHour);
  EXPECT_EQ(parse_duration("1d"), 24 * kHour);
  EXPECT_EQ(parse_duration("7us"), 7 * kMicrosecond);
  EXPECT_EQ(parse_duration("0s"), 0);
}

TEST(ParseDuration, BareNumberIsSeconds) {
  EXPECT_EQ(parse_duration("30"), 30 * kSecond);
  EXPECT_EQ(parse_duration("0.25"), 250 * kMillisecond);
}

TEST(ParseDuration, SlurmClock) {
  EXPECT_EQ(parse_duration("4:00:00"), 4 * kHour);
  EXPECT_EQ(parse_duration("1-00:00:00"), 24 * kHour);
  EXPECT_EQ(parse_duration("2-03:04:05"), 2 * 24 * kHour + 3 * kHour + 4 * kMinute + 5 * kSecond);
  EXPECT_EQ(parse_duration("05:30"), 5 * kMinute + 30 * kSecond);
  EXPECT_EQ(parse_duration("0:00:01"), kSecond);
}

TEST(ParseDuration, Rejects) {
  for (const char* bad : {"", "-5s", "abc", "5x", "1:75:00", "1:00:75", "-1", "s", "ms", "1:2:3:4",
                          ":30", "5:", "1-", "-1:00:00", "1.5:00", " 5s", "5s ", "nan", "inf"})
    EXPECT_EQ(parse_duration(bad), std::nullopt) << "accepted '" << bad << "'";
}

// A clock spelling too large for int64 microseconds must be refused, not
// overflow (signed overflow is undefined behaviour).
TEST(ParseDuration, HugeClockIsRejectedNotOverflowed) {
  EXPECT_EQ(parse_duration("99999999999999:00:00"), std::nullopt);
  EXPECT_EQ(parse_duration("99999999999-00:00:00"), std::nullopt);
}

// SLURM reads "D-HH:MM" as days-hours:minutes and "D-HH" as days-hours.
TEST(ParseDuration, DayPrefixFollowsSlurm) {
  EXPECT_EQ(parse_duration("1-05:30"), 24 * kHour + 5 * kHour + 30 * kMinute);
  EXPECT_EQ(parse_duration("2-5"), 2 * 24 * kHour + 5 * kHour);
  EXPECT_EQ(parse_duration("1-00:00:01"), 24 * kHour + kSecond);
  EXPECT_EQ(parse_duration("1-24:00:00"), std::nullopt);
}

TEST(FormatDuration, ShortestSpelling) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(250 * kMillisecond), "250ms");
  EXPECT_EQ(format_duration(90 * kSecond), "90s");
  EXPECT_EQ(format_duration(1500 * kMillisecond), "1.5s");
  EXPECT_EQ(format_duration(5 * kMinute), "5m");
  EXPECT_EQ(format_duration(4 * kHour), "4h");
  EXPECT_EQ(format_duration(7), "7us");
  EXPECT_EQ(format_duration(-5 * kSecond), "-5s");
}

TEST(FormatDuration, RoundTrips) {
  std::vector<Duration> values = {1,
                                  999,
                                  kMillisecond,
                                  1234 * kMillisecond,
                                  12500 * kMillisecond,
                                  123500 * kMillisecond,
                                  1000500 * kMillisecond,
                                  59 * kSecond,
                                  61 * kSecond,
                                  90 * kMinute,
                                  25 * kHour,
                                  365 * 24 * kHour + 1,
                                  kSecond + 1};
  // Plus a deterministic spread over many magnitudes.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(static_cast<Duration>(x % (std::uint64_t{1} << (i % 50 + 1))));
  }
  for (Duration d : values) {
    const std::string s = format_duration(d);
    EXPECT_EQ(parse_duration(s), d) << "formatted as '" << s << "'";
  }
}

TEST(FormatSlurmTime, Spellings) {
  EXPECT_EQ(format_slurm_time(0), "0:00:00");
  EXPECT_EQ(format_slurm_time(90 * kSecond), "0:01:30");
  EXPECT_EQ(format_slurm_time(4 * kHour), "4:00:00");
  EXPECT_EQ(format_slurm_time(23 * kHour + 59 * kMinute + 59 * kSecond), "23:59:59");
  EXPECT_EQ(format_slurm_time(24 * kHour), "1-00:00:00");
  EXPECT_EQ(format_slurm_time(2 * 24 * kHour + 3 * kHour + 4 * kMinute + 5 * kSecond), "2-03:04:05");
  EXPECT_EQ(format_slurm_time(-kSecond), "0:00:00");
}

TEST(FormatSlurmTime, ParsesBack) {
  for (Duration d : {kSecond, 90 * kSecond, 4 * kHour, 24 * kHour, 50 * kHour + 7 * kSecond})
    EXPECT_EQ(parse_duration(format_slurm_time(d)), d);
}

TEST(FormatSeconds, ThreeDecimals) {
  EXPECT_EQ(format_seconds(181 * kSecond), "181.000");
  EXPECT_EQ(format_seconds(1234567 * kMicrosecond), "1.235");
  EXPECT_EQ(format_seconds(0), "0.000");
}

TEST(SecondsHelper, RoundsToNearestMicrosecond) {
  EXPECT_EQ(seconds(1.5), 1500000);
  EXPECT_EQ(seconds(0.0000004), 0);
  EXPECT_EQ(seconds(0.0000006), 1);
  EXPECT_EQ(seconds(-0.0000006), -1);
  EXPECT_DOUBLE_EQ(to_seconds(2500 * kMillisecond), 2.5);
}

}  // namespace
}  // namespace vramsim
