#include "scheduler/planning/memory_plan.hpp"

#include "model/ir/tile_memory_usage.hpp"
#include "scheduler/planning/live_peak.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

constexpr std::uint64_t kAlign = 8;
std::uint64_t alignUp(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// First fit over the blocks alive at once on one tile, by address. Tensors
// come in order of first use, so a block whose life ended before the next
// tensor's begins can overlap no later one: it is freed. Every block still
// alive overlaps the next tensor's life, so the lowest address it fits at
// is the start of the lowest free gap between alive blocks that is large
// enough, else the end of the highest. The gaps are kept (merged as blocks
// free), so placing costs the gaps, not every block alive (thousands when a
// deep model's activations all wait for the backward pass).
class FirstFit {
 public:
  explicit FirstFit(std::uint64_t floor) : floor_(floor) {}

  std::uint64_t place(std::uint64_t bytes, std::size_t first, std::size_t last) {
    while (!expiry_.empty() && expiry_.top().first < first) {
      free(expiry_.top().second);
      expiry_.pop();
    }
    std::uint64_t address = top();
    for (auto it = gaps_.begin(); it != gaps_.end(); ++it)
      if (it->first + bytes <= it->second) {
        address = it->first;
        const std::uint64_t end = alignUp(address + bytes), gapEnd = it->second;
        gaps_.erase(it);
        if (end < gapEnd) gaps_[end] = gapEnd;
        break;
      }
    blocks_[address] = alignUp(address + bytes);
    expiry_.push({last, address});
    return address;
  }

 private:
  std::uint64_t top() const { return blocks_.empty() ? floor_ : blocks_.rbegin()->second; }

  void free(std::uint64_t address) {
    const auto it = blocks_.find(address);
    std::uint64_t start = address, end = it->second;
    blocks_.erase(it);
    if (const auto next = gaps_.find(end); next != gaps_.end()) end = next->second, gaps_.erase(next);
    if (auto prev = gaps_.lower_bound(start); prev != gaps_.begin() && (--prev)->second == start)
      start = prev->first, gaps_.erase(prev);
    if (start < top()) gaps_[start] = end;  // else it joins the free space above the highest block
  }

  std::uint64_t floor_;
  std::map<std::uint64_t, std::uint64_t> blocks_;  // address -> aligned end
  std::map<std::uint64_t, std::uint64_t> gaps_;    // free [start, end) below the highest block
  using Expiry = std::pair<std::size_t, std::uint64_t>;  // last use, address
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiry_;
};

// What the worst tile holds: its always-live bytes by category and what is
// live at once at its not-always-live peak.
std::string worstTileContents(const ir::Executable& exe, const WorstTile& worst) {
  std::string s = "\nTile " + std::to_string(worst.usage.tile) + " holds always live:";
  bool first = true;
  for (const ir::CategoryBytes& c : worst.usage.categories)
    if (c.alwaysLive) s += (first ? " " : ", ") + c.category + " " + std::to_string(c.bytes), first = false;
  if (first) s += " nothing";
  const std::string peak = describeLivePeak(exe, worst.peak, worst.usage.notAlwaysLivePeakBytes);
  if (!peak.empty()) s += "; " + peak;
  return s + ".";
}

MemoryPlanResult figuresAndCheck(const ir::Executable& exe, std::uint32_t numTiles, std::uint32_t countedTiles,
                                 std::uint64_t capacity, bool allowOutOfMemory,
                                 const OutOfMemoryRemedy& remedy, const std::vector<UseSpan>* useSpan) {
  // Every figure and the check come from THE per-tile figure
  // (ir::tileMemoryUsage), the one the profile, `ipusim report` and the
  // viewer show, and the check words it as Poplar's summary does.
  // The figures first, without each tile's largest tensors; those only when a tile is over.
  const auto counted = [&](std::size_t largestPerTile) {
    std::vector<ir::TileMemoryUsage> usage = ir::tileMemoryUsage(exe.tensors, numTiles, largestPerTile);
    usage.erase(std::find_if(usage.begin(), usage.end(),
                             [&](const ir::TileMemoryUsage& u) { return u.tile >= countedTiles; }),
                usage.end());  // (in tile order)
    return usage;
  };
  const std::vector<ir::TileMemoryUsage> usage = counted(0);
  MemoryPlanResult r;
  std::uint64_t sum = 0;
  for (const ir::TileMemoryUsage& u : usage) {
    ++r.tilesUsed;
    sum += u.peakBytes;
    r.maxTileBytes = std::max(r.maxTileBytes, u.peakBytes);
  }
  r.meanTileBytes = r.tilesUsed ? double(sum) / r.tilesUsed : 0;
  r.tilesOverCapacity = std::uint32_t(ir::findOutOfMemory(usage, capacity).tilesOver);
  if (r.tilesOverCapacity == 0 || allowOutOfMemory) return r;
  const ir::OutOfMemory oom = ir::findOutOfMemory(counted(5), capacity);
  WorstTile worst{oom.worst.front(), {}};
  if (useSpan) worst.peak = livePeakOnTile(exe, *useSpan, worst.usage.tile);
  const std::string ways = remedy ? remedy(worst) : "";
  throw std::invalid_argument(ir::outOfMemorySummary(oom, capacity, countedTiles, "the compiled workload") +
                              worstTileContents(exe, worst) + "\nReduce the model or the batch, " +
                              (ways.empty() ? "lower ipu.available_memory_proportion" : ways) +
                              ", or set compile.allow_out_of_memory to compile anyway.");
}

}  // namespace

MemoryPlanResult planMemory(ir::Executable& exe, const std::vector<std::pair<std::size_t, std::size_t>>& useSpan,
                            std::uint32_t numTiles, std::uint64_t capacity, bool allowOutOfMemory,
                            const OutOfMemoryRemedy& remedy) {
  // Per tile, the bytes each tensor needs there (its intervals are laid out
  // one after another), in tensor order. Flat arrays indexed by tile: a
  // ResNet-50 step maps millions of intervals, and maps keyed by tile and
  // tensor spent most of the plan chasing pointers.
  std::vector<std::vector<std::pair<ir::Id, std::uint64_t>>> need(numTiles);
  std::vector<std::uint64_t> onTile(numTiles, 0);  // scratch: one tensor's bytes (then cursor) per tile
  std::vector<std::uint32_t> touched;
  auto forEachTile = [&](const ir::Tensor& t, auto&& visit) {  // sums t's bytes per tile, visits, clears
    for (const auto& iv : t.mapping) {
      if (iv.tile >= numTiles) throw std::out_of_range("planMemory: tensor '" + t.name + "' on tile " + std::to_string(iv.tile));
      if (onTile[iv.tile] == 0) touched.push_back(iv.tile);
      onTile[iv.tile] += (iv.end - iv.begin) * ir::sizeOf(t.dtype);
    }
    for (std::uint32_t tile : touched) visit(tile, onTile[tile]), onTile[tile] = 0;
    touched.clear();
  };
  for (const ir::Tensor& t : exe.tensors)
    forEachTile(t, [&](std::uint32_t tile, std::uint64_t bytes) { need[tile].push_back({t.id, bytes}); });

  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> baseOf(exe.tensors.size());  // per tensor: (tile, address)
  for (std::uint32_t tile = 0; tile < numTiles; ++tile) {
    std::uint64_t bump = 0;
    std::vector<std::pair<ir::Id, std::uint64_t>> shared;
    for (auto [id, bytes] : need[tile]) {
      if (exe.tensors[id].alwaysLive) baseOf[id].push_back({tile, bump}), bump = alignUp(bump + bytes);
      else shared.push_back({id, bytes});
    }
    // First fit by start of life: the lowest address clear of every block
    // whose lifetime overlaps.
    std::sort(shared.begin(), shared.end(), [&](auto& a, auto& b) {
      return useSpan[a.first].first != useSpan[b.first].first ? useSpan[a.first].first < useSpan[b.first].first
                                                              : a.first < b.first;
    });
    FirstFit fit(bump);
    for (auto [id, bytes] : shared) baseOf[id].push_back({tile, fit.place(bytes, useSpan[id].first, useSpan[id].second)});
  }
  // Addresses of the intervals: consecutive within the tensor's bytes on the tile.
  for (ir::Tensor& t : exe.tensors) {
    for (auto [tile, address] : baseOf[t.id]) onTile[tile] = address;
    for (auto& iv : t.mapping) {
      iv.address = onTile[iv.tile];
      onTile[iv.tile] += (iv.end - iv.begin) * ir::sizeOf(t.dtype);
    }
    for (auto [tile, address] : baseOf[t.id]) onTile[tile] = 0;
  }
  return figuresAndCheck(exe, numTiles, numTiles, capacity, allowOutOfMemory, remedy, &useSpan);
}

MemoryPlanResult placeAfterPlan(ir::Executable& exe, std::uint32_t numTiles, std::uint32_t countedTiles,
                                std::uint64_t capacity, bool allowOutOfMemory,
                                const OutOfMemoryRemedy& remedy) {
  // By the model's load's own rule (ir::placeAboveTop), in tensor order
  // above everything placed, so that the profile shows these same addresses.
  std::vector<std::uint64_t> top(numTiles, 0);
  for (const ir::Tensor& t : exe.tensors)
    for (const ir::TileInterval& iv : t.mapping)
      if (iv.address != ir::TileInterval::kUnplaced && iv.tile < numTiles)
        top[iv.tile] = std::max(top[iv.tile], iv.address + (iv.end - iv.begin) * ir::sizeOf(t.dtype));
  for (ir::Tensor& t : exe.tensors) ir::placeAboveTop(t.mapping, t.dtype, top);
  return figuresAndCheck(exe, numTiles, countedTiles, capacity, allowOutOfMemory, remedy, nullptr);
}

}  // namespace ipusim::scheduler
