#include "model/ir/renames.hpp"

namespace ipusim::ir {

const Program& regionsHolder(const Executable& exe, const Program& copy) {
  return copy.copyOf == kNoId ? copy : exe.programs.at(copy.copyOf);
}

std::vector<CopyRegion> renamedRegions(const Executable& exe, const Program& copy) {
  const Program& holder = regionsHolder(exe, copy);
  std::vector<CopyRegion> regions = holder.regions.empty() ? std::vector<CopyRegion>{{holder.src, holder.dst}}
                                                           : holder.regions;
  if (!copy.renames.empty())
    for (CopyRegion& r : regions) {
      r.src.tensor = renamedTensor(copy, r.src.tensor);
      r.dst.tensor = renamedTensor(copy, r.dst.tensor);
    }
  return regions;
}

Program withOwnRegions(const Executable& exe, const Program& copy) {
  Program own = copy;
  own.regions = renamedRegions(exe, copy);
  own.src = own.dst = {};
  own.copyOf = kNoId;
  own.renames.clear();
  return own;
}

ComputeSet renamedComputeSet(const Executable& exe, const Program& execute) {
  ComputeSet renamed = exe.computeSets.at(execute.computeSet);
  for (Vertex& v : renamed.vertices)
    for (VertexField& f : v.fields) f.ref.tensor = renamedTensor(execute, f.ref.tensor);
  return renamed;
}

}  // namespace ipusim::ir
