// traces/SCHEMA.md stays true: every table, view and column of a written
// profile is documented in its section, and every example query runs and
// returns rows on a small profile.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

namespace ipusim::traces::schema_documentation_test {
namespace {

using testing::ScratchDirectory;

std::string readSchemaDocument() {
  std::ifstream file(std::string(IPUSIM_SOURCE_DIR) + "/traces/SCHEMA.md");
  EXPECT_TRUE(file.good()) << "cannot read traces/SCHEMA.md";
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The text of the "## <name>" section, up to the next "## " heading.
std::string section(const std::string& document, const std::string& name) {
  for (const std::string& heading : {"\n## " + name + "\n", "\n## " + name + " "}) {
    const auto start = document.find(heading);
    if (start == std::string::npos) continue;
    const auto end = document.find("\n## ", start + heading.size());
    return document.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return {};
}

std::vector<std::string> sqlBlocks(const std::string& document) {
  std::vector<std::string> blocks;
  const std::string open = "```sql\n", close = "```";
  for (auto at = document.find(open); at != std::string::npos; at = document.find(open, at)) {
    at += open.size();
    const auto end = document.find(close, at);
    blocks.push_back(document.substr(at, end - at));
    at = end;
  }
  return blocks;
}

std::vector<std::string> queryColumn(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<std::string> values;
  while (sqlite3_step(stmt) == SQLITE_ROW)
    values.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  sqlite3_finalize(stmt);
  return values;
}

// A tiny but complete profile: every table has rows, so that every example
// query has something to return.
void writeSmallProfile(const std::string& path) {
  ProfileWriter writer(path);
  writer.setMeta("clock_hz", "1330000000");
  writer.setMeta("tile_memory_bytes", "638976");
  writer.addRun(RunRow{0, 0, "train", 0, 2000, 1, true});
  const auto engine = writer.addTrack(TrackRow{0, -1, "engine", "Engine", -1, -1, 0});
  const auto bsp = writer.addTrack(TrackRow{0, -1, "bsp", "IPU 0", 0, -1, 1});
  const auto loss = writer.addTrack(TrackRow{0, -1, "counter", "loss", -1, -1, 2});
  writer.addProgram(ProgramRow{1, -1, "Execute", "fc1", "dense", "MatMul", 0});
  writer.addPhase(PhaseRow{1, "compute", "fc1", 1, -1});
  writer.addTilePhase(TilePhaseRow{1, 0, 0, 900, 3});
  writer.addTilePhase(TilePhaseRow{1, 0, 1, 700, 2});
  writer.addTileMemory(TileMemoryRow{0, 0, "weights", true, 4096});
  writer.addTileMemoryPeak(TileMemoryPeakRow{0, 0, 4096, 4096, 0});
  writer.addSlice(SliceRow{0, engine, 0, 0, 2000, "Engine::run", "engine_run", 0, -1, -1, -1, -1});
  writer.addSlice(SliceRow{0, bsp, 0, 100, 900, "fc1", "compute", 0, -1, 1, 1, -1});
  writer.addCounter(CounterRow{loss, 1000, 2.3, 0, 0});
  writer.addProgramWork(ProgramWorkRow{1, 2 * 32 * 784 * 128, 2, 2});
  writer.addTensor(TensorRow{0, "w", "weights", true, 4096, 1, "dense", "kernel"});
  writer.addTensor(TensorRow{1, "x", "activations", false, 1024, 2, "dense", "matmul"});
  writer.addProgramOrder(ProgramOrderRow{0, 0, 1});
  writer.addTensorLifetime(TensorLifetimeRow{0, 0, 0, 0});
  writer.addTensorLifetime(TensorLifetimeRow{0, 1, 0, 0});
  writer.commit();
}

TEST(SchemaDocumentation, EveryTableViewAndColumnIsDocumented) {
  ScratchDirectory dir;
  writeSmallProfile(dir.file("profile.pop"));
  ProfileReader reader(dir.file("profile.pop"));
  const std::string document = readSchemaDocument();
  const auto objects = queryColumn(
      reader.db(), "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                   "AND name NOT LIKE 'sqlite_%' ORDER BY name");
  ASSERT_EQ(objects.size(), 21u);  // 20 tables and the tile_slices view
  for (const auto& object : objects) {
    const std::string text = section(document, object);
    ASSERT_FALSE(text.empty()) << "SCHEMA.md has no section '## " << object << "'";
    for (const auto& column : queryColumn(reader.db(), "SELECT name FROM pragma_table_info('" + object + "')"))
      EXPECT_NE(text.find("`" + column + "`"), std::string::npos)
          << "SCHEMA.md section " << object << " does not document column " << column;
  }
}

TEST(SchemaDocumentation, EveryExampleQueryRunsAndReturnsRows) {
  ScratchDirectory dir;
  writeSmallProfile(dir.file("profile.pop"));
  ProfileReader reader(dir.file("profile.pop"));
  const auto blocks = sqlBlocks(readSchemaDocument());
  ASSERT_GE(blocks.size(), 6u);
  for (const auto& sql : blocks) {
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(reader.db(), sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sqlite3_errmsg(reader.db()) << "\n" << sql;
    // Named parameters of the window example: track 2 (BSP), [0, 500).
    for (const auto& [name, value] : {std::pair<const char*, int>{":track", 2}, {":from", 0}, {":to", 500}})
      if (const int index = sqlite3_bind_parameter_index(stmt, name)) sqlite3_bind_int(stmt, index, value);
    int rows = 0;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      ++rows;
      // A NULL is what a query reading a meta key nobody writes returns.
      if (sql.find("FROM meta") != std::string::npos) {
        for (int column = 0; column < sqlite3_column_count(stmt); ++column)
          EXPECT_NE(sqlite3_column_type(stmt, column), SQLITE_NULL)
              << "column " << sqlite3_column_name(stmt, column) << " is NULL in\n" << sql;
      }
    }
    EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(reader.db()) << "\n" << sql;
    EXPECT_GT(rows, 0) << sql;
    sqlite3_finalize(stmt);
  }
}

// Every meta key an example reads is one the Engine writes (the small profile
// above could write any key; the Engine is what users' profiles come from).
TEST(SchemaDocumentation, ExamplesReadMetaKeysTheEngineWrites) {
  std::ifstream file(std::string(IPUSIM_SOURCE_DIR) + "/sim/engine/engine.cpp");
  std::stringstream engine;
  engine << file.rdbuf();
  const std::string marker = "key = '";
  for (const auto& sql : sqlBlocks(readSchemaDocument()))
    for (auto at = sql.find(marker); at != std::string::npos; at = sql.find(marker, at + 1)) {
      const auto start = at + marker.size();
      const std::string key = sql.substr(start, sql.find('\'', start) - start);
      EXPECT_NE(engine.str().find("setMeta(\"" + key + "\""), std::string::npos)
          << "an example reads meta '" << key << "', which sim/engine/engine.cpp never writes";
    }
}

}  // namespace
}  // namespace ipusim::traces::schema_documentation_test
