// The autoReport policy of the ProfileRecorder: every run gets a row, the
// first N runs of each entry program are captured in detail, stream copies
// nest their phases, and a static phase is written once however often the
// model announces it.
#include "profiler/recorder/profile_recorder.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace ipusim::profiler::test_profile_recorder {
namespace {

namespace fs = std::filesystem;

ir::Executable twoEntryExecutable() {
  ir::Executable exe;
  exe.name = "recorder-test";
  ir::Program body;
  body.id = 0;
  body.kind = ir::ProgramKind::Sequence;
  body.name = "body";
  exe.programs = {body};
  exe.entryPoints = {{"train", 0}, {"eval", 0}};
  return exe;
}

struct RecorderRig {
  fs::path path = fs::temp_directory_path() / ("ipusim-recorder-" + std::to_string(getpid()) + ".pop");
  ir::Executable exe = twoEntryExecutable();
  model::Target target = model::Target::preset("ipu2");
  ~RecorderRig() { fs::remove(path); }

  // One run of `entry` from `start`: a program step, a compute phase, a stream copy.
  // (Named as the engine names a run, after its entry point: readers refuse
  // two entry points of one name.)
  static void run(ProfileRecorder& r, std::uint64_t index, ir::Id entry, ir::Cycles start) {
    model::RunEvent event{index, entry, entry == 0 ? "train" : "eval", start, 0, 0};
    r.detailFor(event);
    r.runBegin(event);
    r.programBegin(0, start);
    r.staticPhase({7, model::PhaseKind::Compute, "cs", 0, {10, 0, 20}, {1, 0, 2}, 0});
    r.phase({0, model::PhaseKind::Compute, start, 20, 0, 7, 0});
    r.streamCopy({0, "images", model::StreamCopyPhase::Begin, start + 20, 5, 0, 0});
    r.streamCopy({0, "images", model::StreamCopyPhase::Mid, start + 25, 10, 64, 0});
    r.streamCopy({0, "images", model::StreamCopyPhase::End, start + 35, 5, 0, 0});
    r.programEnd(0, start + 40);
    event.end = start + 40;
    event.steps = 1;
    r.runEnd(event);
  }
};

TEST(ProfileRecorder, CapturesTheFirstRunsOfEachEntryAndRecordsEveryRun) {
  RecorderRig rig;
  {
    traces::ProfileWriter writer(rig.path.string());
    RecorderConfig config;
    config.captureRunsPerProgram = 2;
    ProfileRecorder recorder(writer, rig.exe, rig.target, config);
    ir::Cycles t = 0;
    for (std::uint64_t i = 0; i < 5; ++i, t += 100) RecorderRig::run(recorder, i, 0, t);   // train x5
    for (std::uint64_t i = 5; i < 8; ++i, t += 100) RecorderRig::run(recorder, i, 1, t);   // eval x3
    EXPECT_EQ(recorder.runsRecorded(), 8u);
    EXPECT_EQ(recorder.runsCaptured(), 4u);
    writer.commit();
  }
  traces::ProfileReader reader(rig.path.string());
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 8u);
  const std::vector<bool> captured = {true, true, false, false, false, true, true, false};
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].captured, captured[i]) << "run " << i;

  // The phase is written once, its tile rows once, whatever the number of executions.
  EXPECT_EQ(reader.phases().size(), 1u);
  EXPECT_EQ(reader.tilePhases(7).size(), 2u);  // the two busy tiles

  // Stream copies: a parent per copy with Begin, Mid and End nested inside it.
  for (const auto& track : reader.tracks()) {
    if (track.kind != "stream") continue;
    const auto slices = reader.slices(track.id, 0, 1000);
    ASSERT_EQ(slices.size(), 4u * 4u);  // 4 captured runs x (parent + 3 phases)
    EXPECT_EQ(slices[0].name, "StreamCopy images");
    EXPECT_EQ(slices[0].dur, 20);
    EXPECT_EQ(slices[0].bytes, 64);
    EXPECT_EQ(slices[1].name, "Begin");
    EXPECT_EQ(slices[2].name, "Mid");
    EXPECT_EQ(slices[3].name, "End");
    for (int i = 1; i <= 3; ++i) EXPECT_EQ(slices[i].parentId, slices[0].id);
  }
}

TEST(ProfileRecorder, WithoutExecutionCaptureOnlyRunsAreRecorded) {
  RecorderRig rig;
  {
    traces::ProfileWriter writer(rig.path.string());
    RecorderConfig config;
    config.captureExecution = false;
    ProfileRecorder recorder(writer, rig.exe, rig.target, config);
    EXPECT_EQ(recorder.detailFor({0, 0, "run", 0, 0, 0}), model::Detail::RunsOnly);
    RecorderRig::run(recorder, 0, 0, 0);
    writer.commit();
  }
  traces::ProfileReader reader(rig.path.string());
  EXPECT_EQ(reader.runs().size(), 1u);
  EXPECT_FALSE(reader.runs()[0].captured);
  EXPECT_EQ(reader.sliceCount(), 0);
}

TEST(ProfileRecorder, ACapturedRunStopsRecordingAtTheSliceCapAndSaysWhichRun) {
  RecorderRig rig;
  {
    traces::ProfileWriter writer(rig.path.string());
    RecorderConfig config;
    config.captureRunsPerProgram = 2;
    config.maxSlicesPerRun = 10;
    ProfileRecorder recorder(writer, rig.exe, rig.target, config);
    // Run 0: the body repeats a compute phase 1000 times (a long Repeat).
    model::RunEvent event{0, 0, "train", 0, 0, 0};
    recorder.detailFor(event);
    recorder.runBegin(event);
    recorder.programBegin(0, 0);
    for (ir::Cycles i = 0; i < 1000; ++i) recorder.phase({0, model::PhaseKind::Compute, 10 * i, 10, 0, ir::kNoId, 0});
    recorder.programBegin(0, 10000);  // opened past the cap: nothing is written for it
    recorder.programEnd(0, 10001);
    recorder.programEnd(0, 10002);
    event.end = 10002;
    recorder.runEnd(event);
    RecorderRig::run(recorder, 1, 0, 20000);  // the next run is captured in full again
    EXPECT_EQ(recorder.truncatedRuns(), std::vector<std::int64_t>{0});
    writer.commit();
  }
  traces::ProfileReader reader(rig.path.string());
  std::int64_t run0 = 0, run1 = 0;
  for (const auto& track : reader.tracks())
    reader.forEachSlice(track.id, [&](const traces::SliceRow& s) { ++(s.runId == 0 ? run0 : run1); });
  // 10 phases, then the program open at the cap and the run's own slice.
  EXPECT_EQ(run0, 10 + 1 + 1);
  EXPECT_EQ(run1, 1 + 1 + 4 + 1);  // program, phase, stream copy (parent + 3), run
}

}  // namespace
}  // namespace ipusim::profiler::test_profile_recorder
