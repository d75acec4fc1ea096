#include "sample_profile.hpp"

#include "traces/profile_writer.hpp"

#include <unistd.h>

namespace ipusim::viewer::testing {

ScratchDirectory::ScratchDirectory() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  path_ = std::filesystem::temp_directory_path() /
          ("ipusim-viewer-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
           std::to_string(::getpid()));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void writeSampleProfile(const std::string& path) {
  traces::ProfileWriter w(path);
  w.setMeta("workload", "viewer sample");
  w.setMeta("arch", "ipu2");
  w.setMeta("num_ipus", "1");
  w.setMeta("tiles_per_ipu", "4");
  w.setMeta("clock_hz", "1000000000");
  w.setMeta("bytes_per_tile", "1000");
  w.setMeta("engine_options", R"({"autoReport.all":"true"})");
  const auto engine = w.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
  const auto host = w.addTrack({0, -1, "host", "dataset", -1, -1, 1});
  const auto stream = w.addTrack({0, -1, "stream", "infeed", 0, -1, 2});
  const auto program = w.addTrack({0, -1, "program", "IPU 0 programs", 0, -1, 3});
  const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 4});
  const auto loss = w.addTrack({0, -1, "counter", "loss", -1, -1, 5});
  w.addRun({0, 0, "main", 0, 1000, 2, true});
  w.addProgram({1, -1, "Sequence", "main", "", "", 0});
  w.addProgram({2, 1, "Repeat", "2 steps", "", "", 0});
  w.addProgram({3, 2, "Execute", "matmul", "dense_1", "matmul", 0});
  w.addPhase({1, "compute", "dense_1/matmul", 3, -1});
  const std::int64_t cycles[] = {100, 50, 0, 25};
  for (int t = 0; t < 4; ++t) w.addTilePhase({1, 0, t, cycles[t], cycles[t] ? 2 : 0});
  for (int t = 0; t < 4; ++t) w.addTileMemory({0, t, "weights", true, 200 + 100 * t});
  w.addTileMemory({0, 3, "activations", false, 750});

  auto add = [&](std::int64_t track, std::int64_t ts, std::int64_t dur, const char* name, const char* category,
                 std::int64_t depth, std::int64_t programId = -1, std::int64_t phase = -1, std::int64_t bytes = -1) {
    traces::SliceRow s;
    s.trackId = track;
    s.runId = 0;
    s.ts = ts;
    s.dur = dur;
    s.name = name;
    s.category = category;
    s.depth = depth;
    s.programId = programId;
    s.phaseId = phase;
    s.bytes = bytes;
    return w.addSlice(s);
  };
  add(engine, 0, 1000, "Engine::run #0", "engine_run", 0);
  add(host, 0, 300, "prepare batch", "host", 0);
  add(host, 450, 270, "prepare batch", "host", 0);
  add(stream, 0, 400, "StreamCopy infeed", "stream_copy", 0);
  add(stream, 0, 300, "Begin", "stream_copy_begin", 1);
  add(stream, 300, 80, "Mid", "stream_copy_mid", 1, -1, -1, 4096);
  add(stream, 380, 20, "End", "stream_copy_end", 1);
  add(stream, 600, 100, "StreamCopy infeed", "stream_copy", 0);
  add(stream, 600, 40, "Begin", "stream_copy_begin", 1);
  add(stream, 640, 50, "Mid", "stream_copy_mid", 1, -1, -1, 1024);
  add(stream, 690, 10, "End", "stream_copy_end", 1);
  add(bsp, 400, 100, "dense_1/matmul", "compute", 0, 3, 1);
  add(bsp, 500, 50, "exchange", "exchange", 0, 3, -1, 512);
  add(bsp, 550, 10, "sync", "sync", 0);
  add(bsp, 700, 200, "dense_1/matmul", "compute", 0, 3, 1);
  add(bsp, 900, 10, "sync", "sync", 0);
  add(program, 400, 510, "Repeat", "program", 0, 2);
  add(program, 400, 100, "matmul", "compute", 1, 3);
  add(program, 700, 200, "matmul", "compute", 1, 3);
  w.addCounter({loss, 500, 2.3});
  w.addCounter({loss, 900, 1.9});
  w.commit();
}

void writeMultiRunProfile(const std::string& path) {
  traces::ProfileWriter w(path);
  w.setMeta("workload", "viewer multi-run sample");
  w.setMeta("num_ipus", "1");
  w.setMeta("tiles_per_ipu", "4");
  w.setMeta("clock_hz", "1000000000");
  const auto engine = w.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
  const auto stream = w.addTrack({0, -1, "stream", "infeed", 0, -1, 2});
  const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 4});
  auto add = [&](std::int64_t track, std::int64_t run, std::int64_t ts, std::int64_t dur, const char* name,
                 const char* category, std::int64_t depth) {
    traces::SliceRow s;
    s.trackId = track;
    s.runId = run;
    s.ts = ts;
    s.dur = dur;
    s.name = name;
    s.category = category;
    s.depth = depth;
    w.addSlice(s);
  };
  for (std::int64_t run = 0; run < 4; ++run) {
    const std::int64_t s = 100 + 1200 * run;
    const bool captured = run < 3;
    w.addRun({run, 0, "train", s, s + 1000, 1, captured});
    if (!captured) continue;
    const std::string name = "Engine::run #" + std::to_string(run);
    add(engine, run, s, 1000, name.c_str(), "engine_run", 0);
    add(stream, run, s, 650, "StreamCopy infeed", "stream_copy", 0);
    add(stream, run, s, 400, "Begin", "stream_copy_begin", 1);
    add(stream, run, s + 400, 200, "Mid", "stream_copy_mid", 1);
    add(stream, run, s + 600, 50, "End", "stream_copy_end", 1);
    add(bsp, run, s + 650, 350, "matmul", "compute", 0);
  }
  w.commit();
}

}  // namespace ipusim::viewer::testing
