#include "sim/engine/engine.hpp"

#include "model/clock.hpp"
#include "profiler/recorder/profile_recorder.hpp"
#include "traces/output_file.hpp"
#include "traces/profile_writer.hpp"

#include <filesystem>
#include <iostream>
#include <stdexcept>

namespace ipusim::sim {

namespace fs = std::filesystem;

namespace {

model::Detail detailOf(InstrumentationLevel level) {
  return level == InstrumentationLevel::Tile || level == InstrumentationLevel::Vertex ? model::Detail::Tiles
                                                                                       : model::Detail::Phases;
}

}  // namespace

struct Engine::Impl {
  model::Target target;
  EngineOptions options;
  EngineConfig config;
  std::unique_ptr<model::IpuSystem> system;
  std::unique_ptr<traces::ProfileWriter> writer;
  std::unique_ptr<profiler::ProfileRecorder> recorder;
  std::string profilePath;
  std::unique_ptr<InstanceShare> share;
};

Engine::Engine(ir::Executable exe, const model::Target& target, const EngineOptions& options,
               const EngineConfig& config)
    : impl_(std::make_unique<Impl>()) {
  auto& s = *impl_;
  s.target = target;
  s.options = options;
  s.config = config;
  s.system = std::make_unique<model::IpuSystem>("ipu_system", s.target);
  model::LoadOptions load{config.functional, config.workerThreads, config.fuseMatMuls};
  std::string suffix;  // the reports' names: profile<suffix>.pop
  if (config.peers) {
    s.share = std::make_unique<InstanceShare>(*config.peers, exe, s.target);
    suffix = ".rank" + std::to_string(config.peers->instance());
    load.functionalTiles = s.share->tiles();
    load.beforeCollective = [&s](ir::Id program) { s.share->beforeCollective(*s.system, program); };
  }
  s.system->load(std::move(exe), load);
  const ir::Executable& loaded = s.system->executable();

  // The reports follow the rules every written file follows (traces/output_file.hpp):
  // never onto an input (a workload named profile.pop in the report
  // directory was replaced by the profile), a FIFO, a device or a read-only
  // file; a report of an earlier run is replaced, as Poplar's autoReport does.
  const fs::path directory = options.directory;
  const traces::OutputPolicy reports{/*force=*/true, config.inputs};
  // The directory first, for the profile too: a file of that name was
  // reported as "<dir>/profile.pop: cannot inspect it: Not a directory",
  // naming neither the option nor what it expects.
  if (options.outputSerializedGraph || options.writesProfile()) {
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec)
      throw std::invalid_argument("autoReport.directory '" + directory.string() + "': cannot create it: " + ec.message() +
                                  " (expected a directory for the reports)");
  }
  if (options.outputSerializedGraph) {
    // Complete or absent, as every file we write (traces::OutputFile): not
    // through a link named serialized_graph.json.tmp (ir::saveExecutable's
    // fixed temporary name, which wrote through it), nor left on an interrupt.
    const std::string graph = (directory / ("serialized_graph" + suffix + ".json")).string();
    traces::OutputFile file(graph, reports);
    try {
      ir::writeJson(loaded, file.stream());
    } catch (const std::length_error& e) {
      throw std::invalid_argument("cannot write executable '" + graph + "': " + e.what());
    }
    file.commit();
  }
  if (!options.writesProfile()) return;

  s.profilePath = (directory / ("profile" + suffix + ".pop")).string();
  traces::checkOutputPath(s.profilePath, reports);
  s.writer = std::make_unique<traces::ProfileWriter>(s.profilePath);
  profiler::RecorderConfig rc;
  rc.captureRunsPerProgram = options.executionProfileProgramRunCount;
  rc.captureExecution = options.capturesExecution();
  rc.capturedDetail = detailOf(options.instrumentationLevel);
  if (s.share) {
    // An instance's profile holds its replicas' IPUs (their tiles are whole IPUs), as Poplar's profile of one
    // process holds that process's; `ipusim report DIR` reads the instances' profiles as one system.
    const std::uint32_t tilesPerIpu = s.target.tile.tilesPerIpu;
    rc.ipus = {s.share->tiles().begin / tilesPerIpu, (s.share->tiles().end - s.share->tiles().begin) / tilesPerIpu};
  }
  s.recorder = std::make_unique<profiler::ProfileRecorder>(*s.writer, loaded, s.target, rc);
  s.system->addObserver(s.recorder.get());

  auto& w = *s.writer;
  w.setMeta("tool", "ipusim");
  w.setMeta("tool_version", "0.1.0");
  w.setMeta("workload", config.workloadName.empty() ? loaded.name : config.workloadName);
  w.setMeta("arch", s.target.arch);
  w.setMeta("num_ipus", std::to_string(s.target.numIpus()));
  w.setMeta("tiles_per_ipu", std::to_string(s.target.tile.tilesPerIpu));
  w.setMeta("tile_memory_bytes", std::to_string(s.target.tile.memoryBytes));
  w.setMeta("clock_hz", nlohmann::json(s.target.clockHz).dump());
  w.setMeta("target", s.target.toJson().dump());
  // The AMP's rates, so that readers (which do not link the model) can state
  // achieved FLOP/s against the peak.
  w.setMeta("amp_float_macs_per_cycle", std::to_string(s.target.tile.ampFloatMacsPerCycle));
  w.setMeta("amp_half_macs_per_cycle", std::to_string(s.target.tile.ampHalfMacsPerCycle));
  w.setMeta("engine_options", options.toJson().dump());
  w.setMeta("instrumentation_level", toString(options.instrumentationLevel));
  w.setMeta("synthetic_data", config.functional ? "false" : "true");
  nlohmann::json directions = nlohmann::json::object();
  for (const auto& stream : loaded.streams)
    directions[stream.name] = stream.direction == ir::StreamDirection::HostToDevice ? "HostToDevice" : "DeviceToHost";
  w.setMeta("stream_directions", directions.dump());
  if (s.share) {
    // One instance of several (its reports named by rank): which replicas it computed.
    w.setMeta("instance", std::to_string(config.peers->instance()));
    w.setMeta("instances", std::to_string(config.peers->instances()));
    w.setMeta("instance_replicas", nlohmann::json{{"first", s.share->firstReplica()},
                                                  {"count", s.share->replicaCount()}}.dump());
    w.setMeta("instance_first_ipu", std::to_string(rc.ipus.first));
    w.setMeta("instance_ipus", std::to_string(rc.ipus.count));
  }
  if (config.extraMeta.is_object())
    for (auto it = config.extraMeta.begin(); it != config.extraMeta.end(); ++it)
      w.setMeta(it.key(), it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
}

Engine::~Engine() = default;

model::IpuSystem& Engine::system() { return *impl_->system; }
model::HostStream& Engine::stream(const std::string& name) { return impl_->system->stream(name); }

std::uint32_t Engine::entryIndex(const std::string& name) const {
  std::string valid;
  const auto& entries = impl_->system->executable().entryPoints;
  for (std::uint32_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name == name) return i;
    valid += (valid.empty() ? "" : ", ") + entries[i].name;
  }
  throw std::invalid_argument("no entry point '" + name + "' in '" + impl_->system->executable().name + "' (it has: " + valid + ")");
}

void Engine::completeOutfeed(model::Bytes& bytes) {
  if (impl_->share) impl_->share->completeOutfeed(bytes);
}

const InstanceShare* Engine::share() const { return impl_->share.get(); }
InstanceShare* Engine::share() { return impl_->share.get(); }

void Engine::run(std::uint32_t entry) { impl_->system->run(entry); }
std::uint64_t Engine::runCount() const { return impl_->system->runsCompleted(); }

void Engine::hostEvent(const model::HostEvent& event) {
  if (impl_->recorder) impl_->recorder->host(event);
}

void Engine::counter(const model::CounterSample& sample) {
  if (impl_->recorder) impl_->recorder->counter(sample);
}

std::string Engine::finish() {
  auto& s = *impl_;
  if (!s.writer) return "";
  s.recorder->writePrograms(s.options.outputDebugInfo || s.options.outputGraphProfile);
  s.recorder->writeTileMemory(s.system->tileMemoryUsage(/*largestPerTile=*/0));  // (the profile lists none)
  s.recorder->writeExecutableFacts();
  s.writer->setMeta("runs", std::to_string(s.recorder->runsRecorded()));
  s.writer->setMeta("runs_captured", std::to_string(s.recorder->runsCaptured()));
  // The job ends here (the host holds every result): the one total the
  // analyses report (profiler/analysis/job_cycles.hpp).
  s.writer->setMeta("job_end_cycle", std::to_string(model::nowCycles()));
  if (const auto& truncated = s.recorder->truncatedRuns(); !truncated.empty()) {
    s.writer->setMeta("capture_truncated_runs", nlohmann::json(truncated).dump());
    std::cerr << "ipusim: note: " << truncated.size() << " captured run(s) reached the cap of "
              << profiler::RecorderConfig{}.maxSlicesPerRun
              << " slices per run; the profile holds their beginning only (meta capture_truncated_runs)\n";
  }
  s.writer->commit();
  return s.profilePath;
}

std::string Engine::profilePath() const { return impl_->profilePath; }
const EngineOptions& Engine::options() const { return impl_->options; }

}  // namespace ipusim::sim
