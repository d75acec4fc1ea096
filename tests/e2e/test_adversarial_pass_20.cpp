// Found by the twentieth adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include "scheduler/models/workload_limits.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ipusim::test::test_adversarial_pass_20 {
namespace {

// A two-stage pipeline of a 3-layer MLP on 4 tiles, `miniBatches` mini-batches a weight update.
std::string pipelinedMlp(const fs::path& dir, std::uint64_t miniBatches) {
  const fs::path file = dir / "pipe.json";
  const std::string n = std::to_string(miniBatches);
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "stage": 0, "name": "a"},
                         {"type": "dense", "units": 8, "activation": "relu", "stage": 1, "name": "b"},
                         {"type": "dense", "units": 10, "activation": "softmax", "stage": 1, "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "pipeline": {"schedule": "grouped", "gradient_accumulation_count": )" << n << R"(, "device_mapping": [0, 1]},
    "training": {"steps": )" << n << R"(, "steps_per_execution": )" << n << R"(},
    "ipu": {"tiles": 4, "num_ipus": 2}})";
  return file.string();
}

// The bound on a pipeline's mini-batches counted their tensor intervals and
// renames only: a small model's mini-batch laid out 224 of them but took 77
// KB (its 66 tensors and 65 programs), so the bound let it have 299,594
// mini-batches, about 23 GB of compile. Tensors and programs count now.
TEST(AdversarialPass20, PipelineBoundCountsTheTensorsAndProgramsOfAMiniBatch) {
  EXPECT_THROW(scheduler::checkPipelineCopies("k", 100'000, 91, 133, 66, 65), std::invalid_argument);
  EXPECT_NO_THROW(scheduler::checkPipelineCopies("k", 70'000, 91, 133, 66, 65));
  ScratchDir dir("pipeline-bound");
  const auto r = runCommand(ipusimBinary() + " compile " + quote(pipelinedMlp(dir.path(), 100'000)));
  expectRefusal(r, "pipeline.gradient_accumulation_count: 100000 mini-batches in flight, each after the first "
                   "laying out 91 tensor intervals, 133 tensor renames, 64 tensors and 54 programs of its own");
  EXPECT_NE(r.output.find("at most 82444 mini-batches"), std::string::npos) << r.output;
}

// Under mpirun every command but sweep ran once a rank: `mpirun -n 2 ipusim
// run` printed two summaries and one rank failed on the other's profile;
// compile -o failed on one rank with "already exists". Refused before any
// work, by rank 0 (the launcher's variables are all it reads); a job of one
// rank runs the command as one process.
TEST(AdversarialPass20, CommandsOtherThanSweepRefuseSeveralRanks) {
  ScratchDir dir("ranks");
  const std::string file = pipelinedMlp(dir.path(), 4);
  const std::string graph = (dir.path() / "g.json").string();
  const std::string compile = ipusimBinary() + " compile " + quote(file) + " -o " + quote(graph);
  expectRefusal(runCommand("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 " + compile),
                "ipusim compile under an MPI launcher on 2 ranks: each rank would run the whole command and write "
                "the same files; only ipusim sweep, and run, evaluate and predict of a workload, divide their work "
                "over ranks");
  const auto other = runCommand("OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 " + compile);
  EXPECT_EQ(other.exitCode, 0) << other.output;
  EXPECT_EQ(other.output, "");
  EXPECT_FALSE(fs::exists(graph));
  const auto one = runCommand("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 " + compile);
  EXPECT_EQ(one.exitCode, 0) << one.output;
  EXPECT_TRUE(fs::exists(graph));
}

// Two sweeps into one directory: the second emptied points/ under the
// first, whose points then failed ("unreadable run summary: [json.exception
// ...]") or whose plot did. A sweep holds a lock on its directory; the
// second is refused before it changes anything.
TEST(AdversarialPass20, SecondSweepIntoABusyDirectoryIsRefused) {
  ScratchDir dir("busy");
  const std::string file = replicatedMlp(dir.path(), "w.json", 1);
  const fs::path out = dir.path() / "out";
  fs::create_directories(out / "points");
  std::ofstream(out / "points" / "0.json") << "{}";  // the first sweep's point, running
  const int fd = ::open(out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // as the first sweep holds it
  const std::string sweep = ipusimBinary() + " sweep " + quote(file) + " --vary tiles=4 --synthetic-data -o " +
                            quote(out.string());
  expectRefusal(runCommand(sweep), out.string() + ": another sweep is writing into this directory; wait for it to "
                                                  "finish or choose another -o directory");
  EXPECT_TRUE(fs::exists(out / "points" / "0.json"));
  ::close(fd);
  const auto r = runCommand(sweep);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_20
