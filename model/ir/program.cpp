#include "model/ir/program.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::ir {
namespace {
constexpr ProgramKind kAllKinds[] = {
    ProgramKind::Sequence, ProgramKind::Execute, ProgramKind::Copy,
    ProgramKind::StreamCopy, ProgramKind::Repeat, ProgramKind::RepeatWhileTrue,
    ProgramKind::If, ProgramKind::Sync, ProgramKind::Call,
    ProgramKind::RemoteCopy,
};
}  // namespace

const char* toString(ProgramKind kind) {
  switch (kind) {
    case ProgramKind::Sequence: return "Sequence";
    case ProgramKind::Execute: return "Execute";
    case ProgramKind::Copy: return "Copy";
    case ProgramKind::StreamCopy: return "StreamCopy";
    case ProgramKind::Repeat: return "Repeat";
    case ProgramKind::RepeatWhileTrue: return "RepeatWhileTrue";
    case ProgramKind::If: return "If";
    case ProgramKind::Sync: return "Sync";
    case ProgramKind::Call: return "Call";
    case ProgramKind::RemoteCopy: return "RemoteCopy";
  }
  return "invalid";
}

ProgramKind programKindFromString(const std::string& name) {
  for (ProgramKind kind : kAllKinds)
    if (name == toString(kind)) return kind;
  throw std::invalid_argument("unknown program kind '" + name +
                              "' (expected Sequence, Execute, Copy, StreamCopy, Repeat, "
                              "RepeatWhileTrue, If, Sync, Call or RemoteCopy)");
}

Id renamedTensor(const Program& program, Id tensor) {
  const auto it = std::lower_bound(program.renames.begin(), program.renames.end(), tensor,
                                   [](const TensorRename& r, Id t) { return r.from < t; });
  return it != program.renames.end() && it->from == tensor ? it->to : tensor;
}

void expandRegion(const CopyRegion& region, std::vector<CopyRegion>& out) {
  if (region.rows <= 1) {
    out.push_back({region.src, region.dst});
    return;
  }
  for (std::uint64_t r = 0; r < region.rows; ++r) {
    const std::uint64_t s = r * region.srcStride, d = r * region.dstStride;
    out.push_back({{region.src.tensor, region.src.begin + s, region.src.end + s},
                   {region.dst.tensor, region.dst.begin + d, region.dst.end + d}});
  }
}

std::vector<CopyRegion> copyRegions(const Program& copy) {
  if (copy.copyOf != kNoId)
    throw std::logic_error("copyRegions: Copy '" + copy.name +
                           "' moves another Copy's regions (renames.hpp: renamedRegions)");
  if (copy.regions.empty()) return {CopyRegion{copy.src, copy.dst}};
  std::vector<CopyRegion> out;
  for (const CopyRegion& r : copy.regions) expandRegion(r, out);
  return out;
}

const char* toString(SyncType type) {
  switch (type) {
    case SyncType::Internal: return "internal";
    case SyncType::External: return "external";
  }
  return "invalid";
}

}  // namespace ipusim::ir
