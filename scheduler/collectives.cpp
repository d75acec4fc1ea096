#include "scheduler/collectives.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

struct Chunk {
  std::uint64_t begin, end;
};

Chunk chunkOf(std::uint64_t elements, std::uint32_t parts, std::uint32_t c) {
  return {elements * c / parts, elements * (c + 1) / parts};
}

void checkCopies(const std::vector<ir::Tensor>& tensors, const std::vector<ir::Id>& ids, const char* what) {
  for (ir::Id id : ids) {
    if (id >= tensors.size()) throw std::invalid_argument(std::string(what) + ": tensor " + std::to_string(id) + " does not exist");
    const ir::Tensor& t = tensors[id];
    const ir::Tensor& first = tensors[ids.front()];
    if (t.numElements() != first.numElements() || t.dtype != first.dtype)
      throw std::invalid_argument(std::string(what) + ": '" + t.name + "' differs in size or type from '" + first.name +
                                  "' (every replica's copy must match)");
  }
}

// ScaledAdd vertices adding received[chunk] into data[chunk], per tile piece
// of data's mapping, each piece dealt over the tile's worker contexts.
void addChunk(const ir::Tensor& data, ir::Id received, Chunk chunk, std::uint32_t workers,
              std::vector<ir::Vertex>& out) {
  const std::string codelet = data.dtype == ir::DType::Half ? "ScaledAdd<half>" : "ScaledAdd";
  for (const ir::TileInterval& iv : data.mapping) {
    const std::uint64_t lo = std::max(iv.begin, chunk.begin), hi = std::min(iv.end, chunk.end);
    if (lo >= hi) continue;
    const std::uint64_t parts = std::min<std::uint64_t>(workers, hi - lo);
    for (std::uint64_t w = 0; w < parts; ++w) {
      const std::uint64_t b = lo + (hi - lo) * w / parts, e = lo + (hi - lo) * (w + 1) / parts;
      if (b == e) continue;
      out.push_back({codelet, iv.tile, {{"data", {data.id, b, e}}, {"deltas", {received, b, e}}}, {{"scale", 1.0}}});
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

std::vector<CollectiveStep> ringAllReduce(const std::vector<ir::Tensor>& tensors, const std::vector<ir::Id>& replicas,
                                          const std::vector<ir::Id>& received, const std::vector<std::uint32_t>& ring,
                                          std::uint32_t workerContexts) {
  const std::uint32_t n = std::uint32_t(replicas.size());
  if (received.size() != n || ring.size() != n)
    throw std::invalid_argument("all-reduce: " + std::to_string(n) + " replicas need as many buffers and ring positions");
  checkCopies(tensors, replicas, "all-reduce");
  checkCopies(tensors, received, "all-reduce");
  for (std::uint32_t r : ring)
    if (r >= n) throw std::invalid_argument("all-reduce: ring position names replica " + std::to_string(r));
  std::vector<CollectiveStep> steps;
  if (n < 2) return steps;
  const std::uint64_t elements = tensors[replicas.front()].numElements();
  for (std::uint32_t s = 0; s + 1 < n; ++s) {
    CollectiveStep step;
    step.what = "reduce_scatter/" + std::to_string(s);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t from = ring[p], to = ring[(p + 1) % n];
      const Chunk c = chunkOf(elements, n, (p + n - s) % n);
      if (c.begin == c.end) continue;
      step.copy.push_back({{replicas[from], c.begin, c.end}, {received[to], c.begin, c.end}});
      addChunk(tensors[replicas[to]], received[to], c, workerContexts, step.vertices);
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
      step.copy.push_back({{replicas[from], c.begin, c.end}, {replicas[to], c.begin, c.end}});
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<CollectiveStep> broadcast(const std::vector<ir::Tensor>& tensors, const std::vector<ir::Id>& replicas,
                                      std::uint32_t root) {
  checkCopies(tensors, replicas, "broadcast");
  if (root >= replicas.size())
    throw std::invalid_argument("broadcast: root replica " + std::to_string(root) + " of " +
                                std::to_string(replicas.size()));
  CollectiveStep step;
  step.what = "broadcast";
  const std::uint64_t elements = tensors[replicas[root]].numElements();
  for (std::uint32_t r = 0; r < replicas.size(); ++r)
    if (r != root) step.copy.push_back({{replicas[root], 0, elements}, {replicas[r], 0, elements}});
  if (step.copy.empty()) return {};
  return {step};
}

}  // namespace ipusim::scheduler
