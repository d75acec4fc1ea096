#include "model/hardware/exchange_fabric.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace ipusim::model::hardware {
namespace {

using Range = std::pair<std::uint64_t, std::uint64_t>;  // [first, second) bytes

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

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

// On-chip bytes sent from one tile to another, as source byte ranges: sorted
// by sender, then receiver pair (tile / 2), then member (even, odd), they
// give the bytes a pair receives twice from one sender (paired receive).
struct SentRange {
  std::uint32_t sender, receiver;
  Range bytes;
  bool operator<(const SentRange& o) const {
    return std::tie(sender, receiver, bytes) < std::tie(o.sender, o.receiver, o.bytes);
  }
};

// Sorts `ranges` (senders below `tiles`): by sender in one counting pass,
// then each sender's ranges apart — a big model's gathers hold millions of
// ranges and one sort of them all was a fifth of its load time.
void sortBySender(std::vector<SentRange>& ranges, std::uint32_t tiles) {
  std::vector<std::size_t> start(std::size_t(tiles) + 1, 0);
  for (const SentRange& r : ranges) ++start[r.sender + 1];
  for (std::uint32_t t = 0; t < tiles; ++t) start[t + 1] += start[t];
  std::vector<SentRange> sorted(ranges.size());
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (const SentRange& r : ranges) sorted[next[r.sender]++] = r;
  for (std::uint32_t t = 0; t < tiles; ++t) std::sort(sorted.begin() + start[t], sorted.begin() + start[t + 1]);
  ranges = std::move(sorted);
}

// The union of the ranges [first, last) (sorted by start) into `out` (cleared first).
void uniteSorted(const SentRange* first, const SentRange* last, std::vector<Range>& out) {
  out.clear();
  for (const SentRange* r = first; r != last; ++r) {
    if (!out.empty() && r->bytes.first <= out.back().second)
      out.back().second = std::max(out.back().second, r->bytes.second);
    else
      out.push_back(r->bytes);
  }
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
// `where()` names it, called only for an error (a Copy may have millions of rows).
template <class Where>
std::size_t checkRegion(const Where& where, const ir::CopyRegion& region, const MemoryLayout& memory) {
  for (const ir::TensorRef* ref : {&region.src, &region.dst}) {
    if (ref->tensor >= memory.numTensors())
      throw std::invalid_argument(where() + ": refers to tensor " + std::to_string(ref->tensor) +
                                  ", which does not exist");
    if (ref->begin > ref->end || ref->end > memory.tensor(ref->tensor).numElements())
      throw std::invalid_argument(where() + ": region [" + std::to_string(ref->begin) + ", " +
                                  std::to_string(ref->end) + ") is outside tensor '" +
                                  memory.tensor(ref->tensor).name + "'");
  }
  const ir::Tensor& srcTensor = memory.tensor(region.src.tensor);
  const ir::Tensor& dstTensor = memory.tensor(region.dst.tensor);
  if (srcTensor.dtype != dstTensor.dtype)
    throw std::invalid_argument(where() + ": src '" + srcTensor.name + "' is " + ir::toString(srcTensor.dtype) +
                                " but dst '" + dstTensor.name + "' is " + ir::toString(dstTensor.dtype));
  if (region.src.size() != region.dst.size())
    throw std::invalid_argument(where() + ": dst has " + std::to_string(region.dst.size()) +
                                " elements, expected src's " + std::to_string(region.src.size()));
  return ir::sizeOf(srcTensor.dtype);
}

}  // namespace

ExchangeFabric::ExchangeFabric(const Target& target) : target_(target), link_(target) {}

ExchangePlan ExchangeFabric::plan(const ir::Program& copy, const MemoryLayout& memory,
                                  const ir::ReplicaMirror& mirror) const {
  const std::string where = copyProgramName(copy);
  // The region pairs, each 2-D region taken row by row as ir::copyRegions()
  // lists them, without building that list (a big model's gathers have
  // millions of rows: 15.8 M in mlp_4096's 56 Copies).
  const std::vector<ir::CopyRegion> single = {ir::CopyRegion{copy.src, copy.dst}};
  const std::vector<ir::CopyRegion>& regions = copy.regions.empty() ? single : copy.regions;
  std::uint64_t totalRows = 0;
  for (const ir::CopyRegion& region : regions) totalRows += std::max<std::uint64_t>(1, region.rows);
  const std::uint32_t numIpus = target_.numIpus();

  ExchangePlan plan;
  plan.ipuUsesLink.assign(numIpus, false);
  plan.ipuReceivedBytes.assign(numIpus, 0);
  std::map<std::uint32_t, ExchangeTileTraffic> traffic;
  std::vector<SentRange> sentRanges;  // on-chip, to find bytes a pair receives twice
  IpuLink::Flows linkBytes;
  std::vector<ExchangeTransfer> transfers;  // functional mode: the byte moves, in region order
  std::map<std::uint32_t, std::uint64_t> onChipReceived;  // from other tiles, of this IPU or over IPU-Links
  bool crossesTiles = false;
  // Per-tile sums while the rows are walked: dense, indexed by tile (a map
  // lookup per row was most of a big model's load time); moved into `traffic`
  // and `onChipReceived` after the walk. Reset on the way out, also on an error.
  TileTallies& tallies = tallies_;
  tallies.resize(target_.totalTiles());
  struct Reset {
    TileTallies& t;
    ~Reset() { t.clear(); }
  } reset{tallies};
  std::vector<RegionPiece> srcPieces, dstPieces;

  // All regions form one phase: their traffic adds up per tile before timing.
  std::uint64_t r = 0;  // row index, as in ir::copyRegions()
  for (const ir::CopyRegion& region2d : regions)
    for (std::uint64_t row = 0; row < std::max<std::uint64_t>(1, region2d.rows); ++row, ++r) {
      const std::uint64_t s0 = row * region2d.srcStride, d0 = row * region2d.dstStride;
      const ir::CopyRegion region{{region2d.src.tensor, region2d.src.begin + s0, region2d.src.end + s0},
                                  {region2d.dst.tensor, region2d.dst.begin + d0, region2d.dst.end + d0}};
      const std::size_t elem = checkRegion(
          [&] { return totalRows > 1 ? where + " regions[" + std::to_string(r) + "]" : where; }, region, memory);
      memory.pieces(region.src, srcPieces);
      memory.pieces(region.dst, dstPieces);
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
        TileTally& dst = tallies.at(d.tile);
        dst.received += bytes;
        if (s.tile == d.tile) {
          dst.local += bytes;
        } else if (srcIpu == dstIpu) {
          crossesTiles = true;
          dst.onChipReceived += bytes;
          dst.hasOnChip = true;
          tallies.at(s.tile);  // a sender appears even if pairing makes it send little
          sentRanges.push_back({s.tile, d.tile, {srcAddress, srcAddress + bytes}});
        } else {
          // Off-chip bytes leave through the sending tile's exchange port and
          // enter through the receiving tile's, as on-chip bytes do.
          crossesTiles = true;
          linkBytes[{srcIpu, dstIpu}] += bytes;
          plan.ipuUsesLink[srcIpu] = plan.ipuUsesLink[dstIpu] = true;
          tallies.at(s.tile).sent += bytes;
          dst.onChipReceived += bytes;
          dst.hasOnChip = true;
        }
        if (memory.functional())
          transfers.push_back({memory.pointer(s) + (srcAddress - s.address),
                               memory.pointer(d) + (dstAddress - d.address), bytes});
        at = end;
        if (sEnd == end) ++i;
        if (dEnd == end) ++j;
      }
    }

  for (std::uint32_t tile : tallies.touched()) {
    const TileTally& t = tallies.at(tile);
    ExchangeTileTraffic& out = traffic[tile];
    out.sentBytes = t.sent;
    out.receivedBytes = t.received;
    out.localBytes = t.local;
    if (t.hasOnChip) onChipReceived[tile] = t.onChipReceived;
  }
  sortBySender(sentRanges, target_.totalTiles());
  if (target_.exchange.multicast) {
    // Multicast: a sender's byte goes out once, and every tile that needs
    // it listens then. (Bytes one tile takes twice pass twice, but that
    // tile's receiving already takes as long.)
    std::vector<Range> sorted;
    for (std::size_t a = 0; a < sentRanges.size();) {
      const std::uint32_t sender = sentRanges[a].sender;
      sorted.clear();
      std::size_t b = a;
      for (; b < sentRanges.size() && sentRanges[b].sender == sender; ++b) sorted.push_back(sentRanges[b].bytes);
      std::sort(sorted.begin(), sorted.end());
      std::uint64_t distinct = 0, coveredTo = 0;
      for (const Range& r : sorted) {
        if (r.second > std::max(coveredTo, r.first)) distinct += r.second - std::max(coveredTo, r.first);
        coveredTo = std::max(coveredTo, r.second);
      }
      traffic[sender].sentBytes += distinct;
      a = b;
    }
  } else {
    const std::uint32_t factor = std::max<std::uint32_t>(1, target_.exchange.pairedReceiveFactor);
    std::vector<Range> even, odd;
    for (std::size_t a = 0; a < sentRanges.size();) {
      // One sender's ranges to one pair: [a, m) to the even member, [m, b) to the odd.
      const std::uint32_t sender = sentRanges[a].sender, pair = sentRanges[a].receiver / 2;
      std::size_t m = a, b = a;
      std::uint64_t raw = 0;  // raw bytes first: the same bytes sent twice to one tile are sent twice
      for (; b < sentRanges.size() && sentRanges[b].sender == sender && sentRanges[b].receiver / 2 == pair; ++b) {
        raw += sentRanges[b].bytes.second - sentRanges[b].bytes.first;
        if (sentRanges[b].receiver % 2 == 0) m = b + 1;
      }
      uniteSorted(sentRanges.data() + a, sentRanges.data() + m, even);
      uniteSorted(sentRanges.data() + m, sentRanges.data() + b, odd);
      const std::uint64_t shared = overlap(even, odd);
      // Bytes both members receive cost the sender 2S / factor instead of 2S.
      traffic[sender].sentBytes += raw - 2 * shared + ceilDiv(2 * shared, factor);
      a = b;
    }
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
