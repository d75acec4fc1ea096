#include "model/hardware/streaming_memory.hpp"

#include "model/hardware/memory_layout.hpp"
#include "model/hardware/remote_buffer_bytes.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ipusim::model::hardware {
namespace {

std::string describe(std::uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

StreamingMemory::StreamingMemory(const ir::Executable& exe, const Target& target, bool functional) {
  const std::uint32_t ipus = target.numIpus();
  for (const ir::Program& p : exe.programs) {
    if (p.kind != ir::ProgramKind::RemoteCopy) continue;
    // (Executable::validate checks these too; a load checks what it relies on.)
    const bool bufferExists = p.remoteBuffer < exe.remoteBuffers.size();
    if (!bufferExists || p.tensor.tensor >= exe.tensors.size() || p.tensor.begin > p.tensor.end ||
        p.tensor.end > exe.tensors[p.tensor.tensor].numElements() ||
        p.tensor.size() != exe.remoteBuffers[p.remoteBuffer].elements ||
        exe.tensors[p.tensor.tensor].dtype != exe.remoteBuffers[p.remoteBuffer].dtype)
      throw std::invalid_argument("programs[" + std::to_string(p.id) + "] '" + p.name + "' (RemoteCopy): " +
                                  (bufferExists ? "its tensor region is not remote buffer '" +
                                                      exe.remoteBuffers[p.remoteBuffer].name + "''s elements and dtype"
                                                : "remote buffer " + std::to_string(p.remoteBuffer) + " does not exist"));
    CopyPlan plan;
    plan.bytesPerIpu = regionBytesPerIpu(exe.tensors[p.tensor.tensor], p.tensor, target);
    plan.cycles = remoteCopyCycles(target, plan.bytesPerIpu);
    plans_.emplace(p.id, std::move(plan));
  }
  // Each IPU's whole need, then the check: the message gave the running sum
  // at the first buffer past the capacity ("need 1360 bytes" of buffers
  // that need 6992), naming that buffer. (Saturating: several huge buffers.)
  const std::vector<std::vector<std::uint64_t>> bufferOnIpu = remoteBufferBytesPerIpu(exe, target);
  std::vector<std::uint64_t> used(ipus, 0);
  std::vector<std::size_t> largest(ipus, 0);
  for (std::size_t b = 0; b < exe.remoteBuffers.size(); ++b)
    for (std::uint32_t ipu = 0; ipu < ipus; ++ipu) {
      used[ipu] += std::min(bufferOnIpu[b][ipu], std::numeric_limits<std::uint64_t>::max() - used[ipu]);
      if (bufferOnIpu[b][ipu] > bufferOnIpu[largest[ipu]][ipu]) largest[ipu] = b;
    }
  for (std::uint32_t ipu = 0; ipu < ipus; ++ipu)
    if (double(used[ipu]) > target.streamingMemory.bytesPerIpu)
      throw std::invalid_argument(
          "IPU " + std::to_string(ipu) + "'s remote buffers need " + describe(used[ipu]) +
          " of Streaming Memory (the largest, remote buffer '" + exe.remoteBuffers[largest[ipu]].name + "', " +
          describe(bufferOnIpu[largest[ipu]][ipu]) + "), over streamingMemory.bytesPerIpu (" +
          describe(std::uint64_t(target.streamingMemory.bytesPerIpu)) + " on target " + target.arch +
          // (only ipu1 lacks it: an ipu2 with bytesPerIpu 0 was set so)
          (target.streamingMemory.bytesPerIpu == 0 && target.arch == "ipu1"
               ? ", which has no Streaming Memory: use ipu2"
               : "") +
          ")");
  if (!functional) return;
  bytes_.reserve(exe.remoteBuffers.size());
  for (const ir::RemoteBuffer& buffer : exe.remoteBuffers) {
    std::vector<std::uint8_t> contents(buffer.numBytes(), 0);
    const std::size_t element = ir::sizeOf(buffer.dtype);
    for (std::size_t i = 0; i < buffer.initialValue.size(); ++i)
      storeElement(buffer.dtype, buffer.initialValue[i], contents.data() + i * element);
    bytes_.push_back(std::move(contents));
  }
}

}  // namespace ipusim::model::hardware
