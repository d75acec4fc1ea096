#pragma once
// The target description: one params struct per hardware component, each
// field with a unit, a default and a one-line description (naming its
// published source where it has one). Presets `ipu1` and `ipu2`; any field
// can be overridden by its dotted name ("exchange.bytesPerCycle"). Listed by
// `ipusim params`; validated once, when a Target is made.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipusim::model {

struct TileParams {
  std::uint32_t tilesPerIpu = 1472;
  std::uint64_t memoryBytes = 624 * 1024;
  std::uint32_t workerContexts = 6;
  std::uint32_t supervisorOverheadCycles = 0;  // per compute set per tile
  std::uint32_t vectorBytes = 8;               // 64-bit datapath
  std::uint32_t ampFloatMacsPerCycle = 16;     // AMP, per tile
  std::uint32_t ampHalfMacsPerCycle = 64;
};

struct ExchangeParams {
  std::uint32_t bytesPerCycle = 4;     // per tile, send and receive
  std::uint32_t pairedReceiveFactor = 2;
  std::uint32_t multicast = 1;         // 1: a sender's bytes reach every listening tile in one send; 0: one send per receiver
  std::uint32_t latencyCycles = 0;     // fixed cost of an exchange phase
};

struct SyncParams {
  std::uint32_t internalCycles = 0;
  std::uint32_t externalCycles = 0;
};

// The IPU-Link fabric: IPUs form a ladder (model/hardware/ipu_link_topology.hpp):
// IPUs 2k and 2k+1 are a rung (a C2 card's pair, an IPU-M2000's pair), IPU i
// and i+2 are joined along a rail; railsWrap joins the rails' ends (a torus).
struct IpuLinkParams {
  std::uint32_t numIpus = 1;
  double linkBytesPerSecond = 0;   // one link, one direction
  std::uint32_t linksPerRung = 0;  // links joining IPUs 2k and 2k+1
  std::uint32_t linksPerRail = 0;  // links joining IPUs i and i+2
  std::uint32_t railsWrap = 0;     // 1: the last IPUs of each rail join the first
  std::uint32_t latencyCycles = 0; // per hop
};

// GW-Links: IPU-PODs of gwLink.ipusPerPod IPUs (each POD a ladder of its own
// IPU-Links) joined through the IPU-Gateway of each IPU-Machine
// (model/hardware/ipu_link_topology.hpp): the gateway of machine k of POD q
// is linked to machine k's gateway of the PODs beside q in a loop (two PODs:
// all its links to the other). 0 PODs' size: one POD, no GW-Links.
struct GwLinkParams {
  std::uint32_t ipusPerPod = 0;         // 0: the whole system is one POD
  std::uint32_t ipusPerGateway = 4;     // IPUs of one IPU-Machine, behind one IPU-Gateway
  std::uint32_t linksPerGateway = 2;    // GW-Link ports of one gateway
  double linkBytesPerSecond = 0;        // one GW-Link, one direction
  double ipuBytesPerSecond = 0;         // one IPU to its gateway, one direction
  std::uint32_t latencyCycles = 0;      // per GW-Link hop
};

// IPU-PODs joined by GW-Links: numIpus / gw.ipusPerPod, or 1 (one POD: no
// POD size, or one as large as the system).
inline std::uint32_t numPodsOf(const IpuLinkParams& ipuLink, const GwLinkParams& gw) {
  return gw.ipusPerPod && gw.ipusPerPod < ipuLink.numIpus ? ipuLink.numIpus / gw.ipusPerPod : 1;
}

struct HostLinkParams {
  double bytesPerSecond = 0;  // PCIe
  double latencySeconds = 0;
};

// Streaming Memory: the DDR behind an IPU-M2000's IPU-Gateway, reached by
// remote-buffer copies (model/ir/remote_buffer.hpp). A copy holds every IPU
// for latencySeconds + its IPU's bytes / bytesPerSecond, then syncs.
struct StreamingMemoryParams {
  double bytesPerIpu = 0;     // capacity per IPU (0: none, as a C2 card)
  double bytesPerSecond = 0;  // one IPU's link to it, each direction
  double latencySeconds = 0;
};

struct Target {
  std::string arch = "ipu2";
  double clockHz = 1.33e9;
  TileParams tile;
  ExchangeParams exchange;
  SyncParams sync;
  IpuLinkParams ipuLink;
  GwLinkParams gwLink;
  HostLinkParams hostLink;
  StreamingMemoryParams streamingMemory;

  std::uint32_t numIpus() const { return ipuLink.numIpus; }
  std::uint32_t totalTiles() const { return tile.tilesPerIpu * ipuLink.numIpus; }
  std::uint32_t ipuOf(std::uint32_t globalTile) const { return globalTile / tile.tilesPerIpu; }
  std::uint32_t numPods() const { return numPodsOf(ipuLink, gwLink); }
  // Rounded up; throws naming `what` when the time is negative, not finite or
  // over kMaxDurationCycles (model/target_limits.hpp).
  std::uint64_t secondsToCycles(double seconds, const std::string& what = "duration") const;
  double cyclesToSeconds(std::uint64_t cycles) const { return double(cycles) / clockHz; }

  // Presets: "ipu1" (Mk1 GC2) and "ipu2" (Mk2 GC200). Throws
  // std::invalid_argument naming the arch and the valid ones.
  static Target preset(const std::string& arch);
  // Sets one field by dotted name from text ("exchange.bytesPerCycle", "8").
  // Throws std::invalid_argument naming the parameter and what it accepts
  // (and the nearest valid name for an unknown one).
  void set(const std::string& name, const std::string& value);
  // Throws std::invalid_argument naming the first invalid field.
  void validate() const;
  // {"arch": ..., "overrides": {name: value}} and back (preset + overrides).
  nlohmann::json toJson() const;
  static Target fromJson(const nlohmann::json& j);
};

// One row of `ipusim params`: generated from the parameter table, not written by hand.
struct ParamInfo {
  std::string component;    // "tile", "exchange", ...
  std::string name;         // dotted: "tile.tilesPerIpu"
  std::string unit;         // "tiles", "bytes", "cycles", "B/s", "s", "Hz", ...
  std::string description;  // one line, naming its source
  std::string value;        // value in the given target, as text
};
std::vector<ParamInfo> listParams(const Target& target);

}  // namespace ipusim::model
