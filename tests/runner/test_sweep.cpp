// Sweeps: path syntax and setting, value lists, seeds, slices, the grid
// order, messages for bad input, and rows that do not depend on the thread
// count or on how the grid is sliced.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "runner/sweep.hpp"

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
                   "\"$SLURM_ARRAY_TASK_ID\"/4 -j 2 -o /w/parts/part-\"$SLURM_ARRAY_TASK_ID\".csv\n"),
            std::string::npos)
      << s;
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
