#include "model/ir/graph_builder.hpp"
#include "model/ir/range_text.hpp"
#include "model/ir/tile_memory_usage.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::ir {

GraphBuilder::GraphBuilder(const model::Target& target, std::string name) : target_(target) {
  target_.validate();
  exe_.name = std::move(name);
  exe_.options = nlohmann::json::object();
}

// ---------------------------------------------------------------- tensors

Tensor& GraphBuilder::mutableTensor(Id id, const char* operation) {
  if (finished_) throw std::logic_error(std::string("GraphBuilder::") + operation + ": finish() was already called");
  if (id >= exe_.tensors.size())
    throw std::invalid_argument(std::string("GraphBuilder::") + operation + ": tensor id " + std::to_string(id) +
                                " is out of range (there are " + std::to_string(exe_.tensors.size()) + " tensors)");
  return exe_.tensors[id];
}

void GraphBuilder::checkTile(std::uint32_t tile, const std::string& what) const {
  if (tile >= target_.totalTiles())
    throw std::invalid_argument(what + ": tile " + std::to_string(tile) + " is out of range (the target has " +
                                std::to_string(target_.totalTiles()) + " tiles)");
}

Id GraphBuilder::addTensor(const std::string& name, std::vector<std::uint64_t> shape, DType dtype,
                           const std::string& category, DebugInfo debug) {
  if (finished_) throw std::logic_error("GraphBuilder::addTensor: finish() was already called");
  Tensor t;
  t.id = Id(exe_.tensors.size());
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.category = category;
  t.debug = std::move(debug);
  exe_.tensors.push_back(std::move(t));
  return exe_.tensors.back().id;
}

void GraphBuilder::setAlwaysLive(Id tensor, bool alwaysLive) { mutableTensor(tensor, "setAlwaysLive").alwaysLive = alwaysLive; }

void GraphBuilder::setInitialValue(Id tensor, std::vector<double> values) {
  Tensor& t = mutableTensor(tensor, "setInitialValue");
  if (values.size() != t.numElements())
    throw std::invalid_argument("GraphBuilder::setInitialValue: tensor '" + t.name + "' has " +
                                std::to_string(t.numElements()) + " elements, got " + std::to_string(values.size()) +
                                " values");
  t.initialValue = std::move(values);
}

void GraphBuilder::setTileMapping(Id tensor, std::uint32_t tile) {
  Tensor& t = mutableTensor(tensor, "setTileMapping");
  checkTile(tile, "GraphBuilder::setTileMapping of tensor '" + t.name + "'");
  t.mapping.clear();
  if (t.numElements() > 0) t.mapping.push_back({tile, 0, t.numElements(), TileInterval::kUnplaced});
}

void GraphBuilder::mapLinearly(Id tensor, const std::vector<std::uint32_t>& tiles, std::uint64_t grain) {
  Tensor& t = mutableTensor(tensor, "mapLinearly");
  const std::string what = "GraphBuilder::mapLinearly of tensor '" + t.name + "'";
  if (tiles.empty()) throw std::invalid_argument(what + ": the tile list is empty");
  if (grain == 0) throw std::invalid_argument(what + ": grain must be >= 1");
  for (auto tile : tiles) checkTile(tile, what);
  const std::uint64_t n = t.numElements();
  const std::uint64_t grains = (n + grain - 1) / grain;
  const std::uint64_t perTile = (grains + tiles.size() - 1) / tiles.size() * grain;
  t.mapping.clear();
  for (std::size_t i = 0; i < tiles.size() && i * perTile < n; ++i)
    t.mapping.push_back({tiles[i], i * perTile, std::min(n, (i + 1) * perTile), TileInterval::kUnplaced});
}

void GraphBuilder::mapInterval(Id tensor, std::uint64_t begin, std::uint64_t end, std::uint32_t tile) {
  Tensor& t = mutableTensor(tensor, "mapInterval");
  const std::string what = "GraphBuilder::mapInterval of tensor '" + t.name + "' elements " + rangeText(begin, end);
  checkTile(tile, what);
  if (begin >= end) throw std::invalid_argument(what + ": the interval is empty or reversed");
  if (end > t.numElements())
    throw std::invalid_argument(what + ": the tensor has " + std::to_string(t.numElements()) + " elements");
  auto at = std::lower_bound(t.mapping.begin(), t.mapping.end(), begin,
                             [](const TileInterval& iv, std::uint64_t b) { return iv.begin < b; });
  const bool overlapsNext = at != t.mapping.end() && at->begin < end;
  const bool overlapsPrevious = at != t.mapping.begin() && std::prev(at)->end > begin;
  if (overlapsNext || overlapsPrevious) {
    const TileInterval& other = overlapsNext ? *at : *std::prev(at);
    throw std::invalid_argument(what + ": overlaps elements " + rangeText(other.begin, other.end) + " already on tile " +
                                std::to_string(other.tile));
  }
  t.mapping.insert(at, {tile, begin, end, TileInterval::kUnplaced});
}

void GraphBuilder::setIntervalAddress(Id tensor, std::size_t interval, std::uint64_t address) {
  Tensor& t = mutableTensor(tensor, "setIntervalAddress");
  if (interval >= t.mapping.size())
    throw std::invalid_argument("GraphBuilder::setIntervalAddress: tensor '" + t.name + "' has " +
                                std::to_string(t.mapping.size()) + " mapped intervals, got index " +
                                std::to_string(interval));
  if (address % kTileMemoryAlignment != 0)
    throw std::invalid_argument("GraphBuilder::setIntervalAddress: tensor '" + t.name + "' mapping[" +
                                std::to_string(interval) + "] address " + std::to_string(address) +
                                " is not a multiple of 8");
  t.mapping[interval].address = address;
}

const Tensor& GraphBuilder::tensor(Id id) const {
  if (id >= exe_.tensors.size())
    throw std::invalid_argument("GraphBuilder::tensor: tensor id " + std::to_string(id) + " is out of range");
  return exe_.tensors[id];
}

TensorRef GraphBuilder::ref(Id id) const { return {id, 0, tensor(id).numElements()}; }

TensorRef GraphBuilder::ref(Id id, std::uint64_t begin, std::uint64_t end) const {
  const Tensor& t = tensor(id);
  if (begin > end || end > t.numElements())
    throw std::invalid_argument("GraphBuilder::ref: elements " + rangeText(begin, end) + " are outside tensor '" +
                                t.name + "' of " + std::to_string(t.numElements()) + " elements");
  return {id, begin, end};
}

std::vector<std::uint32_t> GraphBuilder::tileRange(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> tiles(count);
  for (std::uint32_t i = 0; i < count; ++i) tiles[i] = first + i;
  return tiles;
}

// ---------------------------------------------------------------- compute and streams

Id GraphBuilder::addComputeSet(const std::string& name, DebugInfo debug) {
  if (finished_) throw std::logic_error("GraphBuilder::addComputeSet: finish() was already called");
  ComputeSet cs;
  cs.id = Id(exe_.computeSets.size());
  cs.name = name;
  cs.debug = std::move(debug);
  exe_.computeSets.push_back(std::move(cs));
  return exe_.computeSets.back().id;
}

void GraphBuilder::addVertex(Id computeSet, const std::string& codelet, std::uint32_t tile,
                             std::vector<VertexField> fields, VertexParams params) {
  if (finished_) throw std::logic_error("GraphBuilder::addVertex: finish() was already called");
  if (computeSet >= exe_.computeSets.size())
    throw std::invalid_argument("GraphBuilder::addVertex(" + codelet + "): compute set id " +
                                std::to_string(computeSet) + " is out of range");
  checkTile(tile, "GraphBuilder::addVertex(" + codelet + ") in compute set '" + exe_.computeSets[computeSet].name + "'");
  for (const auto& f : fields) ref(f.ref.tensor, f.ref.begin, f.ref.end);  // throws on a bad ref
  exe_.computeSets[computeSet].vertices.push_back({codelet, tile, std::move(fields), std::move(params)});
}

Id GraphBuilder::addStream(const std::string& name, StreamDirection direction, DType dtype,
                           std::uint64_t elementsPerCopy, std::uint32_t bufferDepth, DebugInfo debug) {
  if (finished_) throw std::logic_error("GraphBuilder::addStream: finish() was already called");
  for (const auto& s : exe_.streams)
    if (s.name == name) throw std::invalid_argument("GraphBuilder::addStream: stream '" + name + "' already exists");
  Stream s;
  s.id = Id(exe_.streams.size());
  s.name = name;
  s.direction = direction;
  s.dtype = dtype;
  s.elementsPerCopy = elementsPerCopy;
  s.bufferDepth = bufferDepth;
  s.debug = std::move(debug);
  exe_.streams.push_back(std::move(s));
  return exe_.streams.back().id;
}

// ---------------------------------------------------------------- programs

void GraphBuilder::checkProgram(Id id, const char* operation) const {
  if (id >= exe_.programs.size())
    throw std::invalid_argument(std::string("GraphBuilder::") + operation + ": program id " +
                                (id == kNoId ? std::string("kNoId") : std::to_string(id)) + " is out of range (there are " +
                                std::to_string(exe_.programs.size()) + " programs)");
}

Id GraphBuilder::addProgram(Program program) {
  if (finished_) throw std::logic_error("GraphBuilder: finish() was already called");
  program.id = Id(exe_.programs.size());
  exe_.programs.push_back(std::move(program));
  return exe_.programs.back().id;
}

Id GraphBuilder::sequence(std::vector<Id> children, const std::string& name, DebugInfo debug) {
  for (Id c : children) checkProgram(c, "sequence");
  Program p;
  p.kind = ProgramKind::Sequence;
  p.name = name;
  p.children = std::move(children);
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::execute(Id computeSet, const std::string& name, DebugInfo debug) {
  if (computeSet >= exe_.computeSets.size())
    throw std::invalid_argument("GraphBuilder::execute: compute set id " + std::to_string(computeSet) + " is out of range");
  Program p;
  p.kind = ProgramKind::Execute;
  p.computeSet = computeSet;
  p.name = name.empty() ? exe_.computeSets[computeSet].name : name;
  p.debug = debug.layer.empty() && debug.op.empty() ? exe_.computeSets[computeSet].debug : std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::copy(TensorRef src, TensorRef dst, const std::string& name, DebugInfo debug) {
  ref(src.tensor, src.begin, src.end);
  ref(dst.tensor, dst.begin, dst.end);
  if (src.size() != dst.size())
    throw std::invalid_argument("GraphBuilder::copy '" + name + "': src has " + std::to_string(src.size()) +
                                " elements but dst has " + std::to_string(dst.size()));
  Program p;
  p.kind = ProgramKind::Copy;
  p.name = name;
  p.src = src;
  p.dst = dst;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::copy(std::vector<CopyRegion> regions, const std::string& name, DebugInfo debug) {
  if (regions.empty()) throw std::invalid_argument("GraphBuilder::copy '" + name + "': no regions");
  if (regions.size() == 1) return copy(regions[0].src, regions[0].dst, name, std::move(debug));
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const CopyRegion& r = regions[i];
    ref(r.src.tensor, r.src.begin, r.src.end);
    ref(r.dst.tensor, r.dst.begin, r.dst.end);
    if (r.src.size() != r.dst.size())
      throw std::invalid_argument("GraphBuilder::copy '" + name + "': regions[" + std::to_string(i) + "] src has " +
                                  std::to_string(r.src.size()) + " elements but dst has " + std::to_string(r.dst.size()));
  }
  Program p;
  p.kind = ProgramKind::Copy;
  p.name = name;
  p.regions = std::move(regions);
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::streamCopy(Id stream, TensorRef tensor, const std::string& name, DebugInfo debug) {
  if (stream >= exe_.streams.size())
    throw std::invalid_argument("GraphBuilder::streamCopy: stream id " + std::to_string(stream) + " is out of range");
  ref(tensor.tensor, tensor.begin, tensor.end);
  Program p;
  p.kind = ProgramKind::StreamCopy;
  p.stream = stream;
  p.tensor = tensor;
  p.name = name.empty() ? exe_.streams[stream].name : name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::repeat(std::uint64_t count, Id body, const std::string& name, DebugInfo debug) {
  checkProgram(body, "repeat");
  Program p;
  p.kind = ProgramKind::Repeat;
  p.count = count;
  p.children = {body};
  p.name = name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::repeatWhileTrue(Id conditionProgram, TensorRef condition, Id body, const std::string& name,
                                 DebugInfo debug) {
  checkProgram(conditionProgram, "repeatWhileTrue");
  checkProgram(body, "repeatWhileTrue");
  ref(condition.tensor, condition.begin, condition.end);
  Program p;
  p.kind = ProgramKind::RepeatWhileTrue;
  p.children = {conditionProgram, body};
  p.condition = condition;
  p.name = name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::ifElse(TensorRef condition, Id thenBody, Id elseBody, const std::string& name, DebugInfo debug) {
  checkProgram(thenBody, "ifElse");
  ref(condition.tensor, condition.begin, condition.end);
  Program p;
  p.kind = ProgramKind::If;
  p.children = {thenBody};
  if (elseBody != kNoId) {
    checkProgram(elseBody, "ifElse");
    p.children.push_back(elseBody);
  }
  p.condition = condition;
  p.name = name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::sync(SyncType type, const std::string& name, DebugInfo debug) {
  Program p;
  p.kind = ProgramKind::Sync;
  p.syncType = type;
  p.name = name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

Id GraphBuilder::call(Id callee, const std::string& name, DebugInfo debug) {
  checkProgram(callee, "call");
  Program p;
  p.kind = ProgramKind::Call;
  p.callee = callee;
  p.name = name;
  p.debug = std::move(debug);
  return addProgram(std::move(p));
}

void GraphBuilder::markStep(Id program) {
  checkProgram(program, "markStep");
  exe_.programs[program].marksStep = true;
}

void GraphBuilder::addEntryPoint(const std::string& name, Id program) {
  checkProgram(program, "addEntryPoint");
  for (const auto& e : exe_.entryPoints)
    if (e.name == name) throw std::invalid_argument("GraphBuilder::addEntryPoint: entry point '" + name + "' already exists");
  exe_.entryPoints.push_back({name, program});
}

void GraphBuilder::setOptions(nlohmann::json options) { exe_.options = std::move(options); }

// ---------------------------------------------------------------- finish

void GraphBuilder::placeUnplacedIntervals() {
  // Start each tile's bump pointer above everything already placed there, so
  // a caller's plan is never overwritten.
  std::map<std::uint32_t, std::uint64_t> next;
  for (const Tensor& t : exe_.tensors)
    for (const TileInterval& iv : t.mapping)
      if (iv.address != TileInterval::kUnplaced) {
        std::uint64_t& top = next[iv.tile];
        top = std::max(top, iv.address + (iv.end - iv.begin) * sizeOf(t.dtype));
      }
  for (Tensor& t : exe_.tensors)
    for (TileInterval& iv : t.mapping)
      if (iv.address == TileInterval::kUnplaced) {
        std::uint64_t& top = next[iv.tile];
        iv.address = alignToTileMemory(top);
        top = iv.address + (iv.end - iv.begin) * sizeOf(t.dtype);
      }
}

void GraphBuilder::checkCapacity(const FinishOptions& options) {
  // The one tile memory figure (tile_memory_usage.hpp), as the profile shows it.
  const std::vector<TileMemoryUsage> usage = tileMemoryUsage(exe_.tensors, target_.totalTiles());
  highWater_.clear();
  for (const TileMemoryUsage& u : usage) highWater_.push_back({u.tile, u.peakBytes});
  if (options.allowOutOfMemory) return;
  const std::uint64_t capacity = target_.tile.memoryBytes;
  const std::string summary = outOfMemorySummary(findOutOfMemory(usage, capacity), capacity, target_.totalTiles(),
                                                 "graph '" + exe_.name + "'");
  if (!summary.empty())
    throw std::invalid_argument(summary + "\nSet debug.allowOutOfMemory to report instead of failing.");
}

Executable GraphBuilder::finish(const FinishOptions& options) {
  if (finished_) throw std::logic_error("GraphBuilder::finish: already called");
  exe_.target = target_.toJson();
  // Validate the structure first so that placement only sees complete, sorted mappings.
  exe_.validate(target_.totalTiles());
  placeUnplacedIntervals();
  checkCapacity(options);
  finished_ = true;
  return std::move(exe_);
}

}  // namespace ipusim::ir
