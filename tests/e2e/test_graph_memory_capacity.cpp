// A serialized graph is checked against tile memory when it is loaded: one
// tile over tile.memoryBytes is refused with Poplar's out-of-memory summary
// naming the file, unless debug.allowOutOfMemory (then it runs, and warns).
#include "cli_helpers.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::test::test_graph_memory_capacity {
namespace {

namespace fs = std::filesystem;

// Tile 0: 'small' (16 floats, 64 B) filled by one vertex; tile 1: 'big'
// (4096 floats = 16,384 B at address 0). On a 4-tile target with 8,192 bytes
// per tile, tile 1 is 8,192 bytes over.
std::string writeGraph(const ScratchDir& dir) {
  using nlohmann::json;
  auto tensor = [](int id, const char* name, int elements, int tile, const char* category) {
    return json{{"id", id},       {"name", name},         {"shape", {elements}}, {"dtype", "float"},
                {"category", category}, {"alwaysLive", true},
                {"mapping", {{{"tile", tile}, {"begin", 0}, {"end", elements}, {"address", 0}}}}};
  };
  const json graph = {
      {"format", "ipusim-executable"},
      {"version", 1},
      {"name", "over_capacity"},
      {"target", {{"arch", "ipu2"}, {"overrides", json::object()}}},
      {"options", json::object()},
      {"tensors", {tensor(0, "small", 16, 0, "activations"), tensor(1, "big", 4096, 1, "weights")}},
      {"computeSets",
       {{{"id", 0},
         {"name", "fill"},
         {"vertices",
          {{{"codelet", "Fill"},
            {"tile", 0},
            {"fields", {{{"name", "out"}, {"tensor", 0}, {"begin", 0}, {"end", 16}}}},
            {"params", {{"value", 1.0}}}}}}}}},
      {"streams", json::array()},
      {"programs", {{{"id", 0}, {"kind", "Execute"}, {"name", "fill"}, {"computeSet", 0}}}},
      {"entryPoints", {{{"name", "main"}, {"program", 0}}}}};
  const std::string path = (dir.path() / "over_capacity.json").string();
  std::ofstream(path) << graph.dump(1);
  return path;
}

std::string run(const ScratchDir& dir, const std::string& graph, const std::string& options, const std::string& flags) {
  return "POPLAR_ENGINE_OPTIONS=" +
         quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"" + options + "}") + " " +
         ipusimBinary() + " run --graph " + quote(graph) + " " + flags;
}

std::int64_t queryInt(const fs::path& profile, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t value = -1;
  if (sqlite3_open_v2(profile.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      value = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return value;
}

const std::string kSmallTarget = "--tiles 4 --set tile.memoryBytes=8192";

TEST(GraphMemoryCapacity, AGraphOverCapacityIsRefusedWithPoplarsSummary) {
  ScratchDir dir("graph-oom");
  const std::string graph = writeGraph(dir);
  const auto r = runCommand(run(dir, graph, "", kSmallTarget));
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("Out of memory in '" + graph + "': cannot fit all variable data onto 1 of 4 tiles "
                          "(tiles only have 8192 bytes of memory); 8192 bytes over in total."),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Out of memory on tile 1: 16384 bytes used (8192 over; always-live 16384, "
                          "not-always-live peak 0); largest variables: 'big' (weights, 16384 bytes)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("debug.allowOutOfMemory"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

TEST(GraphMemoryCapacity, AllowOutOfMemoryRunsItAndWarns) {
  ScratchDir dir("graph-oom-allowed");
  const std::string graph = writeGraph(dir);
  const auto r = runCommand(run(dir, graph, ",\"debug.allowOutOfMemory\":\"true\"", kSmallTarget));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("warning          out of memory: 1 tile(s) over the 8192 bytes of tile memory, 8192 bytes "
                          "over in total (ran because debug.allowOutOfMemory is true)"),
            std::string::npos)
      << r.output;
  const fs::path profile = dir.path() / "profile.pop";
  EXPECT_EQ(queryInt(profile, "SELECT peak_bytes FROM tile_memory_peak WHERE tile = 1"), 16384);
  EXPECT_EQ(queryInt(profile, "SELECT peak_bytes FROM tile_memory_peak WHERE tile = 0"), 64);
}

TEST(GraphMemoryCapacity, TheSameGraphFitsTheDefaultTile) {
  ScratchDir dir("graph-fits");
  const std::string graph = writeGraph(dir);
  const auto r = runCommand(run(dir, graph, "", "--tiles 4"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("out of memory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Out of memory"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_graph_memory_capacity
