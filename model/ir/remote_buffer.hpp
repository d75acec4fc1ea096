#pragma once
// Remote buffers: memory outside the IPU, in the IPU-M2000's Streaming Memory
// (the DDR behind its IPU-Gateway), as Poplar's RemoteBuffer. A RemoteCopy
// program moves a tensor region into a buffer (store) or out of it (load);
// nothing else reads or writes a buffer, and it holds no tile memory. Here a
// buffer is the home of one tensor: it has the tensor's element count and
// dtype, and the tensor on the tiles is a temporary its copies fill and empty
// (the optimizer state offloaded between its updates).
#include "model/ir/types.hpp"

#include <vector>

namespace ipusim::ir {

struct RemoteBuffer {
  Id id = kNoId;
  std::string name;
  DType dtype = DType::Float;
  std::uint64_t elements = 0;
  std::vector<double> initialValue;  // empty: zeros; else one value per element
  DebugInfo debug;
  std::uint64_t numBytes() const { return elements * sizeOf(dtype); }
};

}  // namespace ipusim::ir
