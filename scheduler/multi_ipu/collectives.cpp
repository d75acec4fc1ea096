#include "scheduler/multi_ipu/collectives.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <stdexcept>
#include <utility>

namespace ipusim::scheduler {
namespace {

std::uint64_t copyElements(const ir::Tensor& t, std::uint32_t replicas, const char* what) {
  if (replicas == 0 || t.numElements() % replicas)
    throw std::invalid_argument(std::string(what) + ": '" + t.name + "' has " + std::to_string(t.numElements()) +
                                " elements, expected a multiple of its " + std::to_string(replicas) + " replicas");
  return t.numElements() / replicas;
}

struct Piece {
  std::uint32_t tile;
  std::uint64_t lo, hi;
};

// The pieces of data[range] (elements of the laid-out tensor), one per
// mapping interval it meets. The mapping is sorted and disjoint
// (validated): the pieces start at the first interval ending after the
// range begins. (Scanning the whole mapping for each chunk cost R^3
// intervals per tensor over an all-reduce of R replicas.)
void piecesOf(const ir::Tensor& data, ElementRange range, std::vector<Piece>& out) {
  auto it = std::upper_bound(data.mapping.begin(), data.mapping.end(), range.begin,
                             [](std::uint64_t v, const ir::TileInterval& iv) { return v < iv.end; });
  for (; it != data.mapping.end() && it->begin < range.end; ++it) {
    const std::uint64_t lo = std::max(it->begin, range.begin), hi = std::min(it->end, range.end);
    if (lo < hi) out.push_back({it->tile, lo, hi});
  }
}

// `pieces` dealt over each tile's worker contexts: vertex(tile, begin, end).
template <typename MakeVertex>
void overWorkers(const std::vector<Piece>& pieces, std::uint32_t workers, MakeVertex vertex) {
  for (const Piece& p : pieces) {
    const std::uint64_t parts = std::min<std::uint64_t>(workers, p.hi - p.lo);
    for (std::uint64_t w = 0; w < parts; ++w) {
      const std::uint64_t b = p.lo + (p.hi - p.lo) * w / parts, e = p.lo + (p.hi - p.lo) * (w + 1) / parts;
      if (b != e) vertex(p.tile, b, e);
    }
  }
}

// The vertices adding received[chunk] into data[chunk] (the chunk's ranges
// offset to replica `at`), as popops' scaledAddTo places them: a tile
// holding one contiguous piece of the chunk gets one ScaledAddSupervisor
// vertex (its workers split the piece); a tile holding several gets
// ScaledAdd worker vertices, each piece dealt over the tile's worker
// contexts (ScaledAdd2D).
void addChunk(const ir::Tensor& data, ir::Id received, const std::vector<ElementRange>& chunk, std::uint64_t at,
              std::uint32_t workers, std::vector<ir::Vertex>& out) {
  const bool half = data.dtype == ir::DType::Half;
  const std::string supervisor = half ? "ScaledAddSupervisor<half>" : "ScaledAddSupervisor";
  const std::string worker = half ? "ScaledAdd<half>" : "ScaledAdd";
  std::vector<Piece> pieces;
  for (const ElementRange& r : chunk) piecesOf(data, {at + r.begin, at + r.end}, pieces);
  std::map<std::uint32_t, std::uint32_t> piecesOnTile;
  for (const Piece& p : pieces) ++piecesOnTile[p.tile];
  auto vertex = [&](const std::string& codelet, std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
    out.push_back({codelet, tile, {{"data", {data.id, b, e}}, {"deltas", {received, b, e}}}, {{"scale", 1.0}}});
  };
  for (const Piece& p : pieces) {
    if (piecesOnTile[p.tile] == 1) vertex(supervisor, p.tile, p.lo, p.hi);
    else overWorkers({p}, workers, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) { vertex(worker, tile, b, e); });
  }
}

void checkRing(const std::vector<std::uint32_t>& ring) {
  std::vector<bool> seen(ring.size(), false);
  for (std::uint32_t r : ring) {
    if (r >= ring.size() || seen[r]) throw std::invalid_argument("all-reduce: the ring is not a permutation of the replicas");
    seen[r] = true;
  }
}

// A ring over some of the tensor's `replicas`: distinct replicas, each < replicas.
void checkSubRing(const std::vector<std::uint32_t>& ring, std::uint32_t replicas) {
  std::vector<bool> seen(replicas, false);
  for (std::uint32_t r : ring) {
    if (r >= replicas || seen[r])
      throw std::invalid_argument("collective: replica " + std::to_string(r) +
                                  " is twice in the ring or not one of the " + std::to_string(replicas) + " replicas");
    seen[r] = true;
  }
}

void checkChunks(const Chunks& chunks, std::uint32_t n) {
  if (chunks.size() != n)
    throw std::invalid_argument("collective: " + std::to_string(chunks.size()) + " chunks for " + std::to_string(n) +
                                " replicas");
}

bool empty(const std::vector<ElementRange>& chunk) {
  return std::all_of(chunk.begin(), chunk.end(), [](const ElementRange& r) { return r.begin == r.end; });
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

Chunks contiguousChunks(std::uint64_t elements, std::uint32_t parts) {
  Chunks chunks(parts);
  for (std::uint32_t c = 0; c < parts; ++c) chunks[c].push_back({elements * c / parts, elements * (c + 1) / parts});
  return chunks;
}

Chunks perIntervalChunks(const std::vector<ir::TileInterval>& mapping, std::uint32_t parts) {
  Chunks chunks(parts);
  for (const ir::TileInterval& iv : mapping) {
    const std::uint64_t n = iv.end - iv.begin;
    for (std::uint32_t c = 0; c < parts; ++c) chunks[c].push_back({iv.begin + n * c / parts, iv.begin + n * (c + 1) / parts});
  }
  return chunks;
}

std::uint32_t ownedChunk(const std::vector<std::uint32_t>& ring, std::uint32_t replica) {
  const auto at = std::find(ring.begin(), ring.end(), replica);
  if (at == ring.end()) throw std::invalid_argument("collective: replica " + std::to_string(replica) + " is not in the ring");
  return std::uint32_t((at - ring.begin() + 1) % ring.size());
}

std::vector<CollectiveStep> ringReduceScatter(const ir::Tensor& data, const ir::Tensor& received,
                                              const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                              const Chunks& chunks) {
  checkRing(ring);
  return ringReduceScatterOver(data, received, std::uint32_t(ring.size()), ring, workerContexts, chunks);
}

std::vector<CollectiveStep> ringReduceScatterOver(const ir::Tensor& data, const ir::Tensor& received,
                                                  std::uint32_t replicas, const std::vector<std::uint32_t>& ring,
                                                  std::uint32_t workerContexts, const Chunks& chunks) {
  const std::uint32_t n = std::uint32_t(ring.size());
  const std::uint64_t elements = copyElements(data, replicas, "all-reduce");
  if (received.numElements() != data.numElements() || received.dtype != data.dtype)
    throw std::invalid_argument("all-reduce: the buffer '" + received.name + "' differs in size or type from '" +
                                data.name + "'");
  checkSubRing(ring, replicas);
  checkChunks(chunks, n);
  std::vector<CollectiveStep> steps;
  if (n < 2) return steps;
  for (std::uint32_t s = 0; s + 1 < n; ++s) {
    CollectiveStep step;
    step.what = "reduce_scatter/" + std::to_string(s);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t from = ring[p], to = ring[(p + 1) % n];
      const std::vector<ElementRange>& chunk = chunks[(p + n - s) % n];
      if (empty(chunk)) continue;
      for (const ElementRange& r : chunk)
        if (r.begin != r.end)
          step.copy.push_back({{data.id, from * elements + r.begin, from * elements + r.end},
                               {received.id, to * elements + r.begin, to * elements + r.end}});
      addChunk(data, received.id, chunk, to * elements, workerContexts, step.vertices);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<CollectiveStep> ringAllGather(const ir::Tensor& data, const std::vector<std::uint32_t>& ring, const Chunks& chunks) {
  checkRing(ring);
  return ringAllGatherOver(data, std::uint32_t(ring.size()), ring, chunks);
}

std::vector<CollectiveStep> ringAllGatherOver(const ir::Tensor& data, std::uint32_t replicas,
                                              const std::vector<std::uint32_t>& ring, const Chunks& chunks) {
  const std::uint32_t n = std::uint32_t(ring.size());
  const std::uint64_t elements = copyElements(data, replicas, "all-gather");
  checkSubRing(ring, replicas);
  checkChunks(chunks, n);
  std::vector<CollectiveStep> steps;
  if (n < 2) return steps;
  for (std::uint32_t s = 0; s + 1 < n; ++s) {
    CollectiveStep step;
    step.what = "all_gather/" + std::to_string(s);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t from = ring[p], to = ring[(p + 1) % n];
      for (const ElementRange& r : chunks[(p + 1 + n - s) % n])
        if (r.begin != r.end)
          step.copy.push_back({{data.id, from * elements + r.begin, from * elements + r.end},
                               {data.id, to * elements + r.begin, to * elements + r.end}});
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<CollectiveStep> ringAllReduce(const ir::Tensor& data, const ir::Tensor& received,
                                          const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts) {
  const std::uint32_t n = std::uint32_t(ring.size());
  const Chunks chunks = contiguousChunks(copyElements(data, n, "all-reduce"), n);
  std::vector<CollectiveStep> steps = ringReduceScatter(data, received, ring, workerContexts, chunks);
  for (CollectiveStep& step : ringAllGather(data, ring, chunks)) steps.push_back(std::move(step));
  return steps;
}

CollectiveStep scaleOwnedChunks(const ir::Tensor& data, const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                const Chunks& chunks, double scale) {
  checkRing(ring);
  return scaleOwnedChunksOver(data, std::uint32_t(ring.size()), ring, workerContexts, chunks, scale);
}

CollectiveStep scaleOwnedChunksOver(const ir::Tensor& data, std::uint32_t replicas,
                                    const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                    const Chunks& chunks, double scale) {
  const std::uint32_t n = std::uint32_t(ring.size());
  const std::uint64_t elements = copyElements(data, replicas, "mean");
  checkSubRing(ring, replicas);
  checkChunks(chunks, n);
  const std::string codelet = data.dtype == ir::DType::Half ? "Scale<half>" : "Scale";
  CollectiveStep step;
  step.what = "mean";
  std::vector<std::uint32_t> inOrder = ring;  // replica order, as the vertices of every tile always were
  std::sort(inOrder.begin(), inOrder.end());
  for (std::uint32_t r : inOrder) {
    std::vector<Piece> pieces;
    for (const ElementRange& range : chunks[ownedChunk(ring, r)])
      piecesOf(data, {r * elements + range.begin, r * elements + range.end}, pieces);
    overWorkers(pieces, workerContexts, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      step.vertices.push_back({codelet, tile, {{"data", {data.id, b, e}}}, {{"scale", scale}}});
    });
  }
  return step;
}

void mergeSteps(std::vector<CollectiveStep>& merged, std::vector<CollectiveStep> steps) {
  if (merged.size() < steps.size()) merged.resize(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    merged[s].what = std::move(steps[s].what);
    merged[s].copy.insert(merged[s].copy.end(), steps[s].copy.begin(), steps[s].copy.end());
    merged[s].vertices.insert(merged[s].vertices.end(), std::make_move_iterator(steps[s].vertices.begin()),
                              std::make_move_iterator(steps[s].vertices.end()));
  }
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
