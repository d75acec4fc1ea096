#include "viewer/core/profile_session.hpp"

#include "viewer/core/error_text.hpp"
#include "traces/profile_verification.hpp"
#include "viewer/core/frame_gate.hpp"

#include <sqlite3.h>
#include <sys/resource.h>  // setpriority
#include <time.h>
#include <unistd.h>  // gettid

#include <atomic>
#include <chrono>

#include "profiler/analysis/job_cycles.hpp"
#include "profiler/analysis/profile_target.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::viewer {

namespace {

int kindRank(const std::string& kind) {
  if (kind == "engine") return 0;
  if (kind == "host") return 1;
  if (kind == "stream") return 2;
  if (kind == "program") return 3;
  if (kind == "bsp") return 4;
  if (kind == "counter") return 6;
  return 5;
}

std::string laneTitle(const traces::TrackRow& t) {
  const std::string ipu = t.ipu >= 0 ? "IPU " + std::to_string(t.ipu) : "";
  if (t.kind == "engine") return t.name.empty() ? "Engine" : t.name;
  if (t.kind == "host") return "Host: " + t.name;
  if (t.kind == "stream")
    return (t.name == "StreamCopy" || t.name.empty() ? "StreamCopy" : "StreamCopy: " + t.name) +
           (ipu.empty() ? "" : " (" + ipu + ")");
  if (t.kind == "program") return (ipu.empty() ? t.name : ipu) + " programs";
  if (t.kind == "bsp") return (ipu.empty() ? t.name : ipu) + " BSP";
  return t.name;
}

}  // namespace

ProfileSession::ProfileSession(const std::string& path, bool loadInBackground)
    : reader_(std::make_unique<traces::ProfileReader>(path, traces::ProfileReader::Checks::WholeFileDeferred)) {
  meta_ = reader_->meta();
  // Read as report reads them (profiler/analysis/profile_target.hpp): a
  // tiles_per_ipu of 4e9 or a clock_hz of 1e-300 is refused, not drawn.
  const profiler::analysis::ProfileTarget target = profiler::analysis::readProfileTarget(*reader_);
  clockHz_ = target.clockHz;
  tilesPerIpu_ = target.tilesPerIpu;
  numIpus_ = target.numIpus > 0 ? target.numIpus : 1;
  ipusHeld_ = target.ipusHeld > 0 ? target.ipusHeld : numIpus_;
  runs_ = reader_->runs();
  tracks_ = reader_->tracks();
  programs_ = ProgramTree(reader_->programs());
  tileMemory_ = reader_->tileMemory();
  tileMemoryPeaks_ = reader_->tileMemoryPeaks();
  sliceCount_ = reader_->sliceCount();
  extent_ = reader_->timeExtent();
  for (const auto& run : runs_) {
    if (extent_.first == 0 && extent_.second == 0) extent_ = {run.startCycle, run.endCycle};
    extent_.first = std::min(extent_.first, run.startCycle);
    extent_.second = std::max(extent_.second, run.endCycle);
  }
  jobCycles_ = profiler::analysis::jobCycles(metaValue("job_end_cycle"), runs_, reader_->path());
  background_ = std::async(std::launch::async, [file = reader_->path(), cancel = cancel_] {
                  // The checks read the whole file (tens of CPU seconds at 100 M
                  // slices): at the lowest priority (nice 19, this thread only),
                  // and paused while a frame is drawn (frame_gate), they use what
                  // drawing leaves (measured at 100 M slices on 2 cores: frames of
                  // 19-31 ms mean while the checks ran at normal priority, 11-20
                  // ms at nice 19, 10-12 ms without them; bench/RESULTS.md).
                  setpriority(PRIO_PROCESS, pid_t(gettid()), 19);
                  BackgroundChecks result;
                  try {
                    const traces::ProfileReader checked(file, traces::ProfileReader::Checks::WholeFileDeferred,
                                                        frame_gate::frameGatedVfs());
                    // Closing the session interrupts the scan (SQLITE_INTERRUPT) instead of waiting for it.
                    sqlite3_progress_handler(
                        checked.db(), 10000,
                        [](void* flag) { return static_cast<std::atomic<bool>*>(flag)->load() ? 1 : 0; },
                        cancel.get());
                    traces::verifyProfileIntegrity(checked.db(), checked.path());  // the rest of the checks
                    result.hostWait = profiler::analysis::ipuWaitingForHost(checked);
                  } catch (const std::exception& e) {
                    result.error = errorText(e);
                  }
                  timespec cpu{};
                  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
                  result.cpuMs = double(cpu.tv_sec) * 1e3 + double(cpu.tv_nsec) / 1e6;
                  return result;
                }).share();

  std::vector<traces::TrackRow> ordered;
  for (const auto& t : tracks_)
    if (t.kind != "ipu" && t.kind != "tile") ordered.push_back(t);
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    // Engine and host first, then per IPU its streams, programs and BSP.
    const int ra = kindRank(a.kind), rb = kindRank(b.kind);
    const bool aPerIpu = ra >= 2 && ra <= 5, bPerIpu = rb >= 2 && rb <= 5;
    if (aPerIpu && bPerIpu && a.ipu != b.ipu) return a.ipu < b.ipu;
    if (ra != rb) return ra < rb;
    return a.sortOrder < b.sortOrder || (a.sortOrder == b.sortOrder && a.id < b.id);
  });
  for (const auto& t : ordered) {
    auto lane = std::make_unique<Lane>();
    lane->kind = t.kind == "counter" ? LaneKind::Counter : LaneKind::Slices;
    lane->trackId = t.id;
    lane->trackKind = t.kind;
    lane->title = laneTitle(t);
    lane->ipu = t.ipu;
    lanes_.push_back(std::move(lane));
  }
  if (loadInBackground) {
    std::vector<Lane*> pointers;
    for (auto& l : lanes_) pointers.push_back(l.get());
    loader_ = std::make_unique<LaneLoader>(reader_->path(), std::move(pointers));
  } else {
    for (auto& l : lanes_) loadLane(*reader_, *l);
  }
}

ProfileSession::~ProfileSession() {
  loader_.reset();
  cancel_->store(true);  // the background checks stop at their next progress call
  waitForChecks();  // closed mid-frame (a damaged profile refused): without waiting for the frame
}

const profiler::analysis::HostWaitBreakdown& ProfileSession::hostWait() const {
  waitForChecks();
  return background_.get().hostWait;
}

void ProfileSession::waitForChecks() const {
  if (backgroundChecksDone()) return;
  const frame_gate::UiWaits uiWaits;  // called mid-frame: the checks must not wait for the frame
  background_.wait();
}

std::optional<profiler::analysis::HostWaitBreakdown> ProfileSession::hostWaitIfReady() const {
  if (!backgroundChecksDone()) return std::nullopt;
  return background_.get().hostWait;
}

double ProfileSession::backgroundChecksCpuMs() const {
  return backgroundChecksDone() ? background_.get().cpuMs : 0.0;
}

bool ProfileSession::backgroundChecksDone() const {
  return background_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::string ProfileSession::verificationError() const {
  return backgroundChecksDone() ? background_.get().error : std::string();
}

void ProfileSession::requestWindow(std::size_t lane, WindowPlan plan) {
  Lane& l = *lanes_.at(lane);
  l.requested = std::make_pair(plan.from, plan.to);
  if (loader_) {
    loader_->requestWindow(&l, std::move(plan));
    return;
  }
  auto window = loadWindow(*reader_, l, plan, reader_->packedSliceStrings());
  std::lock_guard<std::mutex> lock(l.windowMutex);
  l.pendingWindow = std::move(window);
}

bool ProfileSession::windowsPending() const { return loader_ && loader_->windowsPending(); }

std::string ProfileSession::metaValue(const std::string& key, const std::string& fallback) const {
  auto it = meta_.find(key);
  return it == meta_.end() ? fallback : it->second;
}

void ProfileSession::setLaneVisible(std::size_t lane, bool visible) {
  lanes_.at(lane)->visible.store(visible);
  if (loader_) loader_->wake();
}

bool ProfileSession::fullyLoaded() const {
  return std::all_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->isLoaded(); });
}

void ProfileSession::waitUntilVisibleLoaded() const {
  if (loader_) loader_->waitForVisible();
}

std::optional<SliceDetails> ProfileSession::details(const Lane& lane, std::int64_t sliceId,
                                                    std::int64_t ts) const {
  // The (track_id, ts) index finds it; a zero-length slice needs ts-1 .. ts+1.
  for (const auto& row : reader_->slices(lane.trackId, ts - 1, ts + 1)) {
    if (row.id != sliceId) continue;
    SliceDetails d;
    d.row = row;
    d.trackName = lane.title;
    if (const auto* program = programs_.find(row.programId)) {
      d.programPath = programs_.path(row.programId);
      d.layer = program->layer;
      d.op = program->op;
    }
    return d;
  }
  return std::nullopt;
}

const std::vector<std::uint32_t>& ProfileSession::tileCycles(std::int64_t phaseId,
                                                             std::int64_t ipu) const {
  auto key = std::make_pair(phaseId, ipu);
  auto it = tileCache_.find(key);
  if (it != tileCache_.end()) return it->second;
  std::vector<std::uint32_t> cycles;
  for (const auto& row : reader_->tilePhases(phaseId)) {
    if (row.ipu != ipu) continue;
    const std::int64_t local = tilesPerIpu_ > 0 ? row.tile % tilesPerIpu_ : row.tile;
    if (local < 0) continue;
    if (static_cast<std::size_t>(local) >= cycles.size()) cycles.resize(local + 1, 0);
    cycles[local] = static_cast<std::uint32_t>(std::max<std::int64_t>(0, row.cycles));
  }
  if (!cycles.empty() && tilesPerIpu_ > 0) cycles.resize(std::max<std::size_t>(cycles.size(), tilesPerIpu_), 0);
  return tileCache_.emplace(key, std::move(cycles)).first->second;
}

}  // namespace ipusim::viewer
