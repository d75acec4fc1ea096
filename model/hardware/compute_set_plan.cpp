#include "model/hardware/compute_set_plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ipusim::model::hardware {
namespace {

// Work charged per vertex on top of its field bytes (the call, the shape
// decoding), so that splits of many tiny vertices stay balanced.
constexpr std::uint64_t kVertexOverheadBytes = 64;

std::string vertexName(const ir::ComputeSet& cs, std::size_t index, const ir::Vertex& v) {
  return "computeSets[" + std::to_string(cs.id) + "] '" + cs.name + "' vertices[" +
         std::to_string(index) + "] (codelet " + v.codelet + ", tile " + std::to_string(v.tile) + ")";
}

}  // namespace

ComputeSetPlan::ComputeSetPlan(const ir::ComputeSet& cs, const MemoryLayout& memory,
                               const Target& target, const ir::ReplicaMirror& mirror)
    : id_(cs.id), name_(cs.name), ipuCycles_(target.numIpus(), 0) {
  const auto& registry = CodeletRegistry::instance();
  // Per tile: the cycles of its worker and supervisor vertices, in vertex order.
  struct TileVertices {
    std::vector<ir::Cycles> workers, supervisors;
    std::uint32_t vertices = 0;
  };
  std::map<std::uint32_t, TileVertices> perTile;
  workPrefix_.reserve(cs.vertices.size());
  const Codelet* codelet = nullptr;
  std::string codeletName;
  std::vector<FieldSpec> specs;
  std::vector<RegionPiece> pieces;  // reused: a compute set may have hundreds of thousands of fields

  for (std::size_t i = 0; i < cs.vertices.size(); ++i) {
    const ir::Vertex& v = cs.vertices[i];
    // Named only when something is wrong: building the name costs more than the vertex.
    const auto where = [&] { return vertexName(cs, i, v); };
    if (v.tile >= target.totalTiles())
      throw std::invalid_argument(where() + ": tile out of range, expected below " +
                                  std::to_string(target.totalTiles()));
    // Vertices of one codelet come in runs: look it up (and its fields) once per run.
    if (!codelet || v.codelet != codeletName) {
      try {
        codelet = &registry.get(v.codelet);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(where() + ": " + e.what());
      }
      codeletName = v.codelet;
      specs = codelet->fields();
    }
    VertexShape shape;
    std::vector<FieldData> fields;
    std::uint64_t work = kVertexOverheadBytes;
    for (const ir::VertexField& f : v.fields)
      if (std::none_of(specs.begin(), specs.end(), [&](const FieldSpec& s) { return s.name == f.name; }))
        throw std::invalid_argument(where() + ": unknown field '" + f.name + "' for codelet " + v.codelet);
    for (const FieldSpec& spec : specs) {
      auto field = std::find_if(v.fields.begin(), v.fields.end(),
                                [&](const ir::VertexField& f) { return f.name == spec.name; });
      if (field == v.fields.end())
        throw std::invalid_argument(where() + ": field '" + spec.name + "' is not connected");
      const ir::TensorRef& ref = field->ref;
      if (ref.tensor >= memory.numTensors())
        throw std::invalid_argument(where() + ": field '" + spec.name + "' refers to tensor " +
                                    std::to_string(ref.tensor) + ", which does not exist");
      const ir::Tensor& tensor = memory.tensor(ref.tensor);
      if (tensor.dtype != spec.dtype)
        throw std::invalid_argument(where() + ": field '" + spec.name + "' is tensor '" + tensor.name +
                                    "' of type " + ir::toString(tensor.dtype) + ", expected " +
                                    ir::toString(spec.dtype));
      FieldData data;
      data.size = ref.size();
      if (ref.size() > 0) {
        memory.pieces(ref, pieces);
        if (pieces.size() != 1 || pieces[0].tile != v.tile || pieces[0].elements != ref.size())
          throw std::invalid_argument(where() + ": field '" + spec.name + "' (tensor " +
                                      std::to_string(ref.tensor) + " [" + std::to_string(ref.begin) +
                                      ", " + std::to_string(ref.end) +
                                      ")) must lie contiguously on the vertex's tile");
        data.data = memory.pointer(pieces[0]);
      }
      fields.push_back(data);
      work += ref.size() * ir::sizeOf(spec.dtype);
      shape.fieldSizes.push_back(ref.size());
    }
    try {
      shape.params = orderedParams(*codelet, v.params);  // defaults filled in
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where() + ": " + e.what());
    }
    try {
      codelet->validate(shape);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where() + ": " + e.what());
    }
    TileVertices& tv = perTile[v.tile];
    if (codelet->isSupervisor())
      tv.supervisors.push_back(codelet->cycles(shape, target));
    else
      codelet->addWorkerCycles(shape, target, tv.workers);  // a per-worker vertex: one a worker vertex
    tv.vertices += std::uint32_t(codelet->workerVertices(shape, target.tile));  // as Poplar's graph holds them
    if (runs_.empty() || runs_.back().codelet != codelet) {
      VertexRun run;
      run.codelet = codelet;
      run.firstVertex = i;
      run.numFields = fields.size();
      run.numParams = shape.params.size();
      run.firstField = fieldPool_.size();
      run.firstParam = paramPool_.size();
      runs_.push_back(run);
    }
    ++runs_.back().count;
    fieldPool_.insert(fieldPool_.end(), fields.begin(), fields.end());
    paramPool_.insert(paramPool_.end(), shape.params.begin(), shape.params.end());
    workPrefix_.push_back((workPrefix_.empty() ? 0 : workPrefix_.back()) + work);
  }

  for (const auto& [tile, tv] : perTile)
    tiles_.push_back({tile, tileComputeCycles(tv.workers, tv.supervisors, target.tile),
                      tv.vertices});
  // A mirrored compute set's vertices are replica 0's: replica k's tiles do
  // the same work k x tilesPerReplica tiles further (ir::ReplicaMirror).
  if (mirror.computeSet(cs.id)) {
    const std::size_t one = tiles_.size();
    for (std::uint32_t k = 1; k < mirror.replicas; ++k)
      for (std::size_t i = 0; i < one; ++i) {
        TileWork w = tiles_[i];
        w.tile += k * mirror.tilesPerReplica;
        tiles_.push_back(w);
      }
  }
  for (const TileWork& w : tiles_) {
    const std::uint32_t ipu = target.ipuOf(w.tile);
    ipuCycles_[ipu] = std::max(ipuCycles_[ipu], w.cycles);
    if (ipus_.empty() || ipus_.back() != ipu) ipus_.push_back(ipu);
  }
}

void ComputeSetPlan::runVertices(std::size_t begin, std::size_t end) const {
  // First run that ends after `begin`.
  auto run = std::upper_bound(runs_.begin(), runs_.end(), begin,
                              [](std::size_t v, const VertexRun& r) { return v < r.firstVertex + r.count; });
  for (; run != runs_.end() && run->firstVertex < end; ++run) {
    const std::size_t lo = std::max(begin, run->firstVertex);
    const std::size_t hi = std::min(end, run->firstVertex + run->count);
    const std::size_t skip = lo - run->firstVertex;
    run->codelet->computeBatch(fieldPool_.data() + run->firstField + skip * run->numFields, run->numFields,
                               paramPool_.data() + run->firstParam + skip * run->numParams, run->numParams,
                               hi - lo);
  }
}

void ComputeSetPlan::runPart(unsigned part, unsigned parts) const {
  // Part p covers the vertices whose cumulative work ends in (W p/n, W (p+1)/n].
  auto boundary = [&](unsigned p) -> std::size_t {
    if (p == 0) return 0;
    if (p >= parts) return numVertices();
    const std::uint64_t target = workBytes() * p / parts;
    return std::size_t(std::upper_bound(workPrefix_.begin(), workPrefix_.end(), target) - workPrefix_.begin());
  };
  runVertices(boundary(part), boundary(part + 1));
}

}  // namespace ipusim::model::hardware
