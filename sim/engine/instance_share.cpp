#include "sim/engine/instance_share.hpp"

#include "model/clock.hpp"

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

std::vector<std::string> InstanceShare::gather(ReplicaPeers::Channel channel, const std::string& own,
                                               const std::string& what) {
  const std::uint64_t cycle = model::nowCycles();
  std::string sent(sizeof cycle, '\0');
  std::memcpy(sent.data(), &cycle, sizeof cycle);
  sent += own;
  const auto start = std::chrono::steady_clock::now();
  const std::string all = peers_.allGather(channel, sent);
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint32_t n = peers_.instances();
  ++traffic_.gathers;
  traffic_.bytesSent += sent.size() * (n - 1);
  traffic_.bytesReceived += all.size() - sent.size();
  if (all.size() != sent.size() * n)
    throw std::runtime_error(what + ": the instances gathered " + std::to_string(all.size()) + " bytes, expected " +
                             std::to_string(n) + " x " + std::to_string(sent.size()) +
                             " (did every rank run the same workload with the same flags?)");
  std::vector<std::string> parts;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, all.data() + i * sent.size(), sizeof theirs);
    if (theirs != cycle)
      throw std::runtime_error(what + ": instance " + std::to_string(i) + " arrived at cycle " +
                               std::to_string(theirs) + ", instance " + std::to_string(peers_.instance()) + " at " +
                               std::to_string(cycle) + ": expected one clock (did every rank run the same workload "
                               "with the same flags?)");
    parts.push_back(all.substr(i * sent.size() + sizeof cycle, own.size()));
  }
  return parts;
}

void InstanceShare::beforeCollective(model::IpuSystem& system, ir::Id program) {
  const ir::Executable& exe = system.executable();
  const std::vector<ir::Id>& tensors = tensorsOf(exe, program);
  std::vector<std::vector<std::uint8_t>> values;
  std::string own;
  for (ir::Id t : tensors) {
    values.push_back(system.readTensor(t));
    const std::uint64_t perReplica = values.back().size() / replicas_;
    own.append(reinterpret_cast<const char*>(values.back().data()) + first_ * perReplica, count_ * perReplica);
  }
  const std::vector<std::string> parts =
      gather(ReplicaPeers::Channel::Collective, own, "collective '" + exe.programs.at(program).name + "'");
  for (std::uint32_t i = 0; i < parts.size(); ++i) {
    if (i == peers_.instance()) continue;
    std::uint64_t at = 0;
    for (std::vector<std::uint8_t>& v : values) {
      const std::uint64_t perReplica = v.size() / replicas_, bytes = count_ * perReplica;
      std::memcpy(v.data() + i * bytes, parts[i].data() + at, bytes);
      at += bytes;
    }
  }
  for (std::size_t j = 0; j < tensors.size(); ++j) system.writeTensor(tensors[j], values[j].data(), values[j].size());
}

void InstanceShare::completeOutfeed(model::Bytes& bytes) {
  if (bytes.empty()) return;
  if (bytes.size() % replicas_ != 0)
    throw std::logic_error("an outfeed copy of " + std::to_string(bytes.size()) + " bytes for " +
                           std::to_string(replicas_) + " replicas");
  const std::uint64_t share = bytes.size() / replicas_ * count_;
  const std::string own(reinterpret_cast<const char*>(bytes.data()) + first_ / count_ * share, share);
  const std::vector<std::string> parts = gather(ReplicaPeers::Channel::Outfeed, own, "outfeed copy");
  for (std::uint32_t i = 0; i < parts.size(); ++i)
    if (i != peers_.instance()) std::memcpy(bytes.data() + i * share, parts[i].data(), share);
}

}  // namespace ipusim::sim
