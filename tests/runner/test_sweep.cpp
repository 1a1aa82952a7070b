// Sweeps: path syntax and setting, value lists, seeds, slices, the grid
// order, messages for bad input, and rows that do not depend on the thread
// count or on how the grid is sliced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "runner/sweep.hpp"
#include "runner/sweep_parts.hpp"

using namespace vramsim;

namespace {

// Latencies drawn at random, so that seeds give different rows.
const char* kBase = R"({
  "name": "sweep-base", "seed": 5, "horizon": "30m",
  "cluster": {
    "max_workers": 1,
    "partition": [{"count": 3, "cpus": 16, "memory_gb": 256, "gpus": 1, "gpu": "A100-SXM4-40GB"}],
    "latency": {"queue_wait": {"dist": "exponential", "mean": "60s"}, "node_boot": "30s"}},
  "apps": [{"id": "a", "gpu_memory_mb": 8000, "deploy_at": "0s"},
           {"id": "b", "gpu_memory_mb": 30000, "deploy_at": "5s"}],
  "actions": [{"at": "1500s", "do": "shutdown"}],
  "expect": [{"app": "a", "state": "RUNNING", "within": "3m"}]
})";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SweepError& e) {
    return e.what();
  }
  return "(no error)";
}

SweepGrid grid_of(const std::vector<std::string>& sets, const std::string& seeds) {
  SweepGrid g;
  for (const auto& s : sets) g.params.push_back(parse_set(s));
  g.seeds = parse_seeds(seeds);
  return g;
}

std::string join(const std::vector<std::string>& rows) {
  std::string s;
  for (const auto& r : rows) s += r;
  return s;
}

}  // namespace

TEST(SweepPath, DotsAndJsonPointersSplitAlike) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_path("cluster.partition.0.gpus"), (V{"cluster", "partition", "0", "gpus"}));
  EXPECT_EQ(split_path("/cluster/partition/0/gpus"), (V{"cluster", "partition", "0", "gpus"}));
  EXPECT_EQ(split_path("/a~1b/c~0d"), (V{"a/b", "c~d"}));
  EXPECT_NE(error_of([] { split_path("cluster..max_workers"); }).find("empty step"), std::string::npos);
  EXPECT_NE(error_of([] { split_path("/a~2"); }).find("'~' must be followed by 0 or 1"), std::string::npos);
}

TEST(SweepPath, SetsExistingAndMissingFieldsRefusesImpossibleSteps) {
  Json doc = Json::parse(kBase);
  set_at_path(doc, split_path("cluster.partition.0.gpus"), 4, "p");
  EXPECT_EQ(doc["cluster"]["partition"][0]["gpus"], 4);
  set_at_path(doc, split_path("/cluster/autoscaler/idle_timeout"), "90s", "p");
  EXPECT_EQ(doc["cluster"]["autoscaler"]["idle_timeout"], "90s") << "missing objects are added";
  EXPECT_EQ(error_of([&] { set_at_path(doc, split_path("cluster.partition.1.gpus"), 1, "cluster.partition.1.gpus"); }),
            "--set cluster.partition.1.gpus: $.cluster.partition is an array of 1, expected an index from 0 to 1 "
            "(exclusive), got '1'");
  EXPECT_NE(error_of([&] { set_at_path(doc, split_path("cluster.max_workers.x"), 1, "q"); })
                .find("$.cluster.max_workers is a number, not an object or array"),
            std::string::npos);
}

TEST(SweepSet, ValuesAreJsonOrBareWords) {
  const SweepParam p = parse_set(R"(cluster.latency.queue_wait="10s",{"dist":"uniform","min":"1s","max":"5s"},legacy,[1,2],3.5)");
  EXPECT_EQ(p.path, "cluster.latency.queue_wait");
  ASSERT_EQ(p.values.size(), 5u);
  EXPECT_EQ(p.values[0], "10s");
  EXPECT_EQ(p.values[1]["max"], "5s") << "commas inside an object do not split";
  EXPECT_EQ(p.values[2], "legacy");
  EXPECT_EQ(p.values[3], Json::array({1, 2}));
  EXPECT_EQ(p.values[4], 3.5);
  EXPECT_EQ(p.spelled[1], R"({"dist":"uniform","min":"1s","max":"5s"})");
  EXPECT_NE(error_of([] { parse_set("cluster.max_workers"); }).find("expected PATH=VALUE,VALUE"), std::string::npos);
  EXPECT_NE(error_of([] { parse_set("cluster.max_workers=[1"); }).find("value '[1' is neither JSON nor a bare word"),
            std::string::npos);
}

TEST(SweepSeeds, RangesSinglesAndLists) {
  EXPECT_EQ(parse_seeds("1..4"), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(parse_seeds("7"), (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(parse_seeds("9,1,5"), (std::vector<std::uint64_t>{9, 1, 5}));
  for (const char* bad : {"5..1", "a..3", "1..", "", "1,,2", "-3"})
    EXPECT_NE(error_of([&] { parse_seeds(bad); }).find("--seeds '" + std::string(bad) + "': expected"),
              std::string::npos)
        << bad;
}

TEST(SweepSlice, SlicesAreContiguousBalancedAndCoverTheGrid) {
  for (std::size_t n = 0; n <= 40; ++n)
    for (std::size_t k = 1; k <= 9; ++k) {
      std::size_t expect_begin = 0, smallest = n, largest = 0;
      for (std::size_t i = 0; i < k; ++i) {
        const auto [b, e] = slice_range(n, i, k);
        ASSERT_EQ(b, expect_begin) << n << " " << i << "/" << k;
        ASSERT_LE(b, e);
        smallest = std::min(smallest, e - b);
        largest = std::max(largest, e - b);
        expect_begin = e;
      }
      EXPECT_EQ(expect_begin, n);
      EXPECT_LE(largest - smallest, 1u);
    }
  EXPECT_EQ(parse_slice("2/5"), (std::pair<std::size_t, std::size_t>{2, 5}));
  for (const char* bad : {"5/5", "1/0", "1", "a/2", "1/2/3"})
    EXPECT_NE(error_of([&] { parse_slice(bad); }).find("expected I/K with 0 <= I < K"), std::string::npos) << bad;
}

TEST(SweepGrid, LastParameterVariesFastestThenSeeds) {
  const SweepGrid g = grid_of({"a=1,2", "b=x,y,z"}, "1..2");
  EXPECT_EQ(g.combinations(), 6u);
  EXPECT_EQ(g.size(), 12u);
  EXPECT_EQ(g.values_of(0), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(g.values_of(1), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(g.values_of(3), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(g.values_of(5), (std::vector<std::size_t>{1, 2}));
}

TEST(SweepGrid, ValueTheScenarioRefusesNamesTheSettingAndTheField) {
  const SweepGrid g = grid_of({"cluster.max_workers=1,-1"}, "1");
  EXPECT_EQ(error_of([&] { expand_scenarios(Json::parse(kBase), "base.json", g); }),
            "--set cluster.max_workers=-1: base.json: $.cluster.max_workers: expected an integer in [0, 65536], "
            "got -1");
  const SweepGrid typo = grid_of({"cluster.max_wokers=2"}, "1");
  EXPECT_NE(error_of([&] { expand_scenarios(Json::parse(kBase), "base.json", typo); })
                .find("$.cluster.max_wokers: unknown field"),
            std::string::npos);
}

TEST(SweepRun, RowsAreTheSameWhateverTheThreadsAndSlices) {
  const SweepGrid g = grid_of({"cluster.max_workers=1,2", "policies=legacy,fixed"}, "1..4");
  const auto scenarios = expand_scenarios(Json::parse(kBase), "base.json", g);
  ASSERT_EQ(scenarios.size(), 4u);
  EXPECT_EQ(scenarios[1].control.autoscaler.max_workers, 1);
  EXPECT_EQ(scenarios[2].control.autoscaler.max_workers, 2);
  EXPECT_EQ(scenarios[1].policies, "fixed");
  const auto one = run_sweep(g, scenarios, 0, g.size(), 1);
  ASSERT_EQ(one.size(), g.size());
  EXPECT_EQ(join(run_sweep(g, scenarios, 0, g.size(), 2)), join(one));
  EXPECT_EQ(join(run_sweep(g, scenarios, 0, g.size(), 5)), join(one));
  std::string sliced;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto [b, e] = slice_range(g.size(), i, 3);
    sliced += join(run_sweep(g, scenarios, b, e, 2));
  }
  EXPECT_EQ(sliced, join(one));
  // The rows really differ: parameters, seeds and the drawn waits show.
  EXPECT_EQ(std::set<std::string>(one.begin(), one.end()).size(), one.size());
  EXPECT_EQ(one[0].rfind("1,legacy,1,", 0), 0u) << one[0];
  EXPECT_EQ(one[5].rfind("1,fixed,2,", 0), 0u) << one[5];
  EXPECT_EQ(one[15].rfind("2,fixed,4,", 0), 0u) << one[15];
}

TEST(SweepRun, HeaderAndRowsHaveTheSameColumns) {
  const SweepGrid g = grid_of({"cluster.max_workers=1,2"}, "3");
  const auto rows = run_sweep(g, expand_scenarios(Json::parse(kBase), "base.json", g), 0, g.size(), 2);
  const std::string header = sweep_csv_header(g);
  EXPECT_EQ(header.rfind("cluster.max_workers,seed,jobs_submitted,", 0), 0u) << header;
  EXPECT_NE(header.find(",ttr_p50_s,ttr_p95_s,ttr_p99_s,"), std::string::npos);
  EXPECT_NE(header.find(",expectations_held,expectations,all_held\n"), std::string::npos);
  auto columns = [](const std::string& line) { return std::count(line.begin(), line.end(), ','); };
  for (const auto& r : rows) {
    EXPECT_EQ(columns(r), columns(header)) << r;
    EXPECT_EQ(r.back(), '\n');
  }
}

TEST(SweepRun, ProgressCountsEveryRunOnce) {
  const SweepGrid g = grid_of({}, "1..6");
  std::vector<std::size_t> seen;
  run_sweep(g, expand_scenarios(Json::parse(kBase), "base.json", g), 1, 5, 3,
            [&](std::size_t done, std::size_t total) {
              EXPECT_EQ(total, 4u);
              seen.push_back(done);
            });
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 3, 4}));
}

TEST(SweepSlurm, ShellQuotingSurvivesTheShell) {
  for (const std::string& word : {std::string("plain-word_1.json"), std::string("it's"), std::string("a b"),
                                 std::string(R"({"dist":"uniform","min":"1s"})"), std::string("$HOME `x` \\ *"),
                                 std::string("")}) {
    FILE* p = popen(("printf '%s' " + shell_quote(word)).c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ASSERT_EQ(pclose(p), 0);
    EXPECT_EQ(out, word);
  }
  EXPECT_EQ(shell_quote("cluster.max_workers=1,2"), "cluster.max_workers=1,2") << "plain words stay readable";
}

TEST(SweepSlurm, ArrayScriptRunsOneSliceATask) {
  const std::string s =
      sweep_array_script({"/bin/vramsim", "sweep", "/s/a b.json", "--set", "policies=legacy,fixed"}, 4, 2, "/w/parts");
  EXPECT_EQ(s.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(s.find("\n#SBATCH --array=0-3\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n#SBATCH --cpus-per-task=2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n#SBATCH --output=/w/parts/task-%a.log\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\nexec /bin/vramsim sweep '/s/a b.json' --set policies=legacy,fixed --slice "
                   "\"$SLURM_ARRAY_TASK_ID\"/4 --checksums -j 2 -o /w/parts/part-\"$SLURM_ARRAY_TASK_ID\".csv\n"),
            std::string::npos)
      << s;
  const std::string some = sweep_array_script({"/bin/vramsim", "sweep", "/s/a.json"}, 6, 1, "/w/parts", {1, 3, 4, 5});
  EXPECT_NE(some.find("\n#SBATCH --array=1,3-5\n"), std::string::npos) << "a resumed sweep: only those slices\n" << some;
  EXPECT_NE(some.find("--slice \"$SLURM_ARRAY_TASK_ID\"/6 "), std::string::npos) << "still slices of all six\n" << some;
}

TEST(SweepParts, Sha256OfKnownTexts) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A file is hashed in 1 MiB blocks: a million 'a' (FIPS 180-2's long test
// vector, under one block) and 2.5 MiB of varied bytes (three blocks, the last
// part full) hash as the same bytes in one piece do; a missing file has none.
TEST(SweepParts, FileSha256StreamsBlocks) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "vramsim-sha-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path dir = tmpl;
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream out(dir / name, std::ios::binary);
    out << bytes;
    out.close();
    EXPECT_TRUE(out) << name;
    return (dir / name).string();
  };
  EXPECT_EQ(file_sha256(write("a", std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  std::string varied(5 * (std::size_t{1} << 19), '\0');
  for (std::size_t i = 0; i < varied.size(); ++i) varied[i] = static_cast<char>((i * 131 + i / 977) & 0xff);
  EXPECT_EQ(file_sha256(write("varied", varied)), sha256_hex(varied));
  EXPECT_EQ(file_sha256(write("empty", "")), sha256_hex(""));
  EXPECT_EQ(file_sha256((dir / "missing").string()), std::nullopt);
  std::filesystem::remove_all(dir);
}

TEST(SweepParts, StampReadsBackAndRefusesWhatIsNotOne) {
  PartStamp s;
  s.binary = sha256_hex("binary");
  s.scenario = sha256_hex("scenario");
  s.grid = grid_arguments({"policies=legacy,fixed", "cluster.latency.queue_wait={\"dist\":\"fixed\"},5s"}, "1..6");
  s.slice = 2;
  s.slices = 5;
  s.rows = 9;
  s.csv = sha256_hex("csv");
  EXPECT_EQ(s.grid, "--set policies=legacy,fixed --set 'cluster.latency.queue_wait={\"dist\":\"fixed\"},5s' --seeds 1..6");
  const std::string text = format_part_stamp(s);
  EXPECT_EQ(text.rfind("vramsim-sweep-part 1\n", 0), 0u) << text;
  const auto back = parse_part_stamp(text);
  ASSERT_TRUE(back) << text;
  EXPECT_EQ(back->binary, s.binary);
  EXPECT_EQ(back->scenario, s.scenario);
  EXPECT_EQ(back->grid, s.grid);
  EXPECT_EQ(back->slice, 2u);
  EXPECT_EQ(back->slices, 5u);
  EXPECT_EQ(back->rows, 9u);
  EXPECT_EQ(back->csv, s.csv);
  EXPECT_EQ(grid_arguments({}, ""), "");
  EXPECT_EQ(grid_arguments({"a=1"}, ""), "--set a=1");

  const auto without = [&](const std::string& key) {
    const auto at = text.find("\n" + key + " ");
    return text.substr(0, at + 1) + text.substr(text.find('\n', at + 1) + 1);
  };
  for (const char* key : {"binary", "scenario", "grid", "slice", "rows", "csv"})
    EXPECT_FALSE(parse_part_stamp(without(key))) << "no " << key;
  EXPECT_FALSE(parse_part_stamp(""));
  EXPECT_FALSE(parse_part_stamp("p,seed\na,1\n")) << "a CSV is not a record";
  EXPECT_FALSE(parse_part_stamp("vramsim-sweep-part 2\n" + text.substr(text.find('\n') + 1))) << "another version";
  std::string bad = text;
  bad.replace(bad.find("slice 2/5"), 9, "slice 5/5");
  EXPECT_FALSE(parse_part_stamp(bad)) << "a slice outside its count";
  bad = text;
  bad.replace(bad.find("binary ") + 7, 1, "X");
  EXPECT_FALSE(parse_part_stamp(bad)) << "a checksum that is not hex";
  EXPECT_FALSE(parse_part_stamp(text + "rows 3\n")) << "a field twice";
}

TEST(SweepParts, CheckTellsGoodMissingAndStaleParts) {
  const std::string h = "p,seed\n";
  // 5 runs in 3 slices: slice 1 holds 2 rows.
  const std::string csv = h + "a,2\nb,1\n";
  PartStamp expected;
  expected.binary = sha256_hex("build 1");
  expected.scenario = sha256_hex("scenario 1");
  expected.grid = "--set p=a,b,c --seeds 1,2";
  expected.slice = 1;
  expected.slices = 3;
  PartStamp made = expected;
  made.rows = 2;
  made.csv = sha256_hex(csv);
  using S = PartCheck::State;
  const auto check = [&](const std::optional<std::string>& part, const PartStamp& stamp) {
    return check_part(part, format_part_stamp(stamp), expected, h, 5);
  };
  EXPECT_EQ(check(csv, made).state, S::Good) << check(csv, made).why;
  EXPECT_EQ(check(std::nullopt, made).state, S::Missing);
  EXPECT_EQ(check(std::nullopt, made).why, "missing");

  const PartCheck no_record = check_part(csv, std::nullopt, expected, h, 5);
  EXPECT_EQ(no_record.state, S::Stale);
  EXPECT_EQ(no_record.why, "no checksum record beside it (its task did not finish)");
  EXPECT_EQ(check_part(csv, "junk\n", expected, h, 5).why, "its checksum record is not one vramsim wrote");

  PartStamp other = made;
  other.binary = sha256_hex("build 2");
  EXPECT_EQ(check(csv, other).state, S::Stale);
  EXPECT_EQ(check(csv, other).why, "made by another vramsim build (binary sha256 " + other.binary.substr(0, 12) +
                                       "..., this one " + expected.binary.substr(0, 12) + "...)");
  other = made;
  other.scenario = sha256_hex("scenario 2");
  EXPECT_EQ(check(csv, other).why.rfind("made from another scenario file (sha256 " + other.scenario.substr(0, 12), 0), 0u)
      << check(csv, other).why;
  other = made;
  other.grid = "--set p=a,b,c --seeds 1,3";
  EXPECT_EQ(check(csv, other).why,
            "made for another grid ('--set p=a,b,c --seeds 1,3', this sweep '--set p=a,b,c --seeds 1,2')");
  other = made;
  other.slices = 4;
  EXPECT_EQ(check(csv, other).why, "slice 1/4, expected 1/3");
  EXPECT_EQ(check(h + "a,2\nb,9\n", made).why, "its bytes differ from its checksum record (changed or cut short)");
  EXPECT_EQ(check(h + "a,2\n", made).state, S::Stale) << "cut short";
  other = made;
  other.rows = 0;
  EXPECT_EQ(check(csv, other).why, "its checksum record counts 0 row(s), the slice has 2");
  other = made;
  other.csv = sha256_hex(h + "a,2\n");
  other.rows = 2;
  EXPECT_EQ(check(h + "a,2\n", other).why, "expected 2 row(s), got 1") << "recorded as it is, but short";

  EXPECT_EQ(slices_to_rerun({{}, {S::Missing, "missing"}, {}, {S::Stale, "x"}}), (std::vector<std::size_t>{1, 3}));
  EXPECT_TRUE(slices_to_rerun({{}, {}}).empty());
  EXPECT_EQ(part_file("/w/p", 3), "/w/p/part-3.csv");
  EXPECT_EQ(stamp_file(part_file("/w/p", 3)), "/w/p/part-3.csv.sum");
}

TEST(SweepParts, ArraySpecJoinsRuns) {
  EXPECT_EQ(array_spec({0, 1, 2, 3, 4}), "0-4");
  EXPECT_EQ(array_spec({1, 3, 4, 5, 9}), "1,3-5,9");
  EXPECT_EQ(array_spec({7}), "7");
  EXPECT_EQ(array_spec({}), "");
}

TEST(SweepParts, TaskEndingsFromSacctOrScontrol) {
  const auto sacct = parse_array_endings(
      "41_0|COMPLETED|0:0\n41_1|FAILED|3:0\n41_2|CANCELLED by 1000|0:15\n41_3|RUNNING|0:0\n"
      "41_[4-6]|PENDING|0:0\n42_5|COMPLETED|0:0\n",
      "41");
  ASSERT_EQ(sacct.size(), 3u);
  EXPECT_EQ(sacct.at(0).state, "COMPLETED");
  EXPECT_EQ(sacct.at(1).state, "FAILED");
  EXPECT_EQ(sacct.at(1).exit_code, "3:0");
  EXPECT_EQ(sacct.at(2).state, "CANCELLED");
  EXPECT_EQ(task_state_line(0, &sacct.at(0)), "task 0: COMPLETED");
  EXPECT_EQ(task_state_line(1, &sacct.at(1)), "task 1: FAILED (exit 3)");
  EXPECT_EQ(task_state_line(2, &sacct.at(2)), "task 2: CANCELLED (signal 15)");
  EXPECT_EQ(task_state_line(3, nullptr), "task 3: unknown");

  const auto scontrol = parse_array_endings(
      "JobId=44 ArrayJobId=41 ArrayTaskId=3 JobName=vramsim-sweep JobState=TIMEOUT Reason=TimeLimit "
      "ExitCode=0:15 DerivedExitCode=0:0\n"
      "JobId=41 ArrayJobId=41 ArrayTaskId=4-6 JobState=PENDING Reason=Resources ExitCode=0:0\n"
      "JobId=45 ArrayJobId=41 ArrayTaskId=1 JobState=RUNNING ExitCode=0:0\n"
      "JobId=46 ArrayJobId=4 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n"
      "slurm_load_jobs error: Invalid job id specified\n",
      "41");
  ASSERT_EQ(scontrol.size(), 1u);
  EXPECT_EQ(scontrol.at(3).state, "TIMEOUT");
  EXPECT_EQ(task_state_line(3, &scontrol.at(3)), "task 3: TIMEOUT (signal 15)");
  EXPECT_TRUE(parse_array_endings("", "41").empty());
}

TEST(SweepSlurm, MergeKeepsSliceOrderAndRefusesShortOrForeignParts) {
  const std::string h = "p,seed\n";
  // 5 runs in 3 slices: 1, 2 and 2 rows.
  const std::vector<std::string> names = {"part-0", "part-1", "part-2"};
  EXPECT_EQ(merge_parts(h, {h + "a,1\n", h + "a,2\nb,1\n", h + "b,2\nc,1\n"}, 5, names),
            "p,seed\na,1\na,2\nb,1\nb,2\nc,1\n");
  EXPECT_EQ(merge_parts(h, {h, h + "x,1\n"}, 1, {"part-0", "part-1"}), "p,seed\nx,1\n") << "an empty slice";
  auto err = [&](const std::vector<std::string>& parts) {
    try {
      merge_parts(h, parts, 5, names);
    } catch (const SweepError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err({h + "a,1\n", h + "a,2\n", h + "b,2\nc,1\n"}), "part-1: expected 2 row(s), got 1");
  EXPECT_EQ(err({h + "a,1\n", h + "a,2\nb,1", h + "b,2\nc,1\n"}), "part-1: expected 2 row(s), got 1")
      << "a part cut short mid-row";
  EXPECT_EQ(err({h + "a,1\n", "q,seed\na,2\nb,1\n", h + "b,2\nc,1\n"}),
            "part-1: expected the sweep's CSV header on the first line");
  EXPECT_EQ(err({h + "a,1\n", h + "a,2\nb,1\n", ""}), "part-2: expected the sweep's CSV header on the first line");
}

TEST(SweepGrid, TooManyRunsRefusedBeforeAnyRuns) {
  const SweepGrid g = grid_of({"cluster.max_workers=1,2,3,4,5,6,7,8,9,10", "policies=legacy,fixed"}, "1..50001");
  EXPECT_EQ(error_of([&] { expand_scenarios(Json::parse(kBase), "base.json", g); }),
            "--set/--seeds: the grid has more than 1000000 runs; split it into several sweeps");
  const SweepGrid ok = grid_of({"cluster.max_workers=1,2,3,4,5,6,7,8,9,10", "policies=legacy,fixed"}, "1..50000");
  EXPECT_EQ(expand_scenarios(Json::parse(kBase), "base.json", ok).size(), 20u) << "exactly the limit";
}

// docs/sweeps.md's column table is the CSV's column list: a column the sweep
// writes without a row there, or a row for a column it does not write, fails.
TEST(SweepDocs, EveryCsvColumnIsInTheTable) {
  SweepGrid g;
  g.seeds = {1};
  std::string header = sweep_csv_header(g);
  ASSERT_EQ(header.back(), '\n');
  header.pop_back();
  std::vector<std::string> columns;
  for (std::size_t at = 0;;) {
    const auto comma = header.find(',', at);
    columns.push_back(header.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  ASSERT_GT(columns.size(), 30u);
  const std::string doc = std::string(VRAMSIM_SOURCE_DIR) + "/docs/sweeps.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::set<std::string> documented;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_table = line == "## CSV columns";
    if (!in_table || line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);  // the first cell: `a`, `b`
    for (std::size_t at = 0; (at = cell.find('`', at)) != std::string::npos;) {
      const auto close = cell.find('`', at + 1);
      documented.insert(cell.substr(at + 1, close - at - 1));
      at = close + 1;
    }
  }
  for (const auto& c : columns) EXPECT_TRUE(documented.count(c)) << doc << ": no row for the CSV column " << c;
  for (const auto& d : documented)
    EXPECT_NE(std::find(columns.begin(), columns.end(), d), columns.end())
        << doc << ": a row for " << d << ", which the sweep does not write";
}
