// ipusim-micro: microbenchmarks of the model's fixed costs and rates, each run
// on the simulated machine and compared with its published figure (the
// source is named). One benchmark per process (SystemC elaborates once per
// process); bench/micro/run.sh runs them all and writes bench/VALIDATION.md's
// table; ctest runs each with --check, so a drift in a constant fails.
//
//   ipusim-micro --list
//   ipusim-micro --bench NAME --arch ipu1|ipu2 [--check]
//
// Prints one JSON object: bench, arch, what, simulated, published, unit,
// ratio (simulated / published), tolerance, within, source, note.
// --check exits 1 when the ratio is outside 1 +- tolerance.
#include "model/clock.hpp"
#include "model/ipu_system.hpp"
#include "model/ir/graph_builder.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>

int sc_main(int, char*[]) { return 0; }  // libsystemc's main() is not used: main() is ours

namespace ipusim::bench {
namespace {

using ir::GraphBuilder;

// A published figure, per arch (absent: no public value for that arch).
struct Published {
  double value;
  const char* source;
};

struct Benchmark {
  const char* name;
  const char* what;
  const char* unit;
  // Builds the graph (entry 0 is measured) for the target.
  std::function<ir::Executable(const model::Target&)> build;
  // The figure from the measured cycles of entry 0.
  std::function<double(const model::Target&, ir::Cycles)> figure;
  std::map<std::string, Published> published;
  double tolerance = 0.05;
  const char* note = "";  // why the ratio is what it is, when it is not ~1
};

// Runs entry 0 once in its own simulation; stream copies are served at once
// (no host time: these benchmarks measure the device and the link).
class Harness : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Harness);
  Harness(sc_core::sc_module_name name, const model::Target& target, const ir::Executable& exe)
      : sc_core::sc_module(name), system("system", target) {
    system.load(exe, model::LoadOptions{false, 1});
    for (const auto& s : exe.streams) {
      system.stream(s.id).connect([](model::Bytes&) {});  // always ready, no host time
    }
    SC_THREAD(device);
  }
  model::IpuSystem system;
  ir::Cycles cycles = 0;

 private:
  void device() {
    const ir::Cycles start = model::nowCycles();
    system.run(0);
    cycles = model::nowCycles() - start;
    sc_core::sc_stop();
  }
};

std::vector<std::uint32_t> allTiles(const model::Target& t) { return GraphBuilder::tileRange(0, t.tile.tilesPerIpu); }

// One exchange of `bytes` from tile 0 to tile 1.
ir::Executable tileToTile(const model::Target& t, std::uint64_t bytes) {
  GraphBuilder b(t, "tile_to_tile");
  const auto n = bytes / 4;
  const ir::Id src = b.addTensor("src", {n}, ir::DType::Float, "data");
  const ir::Id dst = b.addTensor("dst", {n}, ir::DType::Float, "data");
  b.setTileMapping(src, 0);
  b.setTileMapping(dst, 1);
  b.addEntryPoint("main", b.copy(b.ref(src), b.ref(dst)));
  return b.finish();
}

// Every tile sends `bytesPerTile` to the next tile (a rotation): all tiles
// send and receive at once, the IPU's aggregate exchange bandwidth.
ir::Executable allToAll(const model::Target& t, std::uint64_t bytesPerTile) {
  GraphBuilder b(t, "all_to_all");
  const std::uint32_t tiles = t.tile.tilesPerIpu;
  const auto n = bytesPerTile / 4;
  const ir::Id src = b.addTensor("src", {n * tiles}, ir::DType::Float, "data");
  const ir::Id dst = b.addTensor("dst", {n * tiles}, ir::DType::Float, "data");
  b.mapLinearly(src, allTiles(t), n);
  std::vector<ir::CopyRegion> regions;
  for (std::uint32_t tile = 0; tile < tiles; ++tile) {
    const std::uint32_t to = (tile + 1) % tiles;
    b.mapInterval(dst, to * n, (to + 1) * n, to);
    regions.push_back({b.ref(src, tile * n, (tile + 1) * n), b.ref(dst, to * n, (to + 1) * n)});
  }
  b.addEntryPoint("main", b.copy(regions));
  return b.finish();
}

// One Add vertex per worker context on every tile, `n` floats each.
ir::Executable elementwise(const model::Target& t, std::uint64_t n) {
  GraphBuilder b(t, "elementwise");
  const std::uint32_t tiles = t.tile.tilesPerIpu, contexts = t.tile.workerContexts;
  const std::uint64_t perTile = n * contexts;
  std::vector<ir::Id> tensors;
  for (const char* name : {"in0", "in1", "out"}) {
    tensors.push_back(b.addTensor(name, {perTile * tiles}, ir::DType::Float, "data"));
    b.mapLinearly(tensors.back(), allTiles(t), perTile);
  }
  const ir::Id cs = b.addComputeSet("add");
  for (std::uint32_t tile = 0; tile < tiles; ++tile)
    for (std::uint32_t w = 0; w < contexts; ++w) {
      const std::uint64_t at = tile * perTile + w * n;
      b.addVertex(cs, "Add", tile,
                  {{"in0", b.ref(tensors[0], at, at + n)}, {"in1", b.ref(tensors[1], at, at + n)},
                   {"out", b.ref(tensors[2], at, at + n)}});
    }
  b.addEntryPoint("main", b.execute(cs));
  return b.finish();
}

// One MatMulPartial (m x k x n) on every tile, accumulating into its output
// (no zeroing pass): the AMP's sustained rate. 720 x 32 x 32 floats fit a
// Mk1 tile (188 KB) and give each of the 6 workers 120 field elements.
constexpr std::uint64_t kMatM = 720, kMatK = 32, kMatN = 32;
ir::Executable matmul(const model::Target& t) {
  GraphBuilder b(t, "amp_matmul");
  const std::uint32_t tiles = t.tile.tilesPerIpu;
  const ir::Id a = b.addTensor("a", {kMatM * kMatK * tiles}, ir::DType::Float, "data");
  const ir::Id w = b.addTensor("b", {kMatK * kMatN * tiles}, ir::DType::Float, "data");
  const ir::Id out = b.addTensor("out", {kMatM * kMatN * tiles}, ir::DType::Float, "data");
  b.mapLinearly(a, allTiles(t), kMatM * kMatK);
  b.mapLinearly(w, allTiles(t), kMatK * kMatN);
  b.mapLinearly(out, allTiles(t), kMatM * kMatN);
  const ir::Id cs = b.addComputeSet("matmul");
  for (std::uint32_t tile = 0; tile < tiles; ++tile)
    b.addVertex(cs, "MatMulPartial", tile,
                {{"a", b.ref(a, tile * kMatM * kMatK, (tile + 1) * kMatM * kMatK)},
                 {"b", b.ref(w, tile * kMatK * kMatN, (tile + 1) * kMatK * kMatN)},
                 {"out", b.ref(out, tile * kMatM * kMatN, (tile + 1) * kMatM * kMatN)}},
                {{"m", double(kMatM)}, {"k", double(kMatK)}, {"n", double(kMatN)}, {"accumulate", 1}});
  b.addEntryPoint("main", b.execute(cs));
  return b.finish();
}

ir::Executable syncOnly(const model::Target& t, ir::SyncType type) {
  GraphBuilder b(t, "sync");
  b.addEntryPoint("main", b.sync(type));
  return b.finish();
}

// One host-to-device stream copy of `bytes`, spread over every tile.
ir::Executable hostLink(const model::Target& t, std::uint64_t bytes) {
  GraphBuilder b(t, "host_link");
  const auto n = bytes / 4;
  const ir::Id x = b.addTensor("x", {n}, ir::DType::Float, "data");
  b.mapLinearly(x, allTiles(t), 8);
  const ir::Id s = b.addStream("infeed", ir::StreamDirection::HostToDevice, ir::DType::Float, n, 1);
  b.addEntryPoint("main", b.streamCopy(s, b.ref(x)));
  return b.finish();
}

// `bytes` from tile 0 of IPU 0 to tile 0 of IPU 1 (a 2-IPU target).
ir::Executable ipuLink(const model::Target& t, std::uint64_t bytes) {
  GraphBuilder b(t, "ipu_link");
  const auto n = bytes / 4;
  const ir::Id src = b.addTensor("src", {n}, ir::DType::Float, "data");
  const ir::Id dst = b.addTensor("dst", {n}, ir::DType::Float, "data");
  b.mapLinearly(src, GraphBuilder::tileRange(0, 512), 8192);
  b.mapLinearly(dst, GraphBuilder::tileRange(t.tile.tilesPerIpu, 512), 8192);
  b.addEntryPoint("main", b.copy(b.ref(src), b.ref(dst)));
  return b.finish();
}

constexpr std::uint64_t kTileBytes = 64 * 1024, kAllToAllBytes = 16 * 1024, kElementwiseFloats = 2048;
constexpr std::uint64_t kHostBytes = 16 * 1024 * 1024, kLinkBytes = 16 * 1024 * 1024;

double seconds(const model::Target& t, ir::Cycles c) { return double(c) / t.clockHz; }

// PopLibs' BinaryOp2D ADD FLOAT for one region of n (popopsCycleEstimators.cpp):
// 5 + ceil(n / 2) x (1 + 2); the tile runs its 6 workers round-robin and adds
// the supervisor's launch (basicOpSupervisorOverhead, 11).
double poplibsAddTileCycles(std::uint64_t n) { return 6.0 * double(5 + (n + 1) / 2 * 3) + 11; }

const std::vector<Benchmark>& benchmarks() {
  static const std::vector<Benchmark> table = {
      {"exchange_tile_to_tile", "64 KiB from one tile to another", "bytes/cycle",
       [](const model::Target& t) { return tileToTile(t, kTileBytes); },
       [](const model::Target&, ir::Cycles c) { return double(kTileBytes) / double(c); },
       {{"ipu2", {4, "Poplar Target getExchangeBytesPerCycle = 4 (as published by a third-party IPU cost model)"}},
        {"ipu1", {4, "Jia2019: 32 bits per cycle per tile (Mk1 GC2)"}}},
       0.05, "the fixed exchange.latencyCycles is paid once per phase"},
      {"exchange_all_to_all", "every tile sends 16 KiB to the next, at once", "TB/s",
       [](const model::Target& t) { return allToAll(t, kAllToAllBytes); },
       [](const model::Target& t, ir::Cycles c) {
         return double(kAllToAllBytes) * t.tile.tilesPerIpu / seconds(t, c) / 1e12;
       },
       {{"ipu2", {8.0, "IPU-M2000 / GC200 datasheet: IPU-Exchange 8 TB/s all-to-all"}}},
       0.05, "tiles x 4 B x clock is 7.83 TB/s on ipu2, which the datasheet rounds to 8; one exchange latency is paid"},
      {"elementwise_add", "Add, 6 vertices x 2048 floats per tile, all tiles", "cycles",
       [](const model::Target& t) { return elementwise(t, kElementwiseFloats); },
       [](const model::Target&, ir::Cycles c) { return double(c); },
       {{"ipu2", {poplibsAddTileCycles(kElementwiseFloats) + 126,
                  "PopLibs BinaryOp2D ADD FLOAT x 6 workers + basicOpSupervisorOverhead 11, then the compute set's sync (Target getMaxIPUSyncDelay 126)"}},
        {"ipu1", {poplibsAddTileCycles(kElementwiseFloats) + 126,
                  "the same PopLibs estimate (PopLibs serves both archs); the sync is the ipu2 value, an estimate for ipu1"}}},
       0.05, ""},
      {"amp_matmul_peak", "MatMulPartial 720 x 32 x 32, accumulating, on every tile", "TFLOP/s",
       [](const model::Target& t) { return matmul(t); },
       [](const model::Target& t, ir::Cycles c) {
         return 2.0 * kMatM * kMatK * kMatN * t.tile.tilesPerIpu / seconds(t, c) / 1e12;
       },
       {{"ipu2", {62.5, "IPU-M2000 / GC200 datasheet: 62.5 TFLOPS FP32 per IPU"}},
        {"ipu1", {31.1, "Jia2019: 31.1 TFLOPS single precision (Mk1 GC2)"}}},
       0.05,
       "the datasheet figure is the AMP's peak; poplin's ConvPartial1x1 estimate adds weight loads and worker overheads "
       "(a first pass that zeroes the partials costs 8 more cycles per element per worker)"},
      {"sync_internal", "one Sync(Internal)", "cycles",
       [](const model::Target& t) { return syncOnly(t, ir::SyncType::Internal); },
       [](const model::Target&, ir::Cycles c) { return double(c); },
       {{"ipu2", {126, "Poplar Target getMaxIPUSyncDelay = 126 (as published by a third-party IPU cost model)"}}},
       0.05, ""},
      {"sync_external", "one Sync(External)", "cycles",
       [](const model::Target& t) { return syncOnly(t, ir::SyncType::External); },
       [](const model::Target&, ir::Cycles c) { return double(c); },
       {{"ipu2", {600, "Poplar Target getGlobalSyncCycles = 600 (as published by a third-party IPU cost model)"}}},
       0.05, ""},
      {"host_link", "one 16 MiB host-to-device stream copy", "GB/s",
       [](const model::Target& t) { return hostLink(t, kHostBytes); },
       [](const model::Target& t, ir::Cycles c) { return double(kHostBytes) / seconds(t, c) / 1e9; },
       {{"ipu2", {12.5, "IPU-M2000 BMC User Guide: host reached over 100 GbE RoCE (12.5 GB/s line rate)"}},
        {"ipu1", {28.8, "PCIe 4.0 x16: 31.5 GB/s x 256/(256+24) TLP efficiency"}}},
       0.05, "the copy's latency and completion sync are paid once"},
      {"ipu_link", "16 MiB from IPU 0 to IPU 1", "GB/s",
       [](const model::Target& t) { return ipuLink(t, kLinkBytes); },
       [](const model::Target& t, ir::Cycles c) { return double(kLinkBytes) / seconds(t, c) / 1e9; },
       {{"ipu2", {192, "an IPU-M2000 pair: 6 of the GC200's 10 IPU-Links x 32 GB/s (datasheet: 320 GB/s)"}},
        {"ipu1", {192, "Jia2019: a C2 card's pair, 3 IPU-Links, 192 GB/s"}}},
       0.05, "one hop: ipuLink.latencyCycles is paid once per copy"},
  };
  return table;
}

}  // namespace
}  // namespace ipusim::bench

int main(int argc, char** argv) {
  using namespace ipusim;
  CLI::App app{"ipusim-micro: microbenchmarks of the model's constants against their published figures"};
  std::string name, arch = "ipu2";
  bool list = false, check = false;
  app.add_flag("--list", list, "list the benchmarks");
  app.add_option("--bench", name, "the benchmark to run");
  app.add_option("--arch", arch, "target preset: ipu1 or ipu2")->check(CLI::IsMember({"ipu1", "ipu2"}));
  app.add_flag("--check", check, "exit 1 when the simulated figure is outside its tolerance of the published one");
  CLI11_PARSE(app, argc, argv);
  if (list) {
    for (const auto& b : bench::benchmarks()) std::cout << b.name << "\n";
    return 0;
  }
  for (const auto& b : bench::benchmarks()) {
    if (name != b.name) continue;
    model::Target target = model::Target::preset(arch);
    if (std::string(b.name) == "ipu_link") target.set("ipuLink.numIpus", "2");
    const ir::Executable exe = b.build(target);
    bench::Harness harness("harness", target, exe);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // "stopped by user"
    sc_core::sc_start();
    const double simulated = b.figure(target, harness.cycles);
    nlohmann::json out = {{"bench", b.name}, {"arch", arch}, {"what", b.what}, {"unit", b.unit},
                          {"simulated", simulated}, {"cycles", harness.cycles}, {"tolerance", b.tolerance},
                          {"note", b.note}};
    const auto published = b.published.find(arch);
    bool within = true;
    if (published != b.published.end()) {
      const double ratio = simulated / published->second.value;
      within = std::fabs(ratio - 1.0) <= b.tolerance;
      out["published"] = published->second.value;
      out["source"] = published->second.source;
      out["ratio"] = ratio;
    } else {
      out["published"] = nullptr;
      out["source"] = "no public figure for this arch";
      out["ratio"] = nullptr;
    }
    out["within"] = within;
    std::cout << out.dump() << "\n";
    if (check && published == b.published.end()) {
      std::cerr << "ipusim-micro: --check: " << b.name << " has no published figure for " << arch << "\n";
      return 1;
    }
    return check && !within ? 1 : 0;
  }
  std::cerr << "ipusim-micro: unknown benchmark '" << name << "' (--list names them)\n";
  return 2;
}
