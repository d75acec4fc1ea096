#include "profiler/analysis/instance_profiles.hpp"

#include "profiler/analysis/profile_target.hpp"
#include "traces/interrupt_cleanup.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

namespace ipusim::profiler::analysis {
namespace {

namespace fs = std::filesystem;

std::string rankFileName(std::size_t rank) { return "profile.rank" + std::to_string(rank) + ".pop"; }

// Meta values that differ between the instances of one run, or that the writer owns.
const std::set<std::string> kPerInstanceMeta = {"schema_version", "complete",           "row_counts",  "instance",
                                                "instance_replicas", "instance_first_ipu", "instance_ipus"};

bool sameRuns(const std::vector<traces::RunRow>& a, const std::vector<traces::RunRow>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const traces::RunRow& x, const traces::RunRow& y) {
    return x.id == y.id && x.entryPoint == y.entryPoint && x.name == y.name && x.startCycle == y.startCycle &&
           x.endCycle == y.endCycle && x.steps == y.steps && x.captured == y.captured;
  });
}

// One instance's profile, opened and checked against instance 0's.
struct Instance {
  std::unique_ptr<traces::ProfileReader> reader;
  ProfileTarget target;
  bool holds(std::int64_t ipu) const { return ipu >= target.firstIpu && ipu < target.firstIpu + target.ipusHeld; }
};

void checkSameRun(const Instance& first, const Instance& other) {
  const auto& a = first.reader->meta();
  const auto& b = other.reader->meta();
  const std::string& path = other.reader->path();
  for (const auto& [key, value] : a) {
    if (kPerInstanceMeta.count(key)) continue;
    const auto it = b.find(key);
    if (it == b.end() || it->second != value)
      throw traces::ProfileError(path + ": meta " + key + " " + (it == b.end() ? "absent" : "'" + it->second + "'") +
                                 " where " + first.reader->path() + " has '" + value +
                                 "': expected the profiles of one run's instances");
  }
  for (const auto& [key, value] : b)
    if (!kPerInstanceMeta.count(key) && !a.count(key))
      throw traces::ProfileError(path + ": meta " + key + " '" + value + "' absent from " + first.reader->path() +
                                 ": expected the profiles of one run's instances");
  if (!sameRuns(first.reader->runs(), other.reader->runs()))
    throw traces::ProfileError(path + ": its runs (Engine::run calls) differ from " + first.reader->path() +
                               "'s: expected the profiles of one run's instances");
}

std::vector<Instance> openInstances(const std::vector<std::string>& profiles) {
  std::vector<Instance> instances;
  std::int64_t nextIpu = 0;
  for (std::size_t rank = 0; rank < profiles.size(); ++rank) {
    Instance instance;
    instance.reader = std::make_unique<traces::ProfileReader>(profiles[rank]);
    instance.target = readProfileTarget(*instance.reader);
    const std::string& path = profiles[rank];
    const std::string expected = std::to_string(rank) + " of " + std::to_string(profiles.size());
    if (instance.reader->metaValue("instance") != std::to_string(rank) ||
        instance.reader->metaValue("instances") != std::to_string(profiles.size()))
      throw traces::ProfileError(path + ": meta instance '" + instance.reader->metaValue("instance") +
                                 "', instances '" + instance.reader->metaValue("instances") +
                                 "': expected instance " + expected + " (a profile of one rank of the run)");
    if (instance.reader->metaValue("instance_ipus").empty())
      throw traces::ProfileError(path + ": no meta instance_ipus: written when every rank's profile held every "
                                 "IPU, expected the IPUs it holds (each such profile reads alone as the system)");
    if (instance.target.firstIpu != nextIpu)
      throw traces::ProfileError(path + ": its IPUs begin at " + std::to_string(instance.target.firstIpu) +
                                 ", expected " + std::to_string(nextIpu) + " (after the previous instance's)");
    nextIpu += instance.target.ipusHeld;
    if (rank > 0) checkSameRun(instances.front(), instance);
    instances.push_back(std::move(instance));
  }
  if (!instances.empty() && nextIpu != instances.front().target.numIpus)
    throw traces::ProfileError(profiles.back() + ": the instances hold " + std::to_string(nextIpu) + " IPUs, " +
                               "expected the system's " + std::to_string(instances.front().target.numIpus));
  return instances;
}

std::int64_t largestSliceId(const traces::ProfileReader& in) {
  sqlite3_stmt* stmt = nullptr;
  std::int64_t largest = 0;
  if (sqlite3_prepare_v2(in.db(), "SELECT MAX(id) FROM slices", -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    largest = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return largest;
}

// Tracks to copy, each with the instance it comes from.
using TrackOrder = std::vector<std::pair<std::size_t, traces::TrackRow>>;

// The tracks in the order one process writes them: instance 0's, with every instance's IPU tracks, in IPU
// order, where instance 0's begin (the recorder makes them together: profiler/recorder/profile_recorder.hpp).
TrackOrder tracksInOrder(const std::vector<Instance>& instances) {
  TrackOrder order;
  bool ipusPlaced = false;
  const auto placeIpus = [&] {
    ipusPlaced = true;
    for (std::size_t rank = 0; rank < instances.size(); ++rank)
      for (const auto& own : instances[rank].reader->tracks())
        if (own.ipu >= 0 && instances[rank].holds(own.ipu)) order.emplace_back(rank, own);
  };
  for (const auto& track : instances.front().reader->tracks()) {
    if (track.ipu < 0) order.emplace_back(0, track);
    else if (!ipusPlaced) placeIpus();
  }
  if (!ipusPlaced) placeIpus();  // (instance 0 has no IPU track of its own)
  return order;
}

// Every instance's tracks (its IPUs'; instance 0 also those of no IPU) with their slices and counters.
// Instance k's slice ids move up by the largest ids of the instances before it, so that they stay unique
// and parents keep their children.
void copyTracks(const std::vector<Instance>& instances, const TrackOrder& order, traces::ProfileWriter& out,
                const std::function<void()>& copied) {
  std::vector<std::int64_t> sliceIdBase(instances.size(), 0);
  for (std::size_t rank = 1; rank < instances.size(); ++rank)
    sliceIdBase[rank] = sliceIdBase[rank - 1] + largestSliceId(*instances[rank - 1].reader);
  std::vector<std::map<std::int64_t, std::int64_t>> trackIds(instances.size());  // an instance's id -> ours
  for (auto [rank, track] : order) {
    const traces::ProfileReader& in = *instances[rank].reader;
    const std::int64_t from = track.id, base = sliceIdBase[rank];
    const auto parent = trackIds[rank].find(track.parentId);
    track.parentId = parent == trackIds[rank].end() ? -1 : parent->second;
    track.id = 0;
    const std::int64_t to = out.addTrack(track);
    trackIds[rank].emplace(from, to);
    in.forEachSlice(from, [&](const traces::SliceRow& s) {
      traces::SliceRow copy = s;
      copy.id = s.id + base;
      copy.trackId = to;
      if (s.parentId >= 0) copy.parentId = s.parentId + base;
      out.addSlice(copy);
    });
    for (traces::CounterRow counter : in.counters(from)) {
      counter.trackId = to;
      out.addCounter(counter);
    }
    copied();
  }
}

// The executable's facts and the runs, the same in every instance: instance 0's.
void copyExecutableFacts(const traces::ProfileReader& in, traces::ProfileWriter& out) {
  for (const auto& run : in.runs()) out.addRun(run);
  for (const auto& program : in.programs()) out.addProgram(program);
  for (const auto& phase : in.phases()) out.addPhase(phase);
  for (const auto& work : in.programWork()) out.addProgramWork(work);
  for (const auto& tensor : in.tensors()) out.addTensor(tensor);
  for (const auto& order : in.programOrder()) out.addProgramOrder(order);
  for (const auto& lifetime : in.tensorLifetimes()) out.addTensorLifetime(lifetime);
}

// The instance's IPUs' tiles: their cycles in each phase and their memory.
void copyTiles(const Instance& instance, traces::ProfileWriter& out) {
  const traces::ProfileReader& in = *instance.reader;
  for (const auto& phase : in.phases())
    for (const auto& row : in.tilePhases(phase.id))
      if (instance.holds(row.ipu)) out.addTilePhase(row);
  for (const auto& row : in.tileMemory())
    if (instance.holds(row.ipu)) out.addTileMemory(row);
  for (const auto& row : in.tileMemoryPeaks())
    if (instance.holds(row.ipu)) out.addTileMemoryPeak(row);
}

}  // namespace

std::optional<std::vector<std::string>> findInstanceProfiles(const std::string& path) {
  std::error_code ec;
  const fs::path dir(path);
  if (!fs::is_directory(dir, ec) || fs::exists(dir / "profile.pop", ec) || !fs::exists(dir / rankFileName(0), ec))
    return std::nullopt;
  // How many: instance 0's meta says (read without the whole file's checks, which combining makes; the
  // reader checks meta values against their rules on open: instances is 1 to 65,536).
  const traces::ProfileReader first((dir / rankFileName(0)).string(), traces::ProfileReader::Checks::WholeFileDeferred);
  const std::string instances = first.metaValue("instances");
  if (instances.empty())
    throw traces::ProfileError(first.path() + ": no meta 'instances': expected a profile of one rank of a run " +
                               "over several processes (mpirun)");
  const std::size_t count = std::stoul(instances);
  std::vector<std::string> profiles;
  for (std::size_t rank = 0; rank < count; ++rank) {
    const fs::path file = dir / rankFileName(rank);
    if (!fs::exists(file, ec))
      throw traces::ProfileError(path + ": " + rankFileName(rank) + " is missing: expected the profiles of the " +
                                 instances + " instances " + rankFileName(0) + " names (ranks 0 to " +
                                 std::to_string(count - 1) + ")");
    profiles.push_back(file.string());
  }
  if (fs::exists(dir / rankFileName(count), ec))
    throw traces::ProfileError(path + ": " + rankFileName(count) + " is there, but " + rankFileName(0) + " names " +
                               instances + " instances: expected the profiles of one run only");
  return profiles;
}

void combineInstanceProfiles(const std::vector<std::string>& profiles, const std::string& out,
                             const CombineProgress& progress) {
  if (profiles.empty()) throw traces::ProfileError(out + ": no instance profiles to combine");
  const std::vector<Instance> instances = openInstances(profiles);
  traces::ProfileWriter writer(out);
  for (const auto& [key, value] : instances.front().reader->meta())
    if (!kPerInstanceMeta.count(key) || key == "instances") writer.setMeta(key, value);
  const auto order = tracksInOrder(instances);
  const std::uint64_t steps = order.size() + instances.size();
  std::uint64_t done = 0;
  const auto stepDone = [&] {
    if (progress) progress(++done, steps);
  };
  copyTracks(instances, order, writer, stepDone);
  copyExecutableFacts(*instances.front().reader, writer);
  for (const auto& instance : instances) copyTiles(instance, writer), stepDone();
  writer.commit();
}

ProfileSource::ProfileSource(const std::string& path, const CombineProgress& progress)
    : named_(path), path_(path) {
  const auto profiles = findInstanceProfiles(path);
  if (!profiles) return;
  static std::atomic<int> sources{0};
  std::error_code ec;
  const fs::path temporaryDirectory = fs::temp_directory_path(ec);
  if (ec) {
    const char* tmpdir = std::getenv("TMPDIR");
    throw traces::ProfileError(path + ": cannot combine its instance profiles: the temporary directory" +
                               (tmpdir ? std::string(" (TMPDIR '") + tmpdir + "')" : std::string()) + ": " +
                               ec.message() + " (expected a writable directory)");
  }
  path_ = (temporaryDirectory / ("ipusim-instances-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(sources++) + ".pop"))
              .string();
  traces::registerFileToRemoveOnInterrupt(path_);
  temporary_ = true;
  try {
    combineInstanceProfiles(*profiles, path_, progress);
  } catch (...) {
    traces::unregisterFileToRemoveOnInterrupt(path_);
    throw;
  }
  instances_ = profiles->size();
}

ProfileSource::~ProfileSource() {
  if (!temporary_) return;
  std::error_code ec;
  fs::remove(path_, ec);
  traces::unregisterFileToRemoveOnInterrupt(path_);
}

}  // namespace ipusim::profiler::analysis
