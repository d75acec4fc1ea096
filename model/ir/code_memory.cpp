#include "model/ir/code_memory.hpp"

#include "model/ir/renames.hpp"

#include "model/codelets/per_worker.hpp"
#include "model/ir/tensor_intervals.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ipusim::ir {
namespace {

// Marks each tile once per program step: `stamp[tile]` holds the last step
// that counted the tile.
struct StepMarks {
  std::vector<std::uint64_t> stamp;
  std::uint64_t current = 0;
  explicit StepMarks(std::uint32_t numTiles) : stamp(numTiles, 0) {}
  void next() { ++current; }
  bool first(std::uint32_t tile) {
    if (stamp[tile] == current) return false;
    stamp[tile] = current;
    return true;
  }
};

// Calls visit(tile, elements) for each piece of elements [begin, end) of
// `t` (its part on one mapping interval), in element order; a tile beyond
// the target's is an error naming the tensor.
template <typename Visit>
void forEachPiece(const Tensor& t, std::uint64_t begin, std::uint64_t end, std::uint32_t numTiles, Visit&& visit) {
  forEachIntervalOf(t, begin, end, [&](const TileInterval& iv, std::uint64_t lo, std::uint64_t hi) {
    if (iv.tile >= numTiles)
      throw std::invalid_argument("code memory: tensor '" + t.name + "' is mapped to tile " + std::to_string(iv.tile) +
                                  ", but there are " + std::to_string(numTiles) + " tiles");
    visit(iv.tile, hi - lo);
  });
}

struct Piece {
  std::uint32_t tile;
  std::uint64_t elements;
};

// Bytes rounded up to whole 32-bit words (instructions and vertex state
// words are 32 bits).
std::uint64_t wordBytes(double bytes) { return 4 * std::uint64_t(std::ceil(bytes / 4)); }

}  // namespace

// The measurement: Graphcore's auto-pipelining tests record the memory
// report of one Keras Dense layer (4096 -> 1024 units, batch 16, float32)
// compiled by Poplar 3.0 for one Mk2 IPU (graphcore/ipu_tensorflow_addons,
// keras/experimental/auto_pipeline/utils/profiler_test.py): vertexCode
// 3.4 MiB, vertexInstanceState 178 KiB, the layer's controlCode 100 KiB and
// internalExchangeCode 360 KiB. ipusim compiles the same layer (a predict
// step of dense(1024) on 4096 features, batch 16: tests/scheduler/
// code_memory_test.cpp checks these counts) into 2,496 (tile, codelet)
// pairs, 7,616 vertices with 19,776 fields and 30,336 scalar parameters,
// 7,017 (tile, program step) pairs and 16,794 messages sent or received.
CodeMemoryParams defaultCodeMemoryParams() {
  CodeMemoryParams p;
  // Fit: 3.4 MiB / 2,496 (tile, codelet) pairs. One size for every codelet
  // (poplibs' assembly AMP vertices are larger than an elementwise add's C++).
  p.codeletBytes = 3.4 * 1024 * 1024 / 2496;  // 1,428 B
  // Estimates from Poplar's field layouts: a tensor field as one 32-bit
  // (scaled) pointer, as poplibs' inner-loop vertices declare theirs
  // (ONE_PTR, SCALED_PTR32), and a scalar parameter as a 16-bit field. With
  // these the layer's state is 139,776 B + the fixed 48 KiB below =
  // 184.5 KiB, against the 178 KiB measured (+4%): a check, not a fit.
  p.fieldBytes = 4;
  p.paramBytes = 2;
  // Sourced: "random seed and supervisor vertex state, which is usually
  // 48 KB" per IPU (the same project's auto_pipeline/prediction/
  // partition.py), spread over its 1,472 tiles.
  p.tileVertexStateBytes = 48.0 * 1024 / 1472;  // 33.4 B
  // Fit: 100 KiB / 7,017 (tile, step) pairs (about 4 instructions a step: a
  // sync, a call, its arguments).
  p.stepControlBytes = 100.0 * 1024 / 7017;  // 14.6 B
  // Fit: 360 KiB / 16,794 messages sent or received (about 5 instructions
  // a message: its address, its size, the send or the receive pointer).
  p.messageExchangeBytes = 360.0 * 1024 / 16794;  // 22.0 B
  return p;
}

std::vector<CodeCounts> countCodeOnTiles(const Executable& exe, std::uint32_t numTiles, const model::TileParams& tile) {
  std::vector<CodeCounts> counts(numTiles);
  // Distinct codelets per tile: a tile runs a handful, so a short list each.
  std::vector<std::vector<Name>> codelets(numTiles);
  // A per-worker vertex is the worker vertices Poplar's graph holds (model/codelets/per_worker.hpp).
  model::WorkerVertexCount workerVertices(tile);
  for (const ComputeSet& cs : exe.computeSets)
    for (const Vertex& v : cs.vertices) {
      if (v.tile >= numTiles)
        throw std::invalid_argument("code memory: compute set '" + cs.name + "' has a vertex on tile " +
                                    std::to_string(v.tile) + ", but there are " + std::to_string(numTiles) + " tiles");
      const std::uint64_t vertices = workerVertices(v);
      CodeCounts& c = counts[v.tile];
      c.vertices += vertices;
      c.fields += vertices * v.fields.size();
      c.params += vertices * v.params.size();
      auto& seen = codelets[v.tile];
      if (std::find(seen.begin(), seen.end(), v.codelet) == seen.end()) seen.push_back(v.codelet), ++c.codelets;
    }

  StepMarks marks(numTiles);
  auto takesPart = [&](std::uint32_t tile) {
    if (marks.first(tile)) ++counts[tile].steps;
  };
  // A Copy's messages: each tile receives one from each tile it gets data
  // from (the distinct (source, destination) tile pairs of the Copy's
  // regions, however many regions a pair has: a 2-D region's rows go as one
  // strided message) and sends one for each distinct piece it sends, to
  // however many tiles (the exchange multicasts: a broadcast is one send).
  std::vector<Piece> srcPieces, dstPieces;
  std::vector<std::uint64_t> pairs;               // source tile << 32 | destination tile
  std::vector<std::array<std::uint64_t, 3>> sends;  // source tile, tensor, first element
  auto addRegion = [&](const TensorRef& src, const TensorRef& dst) {
    if (src.tensor >= exe.tensors.size() || dst.tensor >= exe.tensors.size() || src.size() == 0) return;
    srcPieces.clear(), dstPieces.clear();
    std::uint64_t at = src.begin;
    forEachPiece(exe.tensors[src.tensor], src.begin, src.end, numTiles, [&](std::uint32_t tile, std::uint64_t n) {
      srcPieces.push_back({tile, n});
      sends.push_back({tile, src.tensor, at});
      at += n;
    });
    forEachPiece(exe.tensors[dst.tensor], dst.begin, dst.end, numTiles,
                 [&](std::uint32_t tile, std::uint64_t n) { dstPieces.push_back({tile, n}); });
    std::size_t i = 0, j = 0;
    // Walk both lists by element: each overlap of a source and a destination piece is a pair.
    std::uint64_t leftS = srcPieces.empty() ? 0 : srcPieces[0].elements;
    std::uint64_t leftD = dstPieces.empty() ? 0 : dstPieces[0].elements;
    while (i < srcPieces.size() && j < dstPieces.size()) {
      pairs.push_back(std::uint64_t(srcPieces[i].tile) << 32 | dstPieces[j].tile);
      const std::uint64_t n = std::min(leftS, leftD);
      leftS -= n, leftD -= n;
      if (leftS == 0 && ++i < srcPieces.size()) leftS = srcPieces[i].elements;
      if (leftD == 0 && ++j < dstPieces.size()) leftD = dstPieces[j].elements;
    }
  };
  auto unique = [](auto& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  for (const Program& p : exe.programs) {
    marks.next();
    switch (p.kind) {
      case ProgramKind::Execute:
        if (p.computeSet >= exe.computeSets.size()) break;
        for (const Vertex& v : exe.computeSets[p.computeSet].vertices) takesPart(v.tile);
        break;
      case ProgramKind::Copy: {
        // A Copy renaming another's tensors (copyOf) runs that Copy's
        // exchange, whose code exists once: its tiles take a step, no message.
        const Program& holder = regionsHolder(exe, p);
        const bool own = &holder == &p;
        pairs.clear(), sends.clear();
        if (holder.regions.empty()) addRegion(holder.src, holder.dst);
        for (const CopyRegion& r : holder.regions) addRegion(r.src, r.dst);
        unique(pairs), unique(sends);
        for (std::uint64_t pair : pairs) {
          const auto from = std::uint32_t(pair >> 32), to = std::uint32_t(pair);
          if (own) ++counts[to].messages;
          takesPart(from), takesPart(to);
        }
        if (own)
          for (const auto& send : sends) ++counts[send[0]].messages;
        break;
      }
      case ProgramKind::StreamCopy:
      case ProgramKind::RemoteCopy:  // one message a tile holding part of the tensor
        if (p.tensor.tensor >= exe.tensors.size() || p.tensor.size() == 0) break;
        forEachPiece(exe.tensors[p.tensor.tensor], p.tensor.begin, p.tensor.end, numTiles,
                     [&](std::uint32_t tile, std::uint64_t) {
                       if (marks.first(tile)) ++counts[tile].steps, ++counts[tile].messages;
                     });
        break;
      default:  // control flow and syncs: counted in the steps they hold
        break;
    }
  }
  return counts;
}

CodeBytes codeBytes(const CodeCounts& c, const CodeMemoryParams& p) {
  CodeBytes b;
  b.vertexCode = wordBytes(double(c.codelets) * p.codeletBytes);
  const bool runsAnything = c.vertices > 0 || c.steps > 0;
  b.vertexState = wordBytes(double(c.fields) * p.fieldBytes + double(c.params) * p.paramBytes +
                            (runsAnything ? p.tileVertexStateBytes : 0));
  b.controlCode = wordBytes(double(c.steps) * p.stepControlBytes);
  b.exchangeCode = wordBytes(double(c.messages) * p.messageExchangeBytes);
  return b;
}

std::vector<CodeBytes> codeBytesPerTile(const Executable& exe, std::uint32_t numTiles, const model::TileParams& tile,
                                        const CodeMemoryParams& params) {
  std::vector<CodeBytes> bytes;
  bytes.reserve(numTiles);
  for (const CodeCounts& c : countCodeOnTiles(exe, numTiles, tile)) bytes.push_back(codeBytes(c, params));
  return bytes;
}

CodeBytes& CodeBytes::operator+=(const CodeBytes& o) {
  vertexCode += o.vertexCode, vertexState += o.vertexState;
  controlCode += o.controlCode, exchangeCode += o.exchangeCode;
  return *this;
}

std::vector<Id> addCodeMemoryTensors(Executable& exe, const std::vector<CodeBytes>& bytes) {
  const auto numTiles = std::uint32_t(bytes.size());

  struct Category {
    const char* tensorName;  // as Poplar's liveness report names it
    const char* category;
    std::uint64_t CodeBytes::*bytes;
  };
  const Category categories[] = {
      {"vertexCode", kVertexCodeCategory, &CodeBytes::vertexCode},
      {"vertexInstanceState", kVertexStateCategory, &CodeBytes::vertexState},
      {"controlCode", kControlCodeCategory, &CodeBytes::controlCode},
      {"exchangeCode", kExchangeCodeCategory, &CodeBytes::exchangeCode},
  };
  std::vector<Id> added;
  for (const Category& cat : categories) {
    Tensor t;
    t.name = cat.tensorName;
    t.category = cat.category;
    t.dtype = DType::UInt;
    t.alwaysLive = true;
    t.debug = {"", "code"};
    std::uint64_t elements = 0;
    for (std::uint32_t tile = 0; tile < numTiles; ++tile) {
      const std::uint64_t n = bytes[tile].*cat.bytes / 4;
      if (n == 0) continue;
      t.mapping.push_back({tile, elements, elements + n, TileInterval::kUnplaced});
      elements += n;
    }
    if (elements == 0) continue;
    t.shape = {elements};
    t.id = Id(exe.tensors.size());
    exe.tensors.push_back(std::move(t));
    added.push_back(exe.tensors.back().id);
  }
  return added;
}

}  // namespace ipusim::ir
