#include "model/params/param_table.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace ipusim::model::params {
namespace {

// Sources named in the descriptions (bench/VALIDATION.md lists them with the
// microbenchmark that checks each value):
//   Jia2019   Z. Jia, B. Tillman, M. Maggioni, D. P. Scarpazza, "Dissecting the
//             Graphcore IPU Architecture via Microbenchmarking", 2019 (Mk1 GC2).
//   M2000     Graphcore IPU-M2000 / GC200 product datasheet (Mk2).
//   M2000-BMC Graphcore IPU-M2000 BMC User Guide, block diagram: the host
//             reaches the IPUs through the IPU-Gateway's 100 GbE RoCE NIC.
//   IPU-PG    Graphcore IPU Programmer's Guide.
//   PCIe4     PCI Express Base Specification 4.0 (16 GT/s per lane, 128b/130b).
//   PopLibs   graphcore/poplibs, the file and function named.
//   Target    Poplar's Target API values as published by a third-party IPU cost
//             model (for IPU21, the Mk2 generation): getExchangeBytesPerCycle 4,
//             getTilesPerSharedExchangeBus 2, getMaxIPUSyncDelay 126,
//             getGlobalSyncCycles 600. Used for ipu2; no published Mk1 values.
//   IPU-Fabric Graphcore IPU-POD DA build and test guide: 8 IPU-Link ports per
//             IPU-M2000 for the links between IPU-M2000s; the M2000 datasheet:
//             10 IPU-Links per GC200. 4 IPUs x 2 rails x 2 directions = 8 ports
//             when each rail is 2 links, leaving 6 for the pair.
//   POD-GS    Graphcore, Getting Started with IPU-POD Systems, "IPU-POD overview": an
//             IPU-POD128 is two IPU-POD64 racks, an IPU-POD256 four; the IPU-Gateway of
//             each IPU-M2000 joins the racks by GW-Links. IPU-POD128 datasheet: the two
//             racks' GW-Link cables cross-connected.
//   GW-SW     Graphcore technical note "Switched GW-Links in large scale Pod systems":
//             two GW-Link ports per IPU-Machine ("east" and "west"), directly connected
//             racks form a loop (machine k of rack r to machine k of racks r-1, r+1),
//             100 Gbps GW-Link interfaces.
//   POD-DA    Graphcore IPU-POD DA build and test guide, 2.1: 2 GW-Link ports per IPU-M2000.
//   Jia2019's ladder: the two IPUs of a C2 card joined by 3 IPU-Links (192
//             GB/s), cards joined along two rails of one link (64 GB/s).
// The AMP rates are derived: peak FLOPS / (2 FLOP per MAC x tiles x clock).
const std::vector<ParamDescriptor> kTable = {
    {"target", "clockHz", "Hz", 1.6e9, 1.33e9, Bound::Positive,
     "IPU clock: 1.6 GHz Mk1 GC2 (Jia2019), 1.33 GHz Mk2 GC200 (M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.clockHz; }},
    {"tile", "tile.tilesPerIpu", "tiles", 1216, 1472, Bound::Positive,
     "Tiles per IPU: 1216 Mk1 (Jia2019), 1472 Mk2 (M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.tile.tilesPerIpu; }},
    {"tile", "tile.memoryBytes", "bytes", 256 * 1024, 624 * 1024, Bound::Positive,
     "In-Processor-Memory per tile: 256 KiB Mk1 (Jia2019), 624 KiB Mk2 (900 MB / 1472 tiles, M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.tile.memoryBytes; }},
    {"tile", "tile.workerContexts", "contexts", 6, 6, Bound::Positive,
     "Hardware worker threads per tile, issued round-robin (IPU Programmer's Guide; Jia2019)",
     [](Target& t) -> FieldRef { return &t.tile.workerContexts; }},
    {"tile", "tile.supervisorOverheadCycles", "cycles", 11, 11, Bound::NonNegative,
     "Supervisor cost per compute set per busy tile, launching workers (PopLibs popops basicOpSupervisorOverhead)",
     [](Target& t) -> FieldRef { return &t.tile.supervisorOverheadCycles; }},
    {"tile", "tile.vectorBytes", "bytes", 8, 8, Bound::Positive,
     "Width of a worker's load/store and vector datapath: 64 bits (IPU Programmer's Guide)",
     [](Target& t) -> FieldRef { return &t.tile.vectorBytes; }},
    {"tile", "tile.ampFloatMacsPerCycle", "MACs/cycle", 8, 16, Bound::Positive,
     "AMP float MACs per tile per cycle, from peak FP32: 31.1 TFLOPS Mk1 (Jia2019), 62.5 TFLOPS Mk2 (M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.tile.ampFloatMacsPerCycle; }},
    {"tile", "tile.ampHalfMacsPerCycle", "MACs/cycle", 32, 64, Bound::Positive,
     "AMP half MACs per tile per cycle, from peak FP16: 124.5 TFLOPS Mk1 (Jia2019), 250 TFLOPS Mk2 (M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.tile.ampHalfMacsPerCycle; }},
    {"exchange", "exchange.bytesPerCycle", "bytes/cycle", 4, 4, Bound::Positive,
     "Exchange send/receive rate per tile (Target getExchangeBytesPerCycle; 32 bits/cycle/tile in Jia2019)",
     [](Target& t) -> FieldRef { return &t.exchange.bytesPerCycle; }},
    {"exchange", "exchange.pairedReceiveFactor", "x", 2, 2, Bound::Positive,
     "Rate multiplier when both tiles of a shared exchange bus receive the same data (PopLibs popops ExchangeEstimator)",
     [](Target& t) -> FieldRef { return &t.exchange.pairedReceiveFactor; }},
    {"exchange", "exchange.multicast", "0|1", 1, 1, Bound::NonNegative,
     "1: a sender's bytes reach every listening tile in one send (model/README.md: Multicast); 0: one send per receiver",
     [](Target& t) -> FieldRef { return &t.exchange.multicast; }},
    {"exchange", "exchange.latencyCycles", "cycles", 50, 50, Bound::NonNegative,
     "Fixed cost of an exchange phase: fabric pipeline and transit (estimate: no published per-phase figure)",
     [](Target& t) -> FieldRef { return &t.exchange.latencyCycles; }},
    {"sync", "sync.internalCycles", "cycles", 126, 126, Bound::NonNegative,
     "BSP sync of one IPU's tiles: ipu2 Target getMaxIPUSyncDelay; ipu1 the same (estimate: no Mk1 value published)",
     [](Target& t) -> FieldRef { return &t.sync.internalCycles; }},
    {"sync", "sync.externalCycles", "cycles", 600, 600, Bound::NonNegative,
     "BSP sync across IPUs and the host: ipu2 Target getGlobalSyncCycles; ipu1 the same (estimate: no Mk1 value)",
     [](Target& t) -> FieldRef { return &t.sync.externalCycles; }},
    {"ipuLink", "ipuLink.numIpus", "IPUs", 1, 1, Bound::Positive,
     "IPUs in the system, joined by IPU-Links (1 in both presets)",
     [](Target& t) -> FieldRef { return &t.ipuLink.numIpus; }},
    {"ipuLink", "ipuLink.linkBytesPerSecond", "B/s", 64e9, 32e9, Bound::Positive,
     "One IPU-Link, each direction: Mk1 64 GB/s (Jia2019); Mk2 320 GB/s over 10 links (M2000 datasheet)",
     [](Target& t) -> FieldRef { return &t.ipuLink.linkBytesPerSecond; }},
    {"ipuLink", "ipuLink.linksPerRung", "links", 3, 6, Bound::NonNegative,
     "Links joining IPUs 2k, 2k+1: 3 on a C2 card (Jia2019); Mk2 6, estimate: a GC200's 10 less 2 rails of 2 (IPU-Fabric)",
     [](Target& t) -> FieldRef { return &t.ipuLink.linksPerRung; }},
    {"ipuLink", "ipuLink.linksPerRail", "links", 1, 2, Bound::NonNegative,
     "Links joining IPUs i, i+2: Mk1 1 card to card (Jia2019 ladder); Mk2 2 (8 IPU-Link ports per M2000, IPU-Fabric)",
     [](Target& t) -> FieldRef { return &t.ipuLink.linksPerRail; }},
    {"ipuLink", "ipuLink.railsWrap", "0/1", 0, 0, Bound::NonNegative,
     "1 joins each rail's last IPU to its first (IPU-POD64 2D-torus, its datasheet); 0 a ladder (M2000, C2 cards)",
     [](Target& t) -> FieldRef { return &t.ipuLink.railsWrap; }},
    {"ipuLink", "ipuLink.latencyCycles", "cycles", 1000, 1000, Bound::NonNegative,
     "Latency of one IPU-Link hop, paid per hop of a route (estimate: no published per-hop figure)",
     [](Target& t) -> FieldRef { return &t.ipuLink.latencyCycles; }},
    {"gwLink", "gwLink.ipusPerPod", "IPUs", 0, 0, Bound::NonNegative,
     "IPUs per IPU-POD, PODs joined by GW-Links: 64 in an IPU-POD128/256 (POD-GS); 0 the whole system one POD",
     [](Target& t) -> FieldRef { return &t.gwLink.ipusPerPod; }},
    {"gwLink", "gwLink.ipusPerGateway", "IPUs", 4, 4, Bound::Positive,
     "IPUs behind one IPU-Gateway: an IPU-M2000's 4 (M2000 datasheet); ipu1 has none, used only with PODs",
     [](Target& t) -> FieldRef { return &t.gwLink.ipusPerGateway; }},
    {"gwLink", "gwLink.linksPerGateway", "links", 2, 2, Bound::Positive,
     "GW-Link ports per IPU-Gateway: 2, east and west (POD-DA; GW-SW); two PODs take both to the other",
     [](Target& t) -> FieldRef { return &t.gwLink.linksPerGateway; }},
    {"gwLink", "gwLink.linkBytesPerSecond", "B/s", 12.5e9, 12.5e9, Bound::Positive,
     "One GW-Link, each direction: 100 Gbps interfaces (GW-SW), the line rate (Ethernet framing not taken off)",
     [](Target& t) -> FieldRef { return &t.gwLink.linkBytesPerSecond; }},
    {"gwLink", "gwLink.ipuBytesPerSecond", "B/s", 14.4e9, 14.4e9, Bound::Positive,
     "One IPU to its IPU-Gateway, each direction, estimate: PCIe Gen4 x8 (M2000 BMC guide) as streamingMemory's",
     [](Target& t) -> FieldRef { return &t.gwLink.ipuBytesPerSecond; }},
    {"gwLink", "gwLink.latencyCycles", "cycles", 1600, 1330, Bound::NonNegative,
     "Latency of one GW-Link hop (estimate: 1 us, an Ethernet RDMA hop as hostLink.latencySeconds; none published)",
     [](Target& t) -> FieldRef { return &t.gwLink.latencyCycles; }},
    {"hostLink", "hostLink.bytesPerSecond", "B/s", 28.8e9, 12.5e9, Bound::Positive,
     "Host link per direction: ipu1 PCIe Gen4 x16 less TLP headers (PCIe4); ipu2 100 GbE RoCE (M2000 BMC guide)",
     [](Target& t) -> FieldRef { return &t.hostLink.bytesPerSecond; }},
    {"hostLink", "hostLink.latencySeconds", "s", 1e-6, 1e-6, Bound::NonNegative,
     "Latency of a host-device transfer over PCIe, DMA setup included (estimate)",
     [](Target& t) -> FieldRef { return &t.hostLink.latencySeconds; }},
    {"streamingMemory", "streamingMemory.bytesPerIpu", "bytes", 0, 112e9, Bound::NonNegative,
     "Streaming Memory per IPU: ipu2 448 GB per IPU-M2000 of 4 IPUs (M2000 datasheet); ipu1 none (C2 card)",
     [](Target& t) -> FieldRef { return &t.streamingMemory.bytesPerIpu; }},
    {"streamingMemory", "streamingMemory.bytesPerSecond", "B/s", 14.4e9, 14.4e9, Bound::Positive,
     "IPU to Streaming Memory per direction, estimate: PCIe Gen4 x8 to the IPU-Gateway (M2000 BMC guide) less TLP headers",
     [](Target& t) -> FieldRef { return &t.streamingMemory.bytesPerSecond; }},
    {"streamingMemory", "streamingMemory.latencySeconds", "s", 1e-6, 1e-6, Bound::NonNegative,
     "Latency of a remote-buffer copy, DMA set-up and DDR access (estimate, as hostLink.latencySeconds)",
     [](Target& t) -> FieldRef { return &t.streamingMemory.latencySeconds; }},
};

FieldRef fieldOf(const ParamDescriptor& param, const Target& target) {
  // The accessors only take addresses; nothing is written through them here.
  return param.field(const_cast<Target&>(target));
}

std::string formatDouble(double v) {
  // Shortest %g form that reads back as the same double.
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

const char* acceptedText(const ParamDescriptor& param, const FieldRef& field) {
  const bool positive = param.bound == Bound::Positive;
  if (std::holds_alternative<std::uint32_t*>(field))
    return positive ? "an integer in [1, 4294967295]" : "an integer in [0, 4294967295]";
  if (std::holds_alternative<std::uint64_t*>(field))
    return positive ? "an integer in [1, 18446744073709551615]" : "an integer in [0, 18446744073709551615]";
  return positive ? "a finite number > 0" : "a finite number >= 0";
}

[[noreturn]] void rejectValue(const ParamDescriptor& param, const FieldRef& field, const std::string& text) {
  // Quoted by its first 40 characters: a value of 100 kB made a 100 kB message.
  const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  throw std::invalid_argument("target parameter '" + std::string(param.name) + "': invalid value '" + shown +
                              "' (expected " + acceptedText(param, field) + ", in " + param.unit + ")");
}

bool parseUnsigned(const std::string& text, std::uint64_t max, std::uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t digit = std::uint64_t(c - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  out = value;
  return true;
}

bool parseDouble(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  // (A value beyond a double's range reads as inf and is refused; one below
  // its smallest normal, 1e-320, is that tiny number: it was refused as not
  // "a finite number >= 0".)
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return false;
  out = value;
  return true;
}

}  // namespace

const std::vector<ParamDescriptor>& paramTable() { return kTable; }

std::vector<std::string> paramNames() {
  std::vector<std::string> names;
  for (const auto& p : kTable) names.emplace_back(p.name);
  return names;
}

const ParamDescriptor* findParam(const std::string& name) {
  for (const auto& p : kTable)
    if (name == p.name) return &p;
  return nullptr;
}

std::string formatValue(const ParamDescriptor& param, const Target& target) {
  const FieldRef field = fieldOf(param, target);
  if (auto p = std::get_if<std::uint32_t*>(&field)) return std::to_string(**p);
  if (auto p = std::get_if<std::uint64_t*>(&field)) return std::to_string(**p);
  return formatDouble(*std::get<double*>(field));
}

nlohmann::json jsonValue(const ParamDescriptor& param, const Target& target) {
  const FieldRef field = fieldOf(param, target);
  if (auto p = std::get_if<std::uint32_t*>(&field)) return **p;
  if (auto p = std::get_if<std::uint64_t*>(&field)) return **p;
  return *std::get<double*>(field);
}

void parseAndSet(const ParamDescriptor& param, Target& target, const std::string& text) {
  const FieldRef field = param.field(target);
  const bool positive = param.bound == Bound::Positive;
  if (auto p = std::get_if<std::uint32_t*>(&field)) {
    std::uint64_t v = 0;
    if (!parseUnsigned(text, std::numeric_limits<std::uint32_t>::max(), v) || (positive && v == 0))
      rejectValue(param, field, text);
    **p = static_cast<std::uint32_t>(v);
  } else if (auto p = std::get_if<std::uint64_t*>(&field)) {
    std::uint64_t v = 0;
    if (!parseUnsigned(text, std::numeric_limits<std::uint64_t>::max(), v) || (positive && v == 0))
      rejectValue(param, field, text);
    **p = v;
  } else {
    double v = 0;
    if (!parseDouble(text, v) || v < 0 || (positive && v == 0)) rejectValue(param, field, text);
    *std::get<double*>(field) = v;
  }
}

void checkBound(const ParamDescriptor& param, const Target& target) {
  const FieldRef field = fieldOf(param, target);
  const bool positive = param.bound == Bound::Positive;
  bool ok = true;
  if (auto p = std::get_if<std::uint32_t*>(&field)) ok = !positive || **p > 0;
  else if (auto p = std::get_if<std::uint64_t*>(&field)) ok = !positive || **p > 0;
  else {
    const double v = *std::get<double*>(field);
    ok = std::isfinite(v) && v >= 0 && (!positive || v > 0);
  }
  if (!ok) rejectValue(param, field, formatValue(param, target));
}

}  // namespace ipusim::model::params
