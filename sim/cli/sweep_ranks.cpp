#include "sim/cli/sweep_ranks.hpp"

#include "model/util/fnv1a.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/models/workload.hpp"
#include "sim/cli/ranks_set_up.hpp"
#include "sim/cli/sweep_points.hpp"
#include "sim/host/interrupt.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace ipusim::sim {

namespace {

// The messages, by tag, after the set-up's (ranks_set_up.hpp: kSetUpReadyTag,
// kSetUpGoTag). Every kWant and kResult gets one kAssign in reply.
enum Tag : int {
  kWant = 3,    // rank k -> 0: how many points it can start
  kResult = 4,  // rank k -> 0: a finished point (FinishedPoint), and room for one more
  kAssign = 5,  // 0 -> rank k: the points it is to run; none once every point is dealt
};

// How long rank 0 sleeps when nothing happened (its points run in other
// processes: it only deals and collects).
constexpr auto kIdle = std::chrono::milliseconds(5);

std::string encodeFinished(const FinishedPoint& f) {
  return cluster::MessageWriter()
      .number(f.index)
      .number(static_cast<std::uint64_t>(f.status))
      .text(f.summary)
      .text(f.errorLine)
      .bytes();
}

FinishedPoint decodeFinished(const cluster::Message& m, std::size_t points) {
  cluster::MessageReader in(m);
  FinishedPoint f;
  f.index = in.number();
  f.status = static_cast<int>(in.number());
  f.summary = in.text();
  f.errorLine = in.text();
  if (f.index >= points)
    throw std::runtime_error("sweep: rank " + std::to_string(m.source) + " reported point " + std::to_string(f.index) +
                             " of a sweep of " + std::to_string(points) + " points");
  return f;
}

// What a rank will run, for the ranks to agree on (agreeOnSetUp): its points'
// command lines, the workload's text and the engine options the points read.
// A rank given other --vary values (mpirun's `: -n 1 ...`), another workload
// file of the same name on its host or another POPLAR_ENGINE_OPTIONS ran its
// own point N, which rank 0 recorded under its point N's values.
std::string planOf(const SweepSetUp& s) {
  util::Fnv1a digest;
  const auto field = [&](const std::string& text) { digest.add(text).add("", 1); };  // (each ends in a 0 byte)
  field(s.plan.workload);
  field(scheduler::readWorkloadJson(s.plan.workload).dump());
  field(s.options.toJson().dump());
  for (const std::string& a : s.plan.commonArgs) field(a);
  for (const SweepPoint& point : s.plan.points)
    for (const std::string& a : point.runArgs) field(a);
  return std::to_string(s.plan.points.size()) + (s.plan.points.size() == 1 ? " point" : " points") + ", digest " +
         digest.hex();
}

// Rank 0: runs points itself and deals the others to the ranks that ask,
// until every point's result is in and every rank has been told there is
// none left (a rank whose first request arrives after the last point ended
// would otherwise wait for its answer forever); counts the points each rank ran.
std::vector<SweepResult> coordinateRanks(cluster::Cluster& cluster, const SweepPlan& plan, PointRunner& runner,
                                         unsigned jobs, std::vector<std::size_t>& ranPerRank) {
  ranPerRank.assign(static_cast<std::size_t>(cluster.size()), 0);
  const std::size_t total = plan.points.size();
  std::vector<SweepResult> results(total);
  std::vector<bool> finished(total, false);
  std::vector<bool> released(static_cast<std::size_t>(cluster.size()), false);  // told "none left"
  released[0] = true;
  std::size_t next = 0, done = 0, failed = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(cluster::openLauncherTerminal(), std::fclose);
  std::FILE* const terminal = owned.get();
  ProgressBar progress("sweep " + fs::path(plan.workload).stem().string(), total, terminal ? terminal : stderr);
  std::FILE* messages = progress.enabled() ? terminal : stderr;  // beside the bar, in order with it
  const auto record = [&](const FinishedPoint& f, int rank) {
    if (finished.at(f.index))
      throw std::runtime_error("sweep: rank " + std::to_string(rank) + " reported point " + std::to_string(f.index) +
                               " a second time");
    finished[f.index] = true;
    ++ranPerRank.at(static_cast<std::size_t>(rank));
    SweepResult& r = results[f.index] = collectPoint(plan, f);
    if (!r.ok) {
      ++failed;
      sayPointFailed(messages, progress, r, " on rank " + std::to_string(rank));
    }
    ++done;
  };
  while (done < total || std::find(released.begin(), released.end(), false) != released.end()) {
    while (next < total && runner.running() < jobs) runner.start(next++);
    bool happened = false;
    if (const auto f = runner.finish(/*block=*/false)) {
      record(*f, 0);
      happened = true;
    }
    while (const auto m = cluster.poll()) {
      happened = true;
      std::uint64_t wanted = 1;
      if (m->tag == kWant)
        wanted = cluster::MessageReader(*m).number();
      else if (m->tag == kResult)
        record(decodeFinished(*m, total), m->source);
      else
        throw std::runtime_error("sweep: rank 0 got a message with tag " + std::to_string(m->tag) + " from rank " +
                                 std::to_string(m->source) + ", expected a request or a result");
      std::vector<std::size_t> dealt;
      while (dealt.size() < wanted && next < total) dealt.push_back(next++);
      cluster::MessageWriter reply;
      reply.number(dealt.size());
      for (const std::size_t i : dealt) reply.number(i);
      cluster.send(m->source, kAssign, reply.bytes());
      if (dealt.empty()) released.at(static_cast<std::size_t>(m->source)) = true;
    }
    progress.update(done, std::to_string(next - done) + " running on " + std::to_string(cluster.size()) + " ranks" +
                              (failed ? ", " + std::to_string(failed) + " failed" : std::string()));
    if (!happened) std::this_thread::sleep_for(kIdle);
  }
  progress.update(done, std::to_string(failed) + " failed");
  return results;
}

// Another rank: asks rank 0 for points while it has room, runs them, and
// sends each one's outcome back, until rank 0 has none left and its own have ended.
void workOnRank(cluster::Cluster& cluster, const SweepPlan& plan, PointRunner& runner, unsigned jobs) {
  const auto ask = [&](int tag, const std::string& bytes) {
    cluster.send(0, tag, bytes);
    const cluster::Message reply = cluster.receive(0, kAssign);
    cluster::MessageReader in(reply);
    for (std::uint64_t n = in.number(); n > 0; --n) runner.start(in.number());
  };
  ask(kWant, cluster::MessageWriter().number(jobs).bytes());
  while (const auto f = runner.finish(/*block=*/true)) ask(kResult, encodeFinished(*f));
}

}  // namespace

int runSweepOnRanks(cluster::Cluster& cluster, const SweepArgs& args) {
  std::optional<SweepSetUp> s;
  std::string error, plan;
  try {
    s = setUpSweep(args, /*prepare=*/cluster.rank() == 0);
    plan = planOf(*s);
  } catch (const std::exception& e) {
    error = util::utf8Text(e.what());
    if (error.empty()) error = "set-up failed";
  }
  try {
    const std::vector<std::string> said =
        agreeOnSetUp(cluster, error, plan,
                     "expected every rank to sweep the same workload file with the same flags and engine options");
    if (!said.empty()) {
      if (cluster.rank() == 0)
        for (const std::string& line : said) std::cerr << "ipusim: error: " << line << "\n";
      cluster.waitForAll();
      return cluster.rank() == 0 ? 1 : 0;
    }
    if (cluster.rank() != 0) {
      std::error_code made;
      fs::create_directories(s->pointsDir, made);  // on a host that does not share rank 0's directory
      if (made)
        throw std::runtime_error(s->pointsDir.string() + ": cannot create the sweep's points directory: " +
                                 made.message());
    }
    // mpirun sends every rank SIGTERM when one rank dies or mpirun is
    // interrupted, and names the rank: the signal is not the user's own.
    interruptedLeaves("no sweep.csv, sweep.json or sweep.png written; the finished points' output is in " +
                      s->pointsDir.string() + "/ (under mpirun: the run ended because a rank ended or mpirun was "
                      "interrupted; mpirun says which)");
    PointRunner runner(s->plan, s->options, s->pointsDir);
    int exitCode = 0;
    if (cluster.rank() == 0) {
      announceSweep(args, *s,
                    "on " + std::to_string(cluster.size()) + (cluster.size() == 1 ? " rank, " : " ranks, ") +
                        std::to_string(args.jobs) +
                        " at a time on each");
      std::vector<std::size_t> ran;
      const auto results = coordinateRanks(cluster, s->plan, runner, args.jobs, ran);
      std::cerr << "sweep: points per rank:";
      for (std::size_t rank = 0; rank < ran.size(); ++rank) std::cerr << (rank ? ", " : " ") << ran[rank];
      std::cerr << "\n";
      exitCode = writeSweepOutputs(args, *s, results);
    } else {
      workOnRank(cluster, s->plan, runner, args.jobs);
    }
    cluster.waitForAll();
    return exitCode;
  } catch (const std::exception& e) {
    std::cerr << "ipusim: error: rank " << cluster.rank() << ": " << util::utf8Text(e.what()) << "\n";
    cluster.abort(1);
  }
}

}  // namespace ipusim::sim
