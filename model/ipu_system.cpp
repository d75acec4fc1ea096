#include "model/ipu_system.hpp"

#include "model/clock.hpp"
#include "model/hardware/exchange_fabric.hpp"
#include "model/hardware/host_link.hpp"
#include "model/hardware/loaded_executable.hpp"
#include "model/hardware/observer_set.hpp"
#include "model/hardware/program_executor.hpp"
#include "model/hardware/sync_controller.hpp"
#include "model/hardware/worker_pool.hpp"

#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim::model {

struct IpuSystem::Impl {
  Impl(const Target& t) : target(t), hostLink(target), sync(target.sync) {}

  Target target;
  hardware::HostLink hostLink;
  hardware::SyncController sync;
  hardware::ObserverSet observers;
  ir::Executable exe;
  LoadOptions options;
  std::unique_ptr<hardware::WorkerPool> pool;  // after load(): functional work of large phases
  std::unique_ptr<hardware::LoadedExecutable> loaded;
  std::unique_ptr<hardware::ProgramExecutor> executor;
  std::uint64_t runs = 0;
  bool running = false;

  hardware::LoadedExecutable& requireLoaded(const char* what) const {
    if (!loaded) throw std::logic_error(std::string("IpuSystem::") + what + ": no executable loaded (call load() first)");
    return *loaded;
  }
};

IpuSystem::IpuSystem(sc_core::sc_module_name name, const Target& target) : sc_core::sc_module(name) {
  configureKernelTime();
  target.validate();
  impl_ = std::make_unique<Impl>(target);
}

IpuSystem::~IpuSystem() = default;

void IpuSystem::load(ir::Executable exe, const LoadOptions& options) {
  if (impl_->loaded) throw std::logic_error("IpuSystem::load: an executable is already loaded (load once)");
  exe.validate(impl_->target.totalTiles());
  impl_->exe = std::move(exe);
  impl_->options = options;
  impl_->loaded = std::make_unique<hardware::LoadedExecutable>(impl_->exe, impl_->target, options.functional,
                                                                  options.fuseMatMuls, options.functionalTiles);
  const unsigned threads = options.workerThreads ? options.workerThreads : hardware::defaultWorkerThreads();
  impl_->pool = std::make_unique<hardware::WorkerPool>(options.functional ? threads : 1,
                                                      hardware::defaultWorkerChoice());
  impl_->executor = std::make_unique<hardware::ProgramExecutor>(*impl_->loaded, impl_->hostLink, impl_->sync,
                                                                impl_->observers, *impl_->pool);
  if (options.functional) impl_->executor->setBeforeCollective(options.beforeCollective);
}

IpuSystem::HostThreads IpuSystem::hostThreads() const {
  impl_->requireLoaded("hostThreads");
  const hardware::WorkerPool& pool = *impl_->pool;
  return {pool.size(), pool.parallelRuns() + pool.sequentialRuns(), pool.parallelRuns()};
}

void IpuSystem::addObserver(ExecutionObserver* observer) {
  if (!observer) throw std::invalid_argument("IpuSystem::addObserver: observer is null");
  impl_->observers.add(observer);
}

void IpuSystem::run(std::uint32_t entry) {
  impl_->requireLoaded("run");
  if (impl_->running) throw std::logic_error("IpuSystem::run: a run is already in progress (one run at a time)");
  impl_->running = true;
  try {
    impl_->executor->run(entry, impl_->runs);
  } catch (...) {
    impl_->running = false;
    throw;
  }
  impl_->running = false;
  ++impl_->runs;
}

HostStream& IpuSystem::stream(ir::Id id) {
  auto& loaded = impl_->requireLoaded("stream");
  if (id >= loaded.streams.size())
    throw std::invalid_argument("stream " + std::to_string(id) + " does not exist: the executable has " +
                                std::to_string(loaded.streams.size()));
  return *loaded.streams[id];
}

HostStream& IpuSystem::stream(const std::string& name) {
  auto& loaded = impl_->requireLoaded("stream");
  std::string known;
  for (auto& s : loaded.streams) {
    if (s->spec().name == name) return *s;
    known += (known.empty() ? "" : ", ") + s->spec().name;
  }
  throw std::invalid_argument("stream '" + name + "' does not exist; streams: " + (known.empty() ? "none" : known));
}

std::vector<std::uint8_t> IpuSystem::readTensor(ir::Id tensor) const {
  auto& loaded = impl_->requireLoaded("readTensor");
  if (tensor >= impl_->exe.tensors.size())
    throw std::invalid_argument("readTensor: tensor " + std::to_string(tensor) + " does not exist");
  // Synthetic mode holds no data: the bytes read are zeros.
  std::vector<std::uint8_t> bytes(impl_->exe.tensors[tensor].numBytes(), 0);
  loaded.memory.read(tensor, bytes.data());
  return bytes;
}

void IpuSystem::writeTensor(ir::Id tensor, const void* data, std::size_t bytes) {
  auto& loaded = impl_->requireLoaded("writeTensor");
  if (tensor >= impl_->exe.tensors.size())
    throw std::invalid_argument("writeTensor: tensor " + std::to_string(tensor) + " does not exist");
  const ir::Tensor& t = impl_->exe.tensors[tensor];
  if (bytes != t.numBytes())
    throw std::invalid_argument("writeTensor: tensor '" + t.name + "' has " + std::to_string(t.numBytes()) +
                                " bytes, got " + std::to_string(bytes));
  loaded.memory.write(tensor, static_cast<const std::uint8_t*>(data));  // ignored in synthetic mode
}

namespace {

// The region's pieces in tile memory, each with its byte offset in the region's data.
template <typename Move>
void eachPiece(const hardware::LoadedExecutable& loaded, const ir::TensorRef& region, const char* what, Move move) {
  if (region.tensor >= loaded.exe.tensors.size() || region.begin > region.end ||
      region.end > loaded.exe.tensors[region.tensor].numElements())
    throw std::invalid_argument(std::string(what) + ": region [" + std::to_string(region.begin) + ", " +
                                std::to_string(region.end) + ") of tensor " + std::to_string(region.tensor) +
                                " is outside the executable's tensors");
  if (!loaded.functional) return;
  const std::size_t element = ir::sizeOf(loaded.exe.tensors[region.tensor].dtype);
  for (const hardware::RegionPiece& piece : loaded.memory.pieces(region))
    move(loaded.memory.pointer(piece), piece.offset * element, piece.elements * element);
}

}  // namespace

void IpuSystem::readRegion(const ir::TensorRef& region, void* data) const {
  eachPiece(impl_->requireLoaded("readRegion"), region, "readRegion",
            [&](const std::uint8_t* tile, std::size_t at, std::size_t bytes) {
              std::memcpy(static_cast<std::uint8_t*>(data) + at, tile, bytes);
            });
}

void IpuSystem::writeRegion(const ir::TensorRef& region, const void* data) {
  eachPiece(impl_->requireLoaded("writeRegion"), region, "writeRegion",
            [&](std::uint8_t* tile, std::size_t at, std::size_t bytes) {
              std::memcpy(tile, static_cast<const std::uint8_t*>(data) + at, bytes);
            });
}

const Target& IpuSystem::target() const { return impl_->target; }

const ir::Executable& IpuSystem::executable() const {
  impl_->requireLoaded("executable");
  return impl_->exe;
}

std::uint64_t IpuSystem::runsCompleted() const { return impl_->runs; }

std::vector<ir::TileMemoryUsage> IpuSystem::tileMemoryUsage(std::size_t largestPerTile) const {
  auto& loaded = impl_->requireLoaded("tileMemoryUsage");
  // The tensors as placed (without their initial values, which can be large).
  std::vector<ir::Tensor> placed;
  placed.reserve(impl_->exe.tensors.size());
  for (const ir::Tensor& t : impl_->exe.tensors) {
    ir::Tensor copy;
    copy.id = t.id;
    copy.name = t.name;
    copy.shape = t.shape;
    copy.dtype = t.dtype;
    copy.category = t.category;
    copy.alwaysLive = t.alwaysLive;
    copy.mapping = loaded.memory.mapping(t.id);
    placed.push_back(std::move(copy));
  }
  return ir::tileMemoryUsage(placed, impl_->target.totalTiles(), largestPerTile);
}

}  // namespace ipusim::model
