#pragma once
// A small profile with known slices, written with the ProfileWriter, shared
// by the analysis tests (tests/profiler) and the command tests (tests/sim).
//
// One IPU, 4 tiles, 1000 B per tile. Runs (cycles):
//   run 0 [0, 1000)     2 steps, captured
//   run 1 [1200, 2000)  2 steps, captured
//   run 2 [2000, 3000)  2 steps, not captured (no slices)
// Run 0: StreamCopy infeed [0,300) = Begin [0,200) Mid [200,280) 400 B End [280,300);
//        compute [300,600) exchange [600,700) sync [700,750) compute [750,900);
//        StreamCopy outfeed [900,1000) = Begin [900,910) Mid [910,990) 100 B End [990,1000).
// Run 1: StreamCopy infeed [1200,1400) = Begin [1200,1250) Mid [1250,1400) 400 B;
//        compute [1300,1800) (overlaps the Mid by 100) sync [1800,1850), idle after.
// Host "dataset" track: prepare batch [1000,1200).
// Loss counter: 2.5 @100, 1.5 @500, 0.8 @1500, 1.0 @1900.
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

namespace ipusim::testing_profiles {

// A fresh path under the system's temporary directory, unique per test
// process; the directory is removed when the process ends.
inline std::string temporaryPath(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ipusim-analysis-" + std::to_string(::getpid()));
  struct RemovedAtExit {
    fs::path path;
    ~RemovedAtExit() { std::error_code ignored; fs::remove_all(path, ignored); }
  };
  static const RemovedAtExit cleanup{dir};
  fs::create_directories(dir);
  const fs::path file = dir / name;
  fs::remove(file);
  return file.string();
}

inline std::int64_t slice(traces::ProfileWriter& w, std::int64_t track, std::int64_t run, std::int64_t ts,
                          std::int64_t dur, const std::string& name, const std::string& category,
                          std::int64_t parent = -1, std::int64_t depth = 0, std::int64_t bytes = -1) {
  traces::SliceRow row;
  row.trackId = track;
  row.runId = run;
  row.ts = ts;
  row.dur = dur;
  row.name = name;
  row.category = category;
  row.parentId = parent;
  row.depth = depth;
  row.bytes = bytes;
  return w.addSlice(row);
}

// A StreamCopy with its phases: begin, mid and end lengths (end may be 0).
inline void streamCopy(traces::ProfileWriter& w, std::int64_t track, std::int64_t run, const std::string& stream,
                       std::int64_t ts, std::int64_t begin, std::int64_t mid, std::int64_t end,
                       std::int64_t bytes) {
  const std::int64_t parent =
      slice(w, track, run, ts, begin + mid + end, "StreamCopy " + stream, "stream_copy", -1, 0, bytes);
  slice(w, track, run, ts, begin, "Begin", "stream_copy_begin", parent, 1);
  slice(w, track, run, ts + begin, mid, "Mid", "stream_copy_mid", parent, 1, bytes);
  if (end > 0) slice(w, track, run, ts + begin + mid, end, "End", "stream_copy_end", parent, 1);
}

// `meta`: more meta keys (e.g. a training run's batch_size and replicas).
inline void writeKnownProfile(const std::string& path, double clockHz = 1e9,
                              const std::map<std::string, std::string>& meta = {}) {
  traces::ProfileWriter w(path);
  for (const auto& [key, value] : meta) w.setMeta(key, value);
  w.setMeta("arch", "ipu2");
  w.setMeta("workload", "known");
  w.setMeta("num_ipus", "1");
  w.setMeta("tiles_per_ipu", "4");
  w.setMeta("tile_memory_bytes", "1000");
  w.setMeta("clock_hz", std::to_string(clockHz));

  const auto engine = w.addTrack({0, -1, "engine", "Engine", -1, -1, 0});
  const auto host = w.addTrack({0, -1, "host", "dataset", -1, -1, 10});
  const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
  const auto ipu = w.addTrack({0, -1, "ipu", "IPU 0", 0, -1, 30});
  const auto programs = w.addTrack({0, ipu, "program", "IPU 0 programs", 0, -1, 31});
  const auto bsp = w.addTrack({0, ipu, "bsp", "IPU 0 BSP", 0, -1, 32});
  const auto loss = w.addTrack({0, -1, "counter", "loss", -1, -1, 1000});

  w.addRun({0, 0, "main", 0, 1000, 2, true});
  w.addRun({1, 0, "main", 1200, 2000, 2, true});
  w.addRun({2, 0, "main", 2000, 3000, 2, false});

  w.addProgram({0, -1, "Sequence", "main", "", "", 0});
  w.addProgram({1, 0, "StreamCopy", "infeed", "", "", 0});
  w.addProgram({2, 0, "Repeat", "loop", "", "", 1});
  w.addProgram({3, 2, "Execute", "dense/matmul", "dense", "matmul", 0});
  w.addProgram({4, -1, "Sequence", "second", "", "", 1});

  // Run 0.
  const auto run0 = slice(w, engine, 0, 0, 1000, "Engine::run #0", "engine_run");
  slice(w, engine, 0, 0, 500, "step 0", "step", run0, 1);
  slice(w, engine, 0, 500, 500, "step 1", "step", run0, 1);
  streamCopy(w, stream, 0, "infeed", 0, 200, 80, 20, 400);
  const auto loop = slice(w, programs, 0, 300, 600, "loop", "program");
  slice(w, programs, 0, 300, 300, "dense/matmul", "compute", loop, 1);
  slice(w, programs, 0, 750, 150, "dense/matmul", "compute", loop, 1);
  slice(w, bsp, 0, 300, 300, "dense/matmul", "compute");
  slice(w, bsp, 0, 600, 100, "exchange", "exchange", -1, 0, 256);
  slice(w, bsp, 0, 700, 50, "Sync", "sync");
  slice(w, bsp, 0, 750, 150, "dense/matmul", "compute");
  streamCopy(w, stream, 0, "outfeed", 900, 10, 80, 10, 100);
  // Between the runs: the host prepares a batch.
  slice(w, host, -1, 1000, 200, "prepare batch", "host");
  // Run 1.
  slice(w, engine, 1, 1200, 800, "Engine::run #1", "engine_run");
  streamCopy(w, stream, 1, "infeed", 1200, 50, 150, 0, 400);
  slice(w, bsp, 1, 1300, 500, "dense/matmul", "compute");
  slice(w, bsp, 1, 1800, 50, "Sync", "sync");

  w.addTileMemory({0, 0, "weights", true, 300});
  w.addTileMemory({0, 0, "activations", false, 200});
  w.addTileMemory({0, 1, "weights", true, 1200});
  w.addTileMemory({0, 2, "activations", false, 100});

  w.addCounter({loss, 100, 2.5});
  w.addCounter({loss, 500, 1.5});
  w.addCounter({loss, 1500, 0.8});
  w.addCounter({loss, 1900, 1.0});
  w.commit();
}

// One StreamCopy at cycle 2 on a 1.33 GHz clock: Begin of 0 cycles, Mid
// [2, 102) of 64 B, End [102, 103) of one cycle (the exports' shortest slices).
inline void writeShortSlicesProfile(const std::string& path) {
  traces::ProfileWriter w(path);
  w.setMeta("clock_hz", "1330000000");
  const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
  streamCopy(w, stream, 0, "infeed", 2, 0, 100, 1, 64);
  w.commit();
}

// Two runs of 3 steps, first start 0 to last end 1500 (half of the known
// profile's 3000 cycles, same steps): B is 2x faster. Run 0 captured, all compute.
inline void writeFastProfile(const std::string& path, const std::map<std::string, std::string>& meta = {}) {
  traces::ProfileWriter w(path);
  for (const auto& [key, value] : meta) w.setMeta(key, value);
  w.setMeta("arch", "ipu2");
  w.setMeta("num_ipus", "1");
  w.setMeta("tiles_per_ipu", "4");
  w.setMeta("clock_hz", "1000000000");
  const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 32});
  w.addRun({0, 0, "main", 0, 500, 3, true});
  w.addRun({1, 0, "main", 500, 1500, 3, false});
  slice(w, bsp, 0, 0, 500, "all compute", "compute");
  w.commit();
}

}  // namespace ipusim::testing_profiles
