#pragma once
// Where remote buffers' bytes lie: the one rule the device's load check
// (streaming_memory.cpp), the compiler's check of a workload
// (scheduler/compiler.cpp) and its estimate of a copy (IrBuilder::remoteCopy)
// share. A region's bytes are on the IPUs of the tiles its tensor's mapping
// puts it on; a buffer takes its bytes where its first copy's region lies
// (every copy of a buffer moves the same region), one never copied on IPU 0.
// The executable's copies must be valid (Executable::validate).
#include "model/ir/executable.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::model::hardware {

// `region` of tensor `t`: its bytes on each of the target's IPUs.
std::vector<std::uint64_t> regionBytesPerIpu(const ir::Tensor& t, const ir::TensorRef& region, const Target& target);

// Each remote buffer's bytes on each IPU (indexed [buffer][ipu]).
std::vector<std::vector<std::uint64_t>> remoteBufferBytesPerIpu(const ir::Executable& exe, const Target& target);

}  // namespace ipusim::model::hardware
