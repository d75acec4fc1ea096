#include "model/hardware/exchange_fabric.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace ipusim::model::hardware {
namespace {

using Range = std::pair<std::uint64_t, std::uint64_t>;  // [first, second) bytes

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Sorted, merged union of byte ranges.
std::vector<Range> unite(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && r.first <= out.back().second)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

std::uint64_t overlap(const std::vector<Range>& a, const std::vector<Range>& b) {
  std::uint64_t n = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first);
    const std::uint64_t hi = std::min(a[i].second, b[j].second);
    if (lo < hi) n += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return n;
}

// True when no destination byte range meets another destination or any source.
bool independent(const std::vector<ExchangeTransfer>& transfers) {
  using Span = std::pair<std::uintptr_t, std::uintptr_t>;
  std::vector<Span> dst, src;
  for (const ExchangeTransfer& t : transfers) {
    dst.push_back({std::uintptr_t(t.dst), std::uintptr_t(t.dst) + t.bytes});
    src.push_back({std::uintptr_t(t.src), std::uintptr_t(t.src) + t.bytes});
  }
  std::sort(dst.begin(), dst.end());
  for (std::size_t i = 1; i < dst.size(); ++i)
    if (dst[i].first < dst[i - 1].second) return false;
  for (const Span& s : src) {
    // The first destination ending after s begins; it must start at or after s ends.
    auto it = std::upper_bound(dst.begin(), dst.end(), s.first,
                               [](std::uintptr_t v, const Span& d) { return v < d.second; });
    if (it != dst.end() && it->first < s.second) return false;
  }
  return true;
}

// Joins transfers that continue each other in both source and destination.
std::vector<ExchangeTransfer> mergeContiguous(const std::vector<ExchangeTransfer>& transfers) {
  std::vector<ExchangeTransfer> out;
  for (const ExchangeTransfer& t : transfers) {
    if (!out.empty() && out.back().src + out.back().bytes == t.src && out.back().dst + out.back().bytes == t.dst)
      out.back().bytes += t.bytes;
    else
      out.push_back(t);
  }
  return out;
}

std::string copyProgramName(const ir::Program& p) {
  return "programs[" + std::to_string(p.id) + "] '" + p.name + "' (Copy)";
}

// Checks one region pair of `copy`; returns its element size in bytes.
std::size_t checkRegion(const std::string& where, const ir::CopyRegion& region, const MemoryLayout& memory) {
  for (const ir::TensorRef* ref : {&region.src, &region.dst}) {
    if (ref->tensor >= memory.numTensors())
      throw std::invalid_argument(where + ": refers to tensor " + std::to_string(ref->tensor) +
                                  ", which does not exist");
    if (ref->begin > ref->end || ref->end > memory.tensor(ref->tensor).numElements())
      throw std::invalid_argument(where + ": region [" + std::to_string(ref->begin) + ", " +
                                  std::to_string(ref->end) + ") is outside tensor '" +
                                  memory.tensor(ref->tensor).name + "'");
  }
  const ir::Tensor& srcTensor = memory.tensor(region.src.tensor);
  const ir::Tensor& dstTensor = memory.tensor(region.dst.tensor);
  if (srcTensor.dtype != dstTensor.dtype)
    throw std::invalid_argument(where + ": src '" + srcTensor.name + "' is " + ir::toString(srcTensor.dtype) +
                                " but dst '" + dstTensor.name + "' is " + ir::toString(dstTensor.dtype));
  if (region.src.size() != region.dst.size())
    throw std::invalid_argument(where + ": dst has " + std::to_string(region.dst.size()) +
                                " elements, expected src's " + std::to_string(region.src.size()));
  return ir::sizeOf(srcTensor.dtype);
}

}  // namespace

ExchangeFabric::ExchangeFabric(const Target& target) : target_(target), link_(target) {}

ExchangePlan ExchangeFabric::plan(const ir::Program& copy, const MemoryLayout& memory,
                                  const ir::ReplicaMirror& mirror) const {
  const std::string where = copyProgramName(copy);
  const std::vector<ir::CopyRegion> regions = ir::copyRegions(copy);
  const std::uint32_t numIpus = target_.numIpus();

  ExchangePlan plan;
  plan.ipuUsesLink.assign(numIpus, false);
  plan.ipuReceivedBytes.assign(numIpus, 0);
  std::map<std::uint32_t, ExchangeTileTraffic> traffic;
  // Per sender, per destination pair (tile / 2): source byte ranges sent to the
  // even [0] and odd [1] member, to find bytes the pair receives twice.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Range>[2]> pairRanges;
  IpuLink::Flows linkBytes;
  std::vector<ExchangeTransfer> transfers;  // functional mode: the byte moves, in region order
  std::map<std::uint32_t, std::uint64_t> onChipReceived;  // from other tiles, of this IPU or over IPU-Links
  bool crossesTiles = false;

  // All regions form one phase: their traffic adds up per tile before timing.
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const ir::CopyRegion& region = regions[r];
    const std::string regionWhere = regions.size() > 1 ? where + " regions[" + std::to_string(r) + "]" : where;
    const std::size_t elem = checkRegion(regionWhere, region, memory);
    const auto srcPieces = memory.pieces(region.src);
    const auto dstPieces = memory.pieces(region.dst);
    std::size_t i = 0, j = 0;
    std::uint64_t at = 0;  // element offset within the region
    while (i < srcPieces.size() && j < dstPieces.size()) {
      const RegionPiece& s = srcPieces[i];
      const RegionPiece& d = dstPieces[j];
      const std::uint64_t sEnd = s.offset + s.elements, dEnd = d.offset + d.elements;
      const std::uint64_t end = std::min(sEnd, dEnd);
      const std::uint64_t bytes = (end - at) * elem;
      const std::uint64_t srcAddress = s.address + (at - s.offset) * elem;
      const std::uint64_t dstAddress = d.address + (at - d.offset) * elem;
      const std::uint32_t srcIpu = target_.ipuOf(s.tile), dstIpu = target_.ipuOf(d.tile);
      plan.totalBytes += bytes;
      plan.ipuReceivedBytes[dstIpu] += bytes;
      traffic[d.tile].receivedBytes += bytes;
      if (s.tile == d.tile) {
        traffic[d.tile].localBytes += bytes;
      } else if (srcIpu == dstIpu) {
        crossesTiles = true;
        onChipReceived[d.tile] += bytes;
        traffic[s.tile];  // a sender appears even if pairing makes it send little
        pairRanges[{s.tile, d.tile / 2}][d.tile % 2].push_back({srcAddress, srcAddress + bytes});
      } else {
        // Off-chip bytes leave through the sending tile's exchange port and
        // enter through the receiving tile's, as on-chip bytes do.
        crossesTiles = true;
        linkBytes[{srcIpu, dstIpu}] += bytes;
        plan.ipuUsesLink[srcIpu] = plan.ipuUsesLink[dstIpu] = true;
        traffic[s.tile].sentBytes += bytes;
        onChipReceived[d.tile] += bytes;
      }
      if (memory.functional())
        transfers.push_back({memory.pointer(s) + (srcAddress - s.address),
                             memory.pointer(d) + (dstAddress - d.address), bytes});
      at = end;
      if (sEnd == end) ++i;
      if (dEnd == end) ++j;
    }
  }

  const std::uint32_t factor = std::max<std::uint32_t>(1, target_.exchange.pairedReceiveFactor);
  for (auto& [key, ranges] : pairRanges) {
    // Raw bytes first: the same bytes sent twice to one tile are sent twice.
    std::uint64_t raw = 0;
    for (const auto& member : ranges)
      for (const Range& r : member) raw += r.second - r.first;
    const std::uint64_t shared = overlap(unite(std::move(ranges[0])), unite(std::move(ranges[1])));
    // Bytes both members receive cost the sender 2S / factor instead of 2S.
    traffic[key.first].sentBytes += raw - 2 * shared + ceilDiv(2 * shared, factor);
  }

  if (mirror.copy(copy.id)) {
    // Replica 0's traffic stands for every replica's (ir::ReplicaMirror):
    // replica k's tiles move the same bytes k x tilesPerReplica tiles
    // further, its IPU pairs k x (tilesPerReplica / tilesPerIpu) IPUs
    // further; the link part is then timed over every replica's flows.
    if (memory.functional())
      throw std::logic_error(where + ": a mirrored Copy holds replica 0's regions only; it cannot move data");
    const std::uint32_t tileShift = mirror.tilesPerReplica, ipuShift = tileShift / target_.tile.tilesPerIpu;
    const std::uint32_t replicas = mirror.replicas;
    if (!traffic.empty() && traffic.rbegin()->first >= tileShift)
      throw std::invalid_argument(where + ": mirrored, but reaches tile " + std::to_string(traffic.rbegin()->first) +
                                  ", outside replica 0's " + std::to_string(tileShift) + " tiles");
    const auto oneTraffic = traffic;
    const auto oneReceived = onChipReceived;
    const IpuLink::Flows oneLink = linkBytes;
    const std::vector<std::uint64_t> oneIpuBytes = plan.ipuReceivedBytes;
    for (std::uint32_t k = 1; k < replicas; ++k) {
      for (const auto& [tile, t] : oneTraffic) traffic[tile + k * tileShift] = t;
      for (const auto& [tile, bytes] : oneReceived) onChipReceived[tile + k * tileShift] = bytes;
      for (const auto& [pair, bytes] : oneLink) {
        linkBytes[{pair.first + k * ipuShift, pair.second + k * ipuShift}] = bytes;
        plan.ipuUsesLink[pair.first + k * ipuShift] = plan.ipuUsesLink[pair.second + k * ipuShift] = true;
      }
      for (std::uint32_t ipu = 0; ipu < ipuShift; ++ipu) plan.ipuReceivedBytes[ipu + k * ipuShift] = oneIpuBytes[ipu];
    }
    plan.totalBytes *= replicas;
  }

  const std::uint64_t bpc = target_.exchange.bytesPerCycle;
  if (crossesTiles && bpc == 0)
    throw std::invalid_argument(where + ": exchange.bytesPerCycle is 0, expected a positive bandwidth");
  const std::uint64_t vectorBytes = std::max<std::uint32_t>(1, target_.tile.vectorBytes);
  std::vector<bool> involved(numIpus, false);
  plan.tiles.reserve(traffic.size());
  for (auto& [tile, t] : traffic) {
    t.tile = tile;
    const std::uint64_t received = onChipReceived.count(tile) ? onChipReceived[tile] : 0;
    t.cycles = (bpc ? ceilDiv(std::max(t.sentBytes, received), bpc) : 0) + ceilDiv(t.localBytes, vectorBytes);
    plan.onChipCycles = std::max(plan.onChipCycles, t.cycles);
    involved[target_.ipuOf(tile)] = true;
    plan.tiles.push_back(t);
  }
  if (crossesTiles) plan.onChipCycles += target_.exchange.latencyCycles;
  for (std::uint32_t ipu = 0; ipu < numIpus; ++ipu)
    if (involved[ipu]) plan.ipus.push_back(ipu);
  try {
    plan.linkCycles = link_.phaseCycles(linkBytes);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
  plan.cycles = std::max(plan.onChipCycles, plan.linkCycles);
  const bool independentMoves = independent(transfers);
  plan.copies = CopyRuns(independentMoves ? mergeContiguous(transfers) : transfers, independentMoves);
  return plan;
}

void ExchangeFabric::execute(const ExchangePlan& plan) { plan.copies.execute(); }

void ExchangeFabric::executePart(const ExchangePlan& plan, unsigned part, unsigned parts) {
  plan.copies.executePart(part, parts);
}

}  // namespace ipusim::model::hardware
