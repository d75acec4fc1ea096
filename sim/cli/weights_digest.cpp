#include "sim/cli/weights_digest.hpp"

#include <cstdio>

namespace ipusim::sim {

std::string weightsDigest(const model::IpuSystem& system, std::uint32_t replica, std::uint32_t replicas) {
  std::uint64_t hash = 14695981039346656037ull;
  const ir::Executable& exe = system.executable();
  for (const ir::Tensor& t : exe.tensors) {
    if (t.category != "weights") continue;
    const std::vector<std::uint8_t> bytes = system.readTensor(t.id);
    const std::size_t perReplica = bytes.size() / replicas;
    for (std::size_t i = replica * perReplica; i < (replica + 1) * perReplica; ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace ipusim::sim
