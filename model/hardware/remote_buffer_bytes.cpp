#include "model/hardware/remote_buffer_bytes.hpp"

#include <algorithm>

namespace ipusim::model::hardware {

std::vector<std::uint64_t> regionBytesPerIpu(const ir::Tensor& t, const ir::TensorRef& region, const Target& target) {
  std::vector<std::uint64_t> bytes(target.numIpus(), 0);
  for (const ir::TileInterval& iv : t.mapping) {
    const std::uint64_t begin = std::max(iv.begin, region.begin), end = std::min(iv.end, region.end);
    if (begin < end) bytes[target.ipuOf(iv.tile)] += (end - begin) * ir::sizeOf(t.dtype);
  }
  return bytes;
}

std::vector<std::vector<std::uint64_t>> remoteBufferBytesPerIpu(const ir::Executable& exe, const Target& target) {
  std::vector<std::vector<std::uint64_t>> onIpu(exe.remoteBuffers.size());
  for (const ir::Program& p : exe.programs)
    if (p.kind == ir::ProgramKind::RemoteCopy && onIpu[p.remoteBuffer].empty())
      onIpu[p.remoteBuffer] = regionBytesPerIpu(exe.tensors[p.tensor.tensor], p.tensor, target);
  for (std::size_t b = 0; b < onIpu.size(); ++b)
    if (onIpu[b].empty()) onIpu[b].assign(target.numIpus(), 0), onIpu[b][0] = exe.remoteBuffers[b].numBytes();
  return onIpu;
}

}  // namespace ipusim::model::hardware
