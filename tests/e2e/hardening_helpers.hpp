#pragma once
// What the hardening tests (issues 16 and 33) share: a clean refusal, no
// litter, a profile of the bundled graph, SQL applied to a profile (and a
// number read from one), a workload with one change, .npy token files and
// their workload, a zip archive of stored entries.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::test {
namespace fs = std::filesystem;

inline const std::string kGraph = sourcePath("workloads/graphs/stream_pipeline.json");

inline std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A clean refusal: 0 < exit code < 128, the output names `culprit`, one
// line, and no library text leaking through.
inline void expectRefusal(const CommandResult& r, const std::string& culprit) {
  EXPECT_GT(r.exitCode, 0) << r.output;
  EXPECT_LT(r.exitCode, 128) << r.output;
  EXPECT_NE(r.output.find(culprit), std::string::npos) << "expected '" << culprit << "' in: " << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  for (const char* leak : {"terminate", "bad_alloc", "json.exception", "basic_filebuf", "Assertion"})
    EXPECT_EQ(r.output.find(leak), std::string::npos) << r.output;
}

// A command's --json output (after any progress lines), the command having succeeded.
inline nlohmann::json jsonOf(const CommandResult& r) {
  EXPECT_EQ(r.exitCode, 0) << r.output;
  const std::size_t at = r.output.find('{');
  return at == std::string::npos ? nlohmann::json() : nlohmann::json::parse(r.output.substr(at));
}

// Nothing named like a profile or a temporary file is in `dir`.
inline void expectNoLitter(const fs::path& dir) {
  if (!fs::exists(dir)) return;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << entry.path();
    EXPECT_EQ(name.find("profile.pop"), std::string::npos) << entry.path();
  }
}

inline std::string withReports(const fs::path& dir) {
  return "POPLAR_ENGINE_OPTIONS=" +
         quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.string() + "\"}") + " ";
}

// A complete profile of the bundled graph in `dir`/profile.pop.
inline fs::path writeProfile(const fs::path& dir) {
  const auto r = runCommand(withReports(dir) + ipusimBinary() + " run --graph " + quote(kGraph) + " --runs 2");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return dir / "profile.pop";
}

inline void execSql(const fs::path& profile, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(profile.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string error = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << error;
}

// The first column of the first row of `sql` over the profile, as an integer.
inline std::int64_t queryInt(const fs::path& profile, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* statement = nullptr;
  std::int64_t value = -1;
  if (sqlite3_open_v2(profile.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
      sqlite3_step(statement) == SQLITE_ROW)
    value = sqlite3_column_int64(statement, 0);
  EXPECT_NE(value, -1) << sql << ": " << sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return value;
}

inline std::string workloadWith(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("workloads/mnist_with_feeds.json")));
  edit(j);
  const fs::path out = dir / "w.json";
  std::ofstream(out) << j.dump(1);
  return out.string();
}

// `dir`/`name`.json: a 3-layer MLP (dense layers a, b, out) trained two
// steps with training.recompute_checkpoints `checkpoints` (JSON: ["a"]).
inline std::string checkpointedMlp(const fs::path& dir, const std::string& name, const std::string& checkpoints) {
  const fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                         {"type": "dense", "units": 8, "activation": "relu", "name": "b"},
                         {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2, "recompute_checkpoints": )" << checkpoints << R"(},
    "ipu": {"tiles": 4}})";
  return file.string();
}

// `dir`/`name`: a two-layer MLP trained two steps on 4 tiles, replicated
// over `ipus` IPUs (adversarial passes 17 and 18).
inline std::string replicatedMlp(const fs::path& dir, const std::string& name, int ipus) {
  const fs::path file = dir / name;
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                         {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4, "num_ipus": )" << ipus << "}}";
  return file.string();
}

// `path`: a .npy file of `values` int32 zeros (every token id and label 0)
// under the dictionary `header`, written as given (padded to numpy's 64 bytes).
inline void writeZerosNpy(const fs::path& path, std::string header, std::size_t values) {
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::string bytes =
      std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header;
  bytes += std::string(values * 4, '\0');
  std::ofstream(path, std::ios::binary) << bytes;
}

// `dir`/w.json: an embedding model trained two steps on `dir`/ids.npy (token
// ids, `idsPerExample` an example) and `dir`/labels.npy (writeZerosNpy's).
inline std::string npyTokenWorkload(const fs::path& dir, std::size_t idsPerExample) {
  const fs::path file = dir / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "npy", "images": "ids.npy", "labels": "labels.npy", "batch_size": 2, "classes": 4,
                "input_shape": [)" << idsPerExample << R"(]},
    "model": {"layers": [{"type": "embedding", "input_dim": 10, "output_dim": 4}, {"type": "flatten"},
                         {"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  return file.string();
}

// A zip archive of stored (uncompressed) entries, in order, as a .keras is a zip.
inline std::string storedZip(const std::vector<std::pair<std::string, std::string>>& entries) {
  const auto u16 = [](std::string& s, std::uint32_t v) { s += char(v & 0xff); s += char((v >> 8) & 0xff); };
  const auto u32 = [&](std::string& s, std::uint32_t v) { u16(s, v & 0xffff); u16(s, v >> 16); };
  std::string local, central;
  for (const auto& [name, data] : entries) {
    const std::uint32_t crc = std::uint32_t(crc32(0, reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
    const std::uint32_t offset = std::uint32_t(local.size());
    local += "PK\3\4";
    u16(local, 20), u16(local, 0), u16(local, 0), u16(local, 0), u16(local, 0);
    u32(local, crc), u32(local, std::uint32_t(data.size())), u32(local, std::uint32_t(data.size()));
    u16(local, std::uint32_t(name.size())), u16(local, 0);
    local += name + data;
    central += "PK\1\2";
    u16(central, 20), u16(central, 20), u16(central, 0), u16(central, 0), u16(central, 0), u16(central, 0);
    u32(central, crc), u32(central, std::uint32_t(data.size())), u32(central, std::uint32_t(data.size()));
    u16(central, std::uint32_t(name.size())), u16(central, 0), u16(central, 0), u16(central, 0), u16(central, 0);
    u32(central, 0), u32(central, offset);
    central += name;
  }
  std::string end = "PK\5\6";
  u16(end, 0), u16(end, 0), u16(end, std::uint32_t(entries.size())), u16(end, std::uint32_t(entries.size()));
  u32(end, std::uint32_t(central.size())), u32(end, std::uint32_t(local.size())), u16(end, 0);
  return local + central + end;
}

}  // namespace ipusim::test
