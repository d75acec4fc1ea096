#include "sim/cli/weights_digest.hpp"

#include "model/util/fnv1a.hpp"

namespace ipusim::sim {

std::string weightsDigest(const model::IpuSystem& system, std::uint32_t replica, std::uint32_t replicas) {
  util::Fnv1a hash;
  const ir::Executable& exe = system.executable();
  for (const ir::Tensor& t : exe.tensors) {
    if (t.category != "weights") continue;
    const std::vector<std::uint8_t> bytes = system.readTensor(t.id);
    const std::size_t perReplica = bytes.size() / replicas;
    hash.add(bytes.data() + replica * perReplica, perReplica);
  }
  return hash.hex();
}

}  // namespace ipusim::sim
