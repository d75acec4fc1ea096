#include "scheduler/multi_ipu/collectives.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

struct Chunk {
  std::uint64_t begin, end;
};

Chunk chunkOf(std::uint64_t elements, std::uint32_t parts, std::uint32_t c) {
  return {elements * c / parts, elements * (c + 1) / parts};
}

std::uint64_t copyElements(const ir::Tensor& t, std::uint32_t replicas, const char* what) {
  if (replicas == 0 || t.numElements() % replicas)
    throw std::invalid_argument(std::string(what) + ": '" + t.name + "' has " + std::to_string(t.numElements()) +
                                " elements, expected a multiple of its " + std::to_string(replicas) + " replicas");
  return t.numElements() / replicas;
}

// The vertices adding received[chunk] into data[chunk], as popops'
// scaledAddTo places them: a tile holding one contiguous piece of the chunk
// gets one ScaledAddSupervisor vertex (its workers split the piece); a tile
// holding several gets ScaledAdd worker vertices, each piece dealt over the
// tile's worker contexts (ScaledAdd2D).
void addChunk(const ir::Tensor& data, ir::Id received, Chunk chunk, std::uint32_t workers,
              std::vector<ir::Vertex>& out) {
  const bool half = data.dtype == ir::DType::Half;
  const std::string supervisor = half ? "ScaledAddSupervisor<half>" : "ScaledAddSupervisor";
  const std::string worker = half ? "ScaledAdd<half>" : "ScaledAdd";
  // The mapping is sorted and disjoint (validated): the chunk's pieces start
  // at the first interval ending after it begins. (Scanning the whole mapping
  // for each chunk cost R^3 intervals per tensor over an all-reduce of R replicas.)
  struct Piece {
    std::uint32_t tile;
    std::uint64_t lo, hi;
  };
  std::vector<Piece> pieces;
  std::map<std::uint32_t, std::uint32_t> piecesOnTile;
  auto it = std::upper_bound(data.mapping.begin(), data.mapping.end(), chunk.begin,
                             [](std::uint64_t v, const ir::TileInterval& iv) { return v < iv.end; });
  for (; it != data.mapping.end() && it->begin < chunk.end; ++it) {
    const std::uint64_t lo = std::max(it->begin, chunk.begin), hi = std::min(it->end, chunk.end);
    if (lo >= hi) continue;
    pieces.push_back({it->tile, lo, hi});
    ++piecesOnTile[it->tile];
  }
  auto vertex = [&](const std::string& codelet, std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
    out.push_back({codelet, tile, {{"data", {data.id, b, e}}, {"deltas", {received, b, e}}}, {{"scale", 1.0}}});
  };
  for (const Piece& p : pieces) {
    if (piecesOnTile[p.tile] == 1) {
      vertex(supervisor, p.tile, p.lo, p.hi);
      continue;
    }
    const std::uint64_t parts = std::min<std::uint64_t>(workers, p.hi - p.lo);
    for (std::uint64_t w = 0; w < parts; ++w) {
      const std::uint64_t b = p.lo + (p.hi - p.lo) * w / parts, e = p.lo + (p.hi - p.lo) * (w + 1) / parts;
      if (b != e) vertex(worker, p.tile, b, e);
    }
  }
}

}  // namespace

std::vector<std::uint32_t> ladderRing(std::uint32_t n) {
  std::vector<std::uint32_t> ring;
  for (std::uint32_t i = 0; i < n; i += 2) ring.push_back(i);
  for (std::uint32_t i = (n % 2 ? n - 2 : n - 1); i < n; i -= 2) {
    ring.push_back(i);
    if (i < 2) break;
  }
  return ring;
}

std::vector<CollectiveStep> ringAllReduce(const ir::Tensor& data, const ir::Tensor& received,
                                          const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts) {
  const std::uint32_t n = std::uint32_t(ring.size());
  const std::uint64_t elements = copyElements(data, n, "all-reduce");
  if (received.numElements() != data.numElements() || received.dtype != data.dtype)
    throw std::invalid_argument("all-reduce: the buffer '" + received.name + "' differs in size or type from '" +
                                data.name + "'");
  std::vector<bool> seen(n, false);
  for (std::uint32_t r : ring) {
    if (r >= n || seen[r]) throw std::invalid_argument("all-reduce: the ring is not a permutation of the replicas");
    seen[r] = true;
  }
  std::vector<CollectiveStep> steps;
  if (n < 2) return steps;
  // Chunk c of replica r's copy: elements r * elements + chunkOf(c).
  auto ref = [&](ir::Id tensor, std::uint32_t replica, Chunk c) {
    return ir::TensorRef{tensor, replica * elements + c.begin, replica * elements + c.end};
  };
  for (std::uint32_t s = 0; s + 1 < n; ++s) {
    CollectiveStep step;
    step.what = "reduce_scatter/" + std::to_string(s);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t from = ring[p], to = ring[(p + 1) % n];
      const Chunk c = chunkOf(elements, n, (p + n - s) % n);
      if (c.begin == c.end) continue;
      step.copy.push_back({ref(data.id, from, c), ref(received.id, to, c)});
      const std::uint64_t at = to * elements;
      addChunk(data, received.id, {at + c.begin, at + c.end}, workerContexts, step.vertices);
    }
    steps.push_back(std::move(step));
  }
  for (std::uint32_t s = 0; s + 1 < n; ++s) {
    CollectiveStep step;
    step.what = "all_gather/" + std::to_string(s);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t from = ring[p], to = ring[(p + 1) % n];
      const Chunk c = chunkOf(elements, n, (p + 1 + n - s) % n);
      if (c.begin == c.end) continue;
      step.copy.push_back({ref(data.id, from, c), ref(data.id, to, c)});
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<CollectiveStep> broadcast(const ir::Tensor& data, std::uint32_t replicas, std::uint32_t root) {
  const std::uint64_t elements = copyElements(data, replicas, "broadcast");
  if (root >= replicas)
    throw std::invalid_argument("broadcast: root replica " + std::to_string(root) + " of " + std::to_string(replicas));
  CollectiveStep step;
  step.what = "broadcast";
  for (std::uint32_t r = 0; r < replicas; ++r)
    if (r != root && elements)
      step.copy.push_back({{data.id, root * elements, (root + 1) * elements}, {data.id, r * elements, (r + 1) * elements}});
  if (step.copy.empty()) return {};
  return {step};
}

}  // namespace ipusim::scheduler
