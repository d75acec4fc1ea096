#include "sim/engine/instance_share.hpp"

#include "model/clock.hpp"
#include "model/util/fnv1a.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>

namespace ipusim::sim {

InstanceShare::InstanceShare(ReplicaPeers& peers, const ir::Executable& exe, const model::Target& target)
    : peers_(peers) {
  const std::uint32_t n = peers.instances(), k = peers.instance();
  const std::uint32_t ipus = target.numIpus();
  if (exe.ipusPerReplica > 0 && ipus % exe.ipusPerReplica == 0) replicas_ = ipus / exe.ipusPerReplica;
  if (n == 0 || k >= n || replicas_ % n != 0)
    throw std::invalid_argument("executable '" + exe.name + "': " + std::to_string(replicas_) + " replica" +
                                (replicas_ == 1 ? "" : "s") + " over " + std::to_string(n) +
                                " instances: expected a multiple of the instances");
  count_ = replicas_ / n;
  first_ = k * count_;
  const std::uint32_t tilesPerReplica = target.totalTiles() / replicas_;
  tiles_ = {first_ * tilesPerReplica, (first_ + count_) * tilesPerReplica};
}

const std::vector<ir::Id>& InstanceShare::tensorsOf(const ir::Executable& exe, ir::Id program) {
  const auto known = tensors_.find(program);
  if (known != tensors_.end()) return known->second;
  std::set<ir::Id> read;
  std::vector<ir::Id> stack{program};
  while (!stack.empty()) {
    const ir::Program& p = exe.programs.at(stack.back());
    stack.pop_back();
    stack.insert(stack.end(), p.children.begin(), p.children.end());
    if (p.kind != ir::ProgramKind::Copy) continue;
    if (p.regions.empty()) read.insert(p.src.tensor);
    for (const ir::CopyRegion& r : p.regions) read.insert(r.src.tensor);
  }
  return tensors_[program] = std::vector<ir::Id>(read.begin(), read.end());
}

std::uint64_t InstanceShare::gather(ReplicaPeers::Channel channel, const std::string& what) {
  const std::uint64_t cycle = model::nowCycles();
  std::memcpy(sent_.data(), &cycle, sizeof cycle);
  const auto start = std::chrono::steady_clock::now();
  peers_.allGather(channel, sent_, all_);
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint32_t n = peers_.instances();
  ++traffic_.gathers;
  traffic_.bytesSent += sent_.size() * (n - 1);
  traffic_.bytesReceived += all_.size() - sent_.size();
  if (all_.size() != sent_.size() * n)
    throw std::runtime_error(what + ": the instances gathered " + std::to_string(all_.size()) + " bytes, expected " +
                             std::to_string(n) + " x " + std::to_string(sent_.size()) +
                             " (did every rank run the same workload with the same flags?)");
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, all_.data() + i * sent_.size(), sizeof theirs);
    if (theirs != cycle)
      throw std::runtime_error(what + ": instance " + std::to_string(i) + " arrived at cycle " +
                               std::to_string(theirs) + ", instance " + std::to_string(peers_.instance()) + " at " +
                               std::to_string(cycle) + ": expected one clock (did every rank run the same workload "
                               "with the same flags?)");
  }
  return sent_.size() - sizeof cycle;
}

void InstanceShare::agree(const std::string& description, const ir::Executable& exe) {
  std::size_t vertices = 0;
  for (const ir::ComputeSet& cs : exe.computeSets) vertices += cs.vertices.size();
  const std::string run = description + ", " + std::to_string(exe.tensors.size()) + " tensors, " +
                          std::to_string(exe.programs.size()) + " programs, " + std::to_string(vertices) + " vertices";
  const std::uint64_t hash = util::Fnv1a().add(run).value();
  sent_.assign(2 * sizeof hash, '\0');
  std::memcpy(sent_.data() + sizeof hash, &hash, sizeof hash);
  gather(ReplicaPeers::Channel::Collective, "the run's set-up");
  // (Each against instance 0's: every instance finds the same ones, and one message.)
  const auto partOf = [&](std::uint32_t i) {
    std::uint64_t part = 0;
    std::memcpy(&part, all_.data() + partAt(i), sizeof part);
    return part;
  };
  std::string differ;
  for (std::uint32_t i = 1; i < peers_.instances(); ++i)
    if (partOf(i) != partOf(0)) differ += (differ.empty() ? "" : ", ") + std::to_string(i);
  if (differ.empty()) return;
  const bool one = differ.find(',') == std::string::npos;  // (rank 0 says it: its run is `run`)
  throw InstancesDisagree((one ? "rank " : "ranks ") + differ + (one ? " runs" : " run") +
                          " another run than rank 0's (" + run +
                          "): expected every rank to run the same workload with the same flags");
}

void InstanceShare::agreeOnWeights(const std::string& digest) {
  constexpr std::size_t kDigestChars = 16;  // (weights_digest.hpp: 16 hex digits)
  std::string own = digest.substr(0, kDigestChars);
  own.resize(kDigestChars, ' ');
  sent_.assign(sizeof(std::uint64_t), '\0');
  sent_ += own;
  gather(ReplicaPeers::Channel::Collective, "the weights' digests");
  const auto digestOf = [&](std::uint32_t i) { return std::string(all_.data() + partAt(i), kDigestChars); };
  std::string differ;
  for (std::uint32_t i = 1; i < peers_.instances(); ++i)
    if (digestOf(i) != digestOf(0)) differ += ", rank " + std::to_string(i) + "'s " + digestOf(i);
  if (!differ.empty())
    throw InstancesDisagree("the ranks' trained weights differ: rank 0's digest " + digestOf(0) + differ +
                            " (after the run; no profile committed): expected every rank to run the same workload "
                            "with the same flags (its optimizer, seed and dataset too)");
}

void InstanceShare::beforeCollective(model::IpuSystem& system, ir::Id program) {
  const ir::Executable& exe = system.executable();
  const std::vector<ir::Id>& tensors = tensorsOf(exe, program);
  // Each tensor's copies of this instance's replicas: elements [first n, (first + count) n).
  std::uint64_t bytes = 0;
  for (ir::Id t : tensors) bytes += exe.tensors[t].numBytes() / replicas_ * count_;
  sent_.resize(sizeof(std::uint64_t) + bytes);
  std::uint64_t at = sizeof(std::uint64_t);
  const auto share = [&](ir::Id t, std::uint32_t instance) {
    const ir::Tensor& tensor = exe.tensors[t];
    const std::uint64_t n = tensor.numElements() / replicas_;
    return ir::TensorRef{t, instance * count_ * n, (instance + 1) * count_ * n};
  };
  for (ir::Id t : tensors) {
    system.readRegion(share(t, peers_.instance()), sent_.data() + at);
    at += exe.tensors[t].numBytes() / replicas_ * count_;
  }
  gather(ReplicaPeers::Channel::Collective, "collective '" + exe.programs.at(program).name + "'");
  for (std::uint32_t i = 0; i < peers_.instances(); ++i) {
    if (i == peers_.instance()) continue;
    at = partAt(i);
    for (ir::Id t : tensors) {
      system.writeRegion(share(t, i), all_.data() + at);
      at += exe.tensors[t].numBytes() / replicas_ * count_;
    }
  }
}

void InstanceShare::completeOutfeed(model::Bytes& bytes) {
  if (bytes.empty()) return;
  if (bytes.size() % replicas_ != 0)
    throw std::logic_error("an outfeed copy of " + std::to_string(bytes.size()) + " bytes for " +
                           std::to_string(replicas_) + " replicas");
  const std::uint64_t share = bytes.size() / replicas_ * count_;
  sent_.resize(sizeof(std::uint64_t) + share);
  std::memcpy(sent_.data() + sizeof(std::uint64_t), bytes.data() + peers_.instance() * share, share);
  gather(ReplicaPeers::Channel::Outfeed, "outfeed copy");
  for (std::uint32_t i = 0; i < peers_.instances(); ++i)
    if (i != peers_.instance()) std::memcpy(bytes.data() + i * share, all_.data() + partAt(i), share);
}

}  // namespace ipusim::sim
