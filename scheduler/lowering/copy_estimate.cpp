#include "scheduler/lowering/copy_estimate.hpp"

#include "scheduler/planning/cost_model.hpp"

#include <algorithm>
#include <unordered_map>

namespace ipusim::scheduler {
namespace {

// Bytes summed per tile. Consecutive pieces of a region mostly meet the same
// tile, so the last tile's entry is kept at hand (an unordered_map's
// references stay valid when it rehashes).
class BytesPerTile {
 public:
  void add(std::uint32_t tile, std::uint64_t bytes) {
    if (tile != lastTile_ || !last_) last_ = &bytes_[tile], lastTile_ = tile;
    *last_ += bytes;
  }
  std::uint64_t busiest() const {
    std::uint64_t most = 0;
    for (const auto& [tile, bytes] : bytes_) most = std::max(most, bytes);
    return most;
  }

 private:
  std::unordered_map<std::uint32_t, std::uint64_t> bytes_;
  std::uint32_t lastTile_ = 0;
  std::uint64_t* last_ = nullptr;
};

// The elements of one source tensor already sent, a bit each over the span
// of it the Copy reads. Every element lives on one tile, so counting each
// element the first time it is sent counts, for its tile, the union of what
// that tile sends: multicast's rule, without sorting the pieces. (A bit an
// element: at most a sixteenth of a float16 tensor's own bytes.)
class SentElements {
 public:
  SentElements(std::uint64_t begin, std::uint64_t end) : base_(begin), words_((end - begin + 63) / 64) {}
  // Marks [begin, end) as sent; returns how many of them were not yet.
  std::uint64_t markSent(std::uint64_t begin, std::uint64_t end) {
    std::uint64_t fresh = 0;
    for (std::uint64_t at = begin - base_, stop = end - base_; at < stop;) {
      const std::uint64_t bit = at % 64, n = std::min<std::uint64_t>(64 - bit, stop - at);
      const std::uint64_t mask = (n == 64 ? ~std::uint64_t(0) : ((std::uint64_t(1) << n) - 1)) << bit;
      std::uint64_t& word = words_[at / 64];
      fresh += std::uint64_t(__builtin_popcountll(mask & ~word));
      word |= mask;
      at += n;
    }
    return fresh;
  }

 private:
  std::uint64_t base_;
  std::vector<std::uint64_t> words_;
};

// For each source tensor, the span [first, last) of it the regions read.
std::unordered_map<ir::Id, SentElements> sourceSpans(const std::vector<ir::CopyRegion>& regions) {
  std::unordered_map<ir::Id, std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const ir::CopyRegion& r : regions) {
    const std::uint64_t end = r.src.end + (std::max<std::uint64_t>(1, r.rows) - 1) * r.srcStride;
    auto [it, added] = spans.try_emplace(r.src.tensor, r.src.begin, end);
    if (!added) it->second = {std::min(it->second.first, r.src.begin), std::max(it->second.second, end)};
  }
  std::unordered_map<ir::Id, SentElements> sent;
  for (const auto& [tensor, span] : spans) sent.try_emplace(tensor, span.first, span.second);
  return sent;
}

// The first interval of `mapping` (sorted, disjoint) ending after `element`.
std::vector<ir::TileInterval>::const_iterator intervalHolding(const std::vector<ir::TileInterval>& mapping,
                                                               std::uint64_t element) {
  return std::upper_bound(mapping.begin(), mapping.end(), element,
                          [](std::uint64_t v, const ir::TileInterval& iv) { return v < iv.end; });
}

}  // namespace

ir::Cycles estimateCopy(const IrBuilder& builder, const std::vector<ir::CopyRegion>& regions) {
  // (The fabric unites source bytes by address, so a broadcast view of one
  // element is one send there and one per view here: an upper bound.)
  const bool multicast = builder.target().exchange.multicast != 0;
  std::unordered_map<ir::Id, SentElements> sentElements;
  if (multicast) sentElements = sourceSpans(regions);
  BytesPerTile received, sent;
  for (const ir::CopyRegion& r : regions) {
    const auto& s = builder.tensor(r.src.tensor).mapping;
    const auto& d = builder.tensor(r.dst.tensor).mapping;
    const std::uint64_t elementBytes = ir::sizeOf(builder.tensor(r.src.tensor).dtype);
    SentElements* sentOfSource = multicast ? &sentElements.at(r.src.tensor) : nullptr;
    for (std::uint64_t rowIndex = 0; rowIndex < std::max<std::uint64_t>(1, r.rows); ++rowIndex) {
      const std::uint64_t sb = r.src.begin + rowIndex * r.srcStride, db = r.dst.begin + rowIndex * r.dstStride;
      // One search a row; the row's later pieces walk on from there.
      auto si = intervalHolding(s, sb), di = intervalHolding(d, db);
      for (std::uint64_t at = 0; at < r.src.size();) {
        while (si != s.end() && si->end <= sb + at) ++si;
        while (di != d.end() && di->end <= db + at) ++di;
        if (si == s.end() || di == d.end()) break;
        const std::uint64_t len = std::min({r.src.size() - at, si->end - (sb + at), di->end - (db + at)});
        if (si->tile != di->tile) {
          received.add(di->tile, len * elementBytes);
          const std::uint64_t sentNow = sentOfSource ? sentOfSource->markSent(sb + at, sb + at + len) : len;
          sent.add(si->tile, sentNow * elementBytes);
        }
        at += len;
      }
    }
  }
  return exchangePhaseCycles(std::max(received.busiest(), sent.busiest()), builder.target());
}

}  // namespace ipusim::scheduler
