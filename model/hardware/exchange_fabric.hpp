#pragma once
// ExchangeFabric: plans and performs Copy programs (BSP exchange phases).
//
// Timing of one Copy (computed once, at load()). A multi-region Copy
// (ir::Program::regions) is ONE phase: the bytes of all its regions are summed
// per tile (sent, received, local) and per IPU pair before the rule below is
// applied once, so it pays the latency once:
// - on-chip, per tile t: sent(t) and received(t) bytes to/from other tiles of
//   its IPU; exchange cycles(t) = ceil(max(sent, received) / exchange.bytesPerCycle).
//   Multicast (exchange.multicast): sent(t) counts each distinct source byte
//   once however many tiles listen to it (model/README.md). Without it, each
//   receiver's bytes are sent again, but paired tiles (2k, 2k+1) receiving the
//   same source bytes from the same sender share a send: the sender is
//   charged ceil(2S / exchange.pairedReceiveFactor) (factor 2: S, not 2S).
// - within one tile (source and destination on the same tile): a memcpy on the
//   tile, ceil(bytes / tile.vectorBytes) cycles, added to that tile's cycles.
// - on-chip part = max over tiles of cycles(t), plus exchange.latencyCycles
//   when any byte crosses between tiles of one IPU.
// - between IPUs: the bytes pass through the sending tile's and the receiving
//   tile's exchange ports (counted in sent(t) / received(t) above, unpaired),
//   and over the IPU-Link fabric: per ordered IPU pair, along its route
//   (IpuLink: hops x latency + busiest hop's bytes / its bandwidth); link part =
//   max over pairs.
// - the phase lasts max(on-chip part, link part) on every IPU involved.
//
// Broadcast: a source tensor may alias the same bytes several times (two
// intervals of its mapping on one tile at one address, a broadcast view);
// copying such a view to a pair of tiles is the paired-receive case.
#include "model/hardware/copy_runs.hpp"
#include "model/hardware/ipu_link.hpp"
#include "model/hardware/memory_layout.hpp"
#include "model/ir/program.hpp"
#include "model/ir/replica_mirror.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ipusim::model::hardware {

struct ExchangeTileTraffic {
  std::uint32_t tile = 0;
  std::uint64_t sentBytes = 0;      // to other tiles (on-chip after pairing, and over IPU-Links)
  std::uint64_t receivedBytes = 0;  // on-chip + within-tile + over IPU-Links
  std::uint64_t localBytes = 0;     // within-tile memcpy
  ir::Cycles cycles = 0;            // on-chip exchange + memcpy cycles of this tile
};

struct ExchangePlan {
  ir::Cycles cycles = 0;          // the phase: max(on-chip, link)
  ir::Cycles onChipCycles = 0;
  ir::Cycles linkCycles = 0;
  std::uint64_t totalBytes = 0;   // destination bytes written
  std::vector<ExchangeTileTraffic> tiles;      // tiles that send, receive or copy, ascending
  std::vector<std::uint32_t> ipus;             // IPUs involved, ascending
  std::vector<bool> ipuUsesLink;               // per IPU of the target
  std::vector<std::uint64_t> ipuReceivedBytes; // per IPU of the target
  // The byte moves (functional mode only). Independent when no destination
  // overlaps another move's source or destination: the moves may then run in
  // any order or concurrently, and consecutive ones continuing each other
  // are merged into one.
  CopyRuns copies;
};

class ExchangeFabric {
 public:
  explicit ExchangeFabric(const Target& target);
  // Plans Copy program `copy`. Throws std::invalid_argument naming the program
  // when its regions are invalid (sizes, types) or an IPU-Link is needed and
  // has no bandwidth. A Copy `mirror` flags (timing only) holds replica 0's
  // regions: the plan then covers every replica (no transfers).
  ExchangePlan plan(const ir::Program& copy, const MemoryLayout& memory, const ir::ReplicaMirror& mirror = {}) const;
  // Moves the bytes (functional mode). Reads see the memory as before the phase
  // unless source and destination regions overlap (memmove per transfer).
  static void execute(const ExchangePlan& plan);
  // Part `part` of `parts` of the plan's bytes (split by byte count, a
  // transfer may be cut). Only for plans whose copies are independent: the
  // parts may then run concurrently with the same result as execute().
  static void executePart(const ExchangePlan& plan, unsigned part, unsigned parts);

 private:
  // One tile's byte sums while a Copy's rows are walked (plan()'s scratch).
  struct TileTally {
    std::uint64_t sent = 0, received = 0, local = 0, onChipReceived = 0;
    bool touched = false, hasOnChip = false;
  };
  // Dense per-tile tallies, kept between plan() calls so that planning a
  // small Copy costs its own tiles, not the target's: at(tile) marks the tile
  // touched; clear() resets the touched ones only.
  class TileTallies {
   public:
    void resize(std::size_t tiles) {
      if (tallies_.size() < tiles) tallies_.resize(tiles);
    }
    TileTally& at(std::uint32_t tile) {
      TileTally& t = tallies_[tile];
      if (!t.touched) {
        t.touched = true;
        touched_.push_back(tile);
      }
      return t;
    }
    // Touched tiles, ascending.
    const std::vector<std::uint32_t>& touched() {
      std::sort(touched_.begin(), touched_.end());
      return touched_;
    }
    void clear() {
      for (std::uint32_t tile : touched_) tallies_[tile] = {};
      touched_.clear();
    }

   private:
    std::vector<TileTally> tallies_;
    std::vector<std::uint32_t> touched_;
  };

  const Target& target_;
  IpuLink link_;
  mutable TileTallies tallies_;  // plan()'s scratch: plan() is not reentrant
};

}  // namespace ipusim::model::hardware
