// The core's end-to-end promise: `ipusim run --graph` with autoReport leaves a
// complete SQLite profile whose slices add up exactly, run by run.
#include "cli_helpers.hpp"
#include "traces/profile_rows.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

namespace ipusim::test::test_graph_profile {
namespace {

const std::string kGraph = "workloads/graphs/stream_pipeline.json";

std::int64_t queryInt(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  std::int64_t value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return value;
}

TEST(GraphProfile, AutoReportWritesACompleteProfileWhosePhasesTileEveryRun) {
  ScratchDir dir("graph-profile");
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
  const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) + " " +
                              ipusimBinary() + " run --graph " + kGraph + " --runs 5");
  ASSERT_EQ(run.exitCode, 0) << run.output;

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir.path() / "profile.pop").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(queryInt(db, "SELECT value FROM meta WHERE key = 'schema_version'"), traces::kSchemaVersion);
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM runs"), 5);                 // every Engine::run has a row
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM runs WHERE captured"), 2);  // the default run count
  EXPECT_EQ(queryInt(db, "SELECT sum(steps) FROM runs"), 5 * 4);

  // Per IPU, per captured run: compute + exchange + sync + stream copy + idle = run length,
  // with no BSP phase overlapping another or leaving the run.
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT r.id, r.start_cycle, r.end_cycle, s.ts, s.dur, s.category FROM runs r "
                               "JOIN slices s ON s.run_id = r.id JOIN tracks t ON t.id = s.track_id "
                               "WHERE t.kind = 'bsp' ORDER BY r.id, t.ipu, s.ts",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  struct RunSums { std::int64_t start = 0, end = 0, cursor = 0; std::map<std::string, std::int64_t> byCategory; };
  std::map<std::int64_t, RunSums> runs;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const std::int64_t id = sqlite3_column_int64(stmt, 0);
    auto& r = runs[id];
    if (r.end == 0) {
      r.start = r.cursor = sqlite3_column_int64(stmt, 1);
      r.end = sqlite3_column_int64(stmt, 2);
    }
    const std::int64_t ts = sqlite3_column_int64(stmt, 3), dur = sqlite3_column_int64(stmt, 4);
    EXPECT_GE(ts, r.cursor) << "overlapping BSP phases in run " << id;
    EXPECT_LE(ts + dur, r.end) << "a BSP phase leaves run " << id;
    r.cursor = ts + dur;
    r.byCategory[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 5))] += dur;
  }
  sqlite3_finalize(stmt);
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& [id, r] : runs) {
    std::int64_t busy = 0;
    for (const auto& [category, cycles] : r.byCategory) busy += cycles;
    const std::int64_t idle = r.end - r.start - busy;
    EXPECT_GE(idle, 0);
    EXPECT_EQ(r.byCategory.at("compute") + r.byCategory.at("exchange") + r.byCategory.at("sync") +
                  r.byCategory.at("stream_copy") + idle,
              r.end - r.start);
    EXPECT_GT(r.byCategory.at("compute"), 0);
    EXPECT_GT(r.byCategory.at("exchange"), 0);
  }
  sqlite3_close(db);
}

TEST(GraphProfile, SyntheticDataKeepsTheCyclesOfRealData) {
  const std::string base = "cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() + " run --graph " + kGraph +
                           " --runs 3 --json";
  const auto real = runCommand(base);
  const auto synthetic = runCommand(base + " --synthetic-data");
  ASSERT_EQ(real.exitCode, 0) << real.output;
  ASSERT_EQ(synthetic.exitCode, 0) << synthetic.output;
  auto cycles = [](const std::string& out) {
    const auto at = out.find("\"cycles\":");
    return std::stoull(out.substr(at + 9));
  };
  EXPECT_EQ(cycles(real.output), cycles(synthetic.output));
}

}  // namespace
}  // namespace ipusim::test::test_graph_profile
