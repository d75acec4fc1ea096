#include "profiler/recorder/program_liveness.hpp"

#include "model/ir/renames.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace ipusim::profiler {

namespace {

class OrderWalker {
 public:
  explicit OrderWalker(const ir::Executable& exe)
      : exe_(exe), visited_(exe.programs.size(), false), onPath_(exe.programs.size(), false) {}

  void visit(ir::Id id) {
    if (id >= exe_.programs.size())
      throw std::invalid_argument("program " + std::to_string(id) + " does not exist (" +
                                  std::to_string(exe_.programs.size()) + " programs)");
    if (onPath_[id]) return;  // a Call cycle: already being walked
    const ir::Program& p = exe_.programs[id];
    if (isLeaf(p.kind)) {
      if (visited_[id]) return;
      visited_[id] = true;
      const std::uint64_t position = result.order.size();
      result.order.push_back(id);
      for (ir::Id tensor : uses(p)) use(tensor, position);
      return;
    }
    onPath_[id] = true;
    if (p.kind == ir::ProgramKind::Call) {
      visit(p.callee);
    } else if (p.kind == ir::ProgramKind::Repeat) {
      if (!p.children.empty()) visit(p.children[0]);
    } else {
      for (ir::Id child : p.children) visit(child);
    }
    onPath_[id] = false;
  }

  ProgramLiveness finish() {
    for (const auto& [tensor, span] : spans_) result.lifetimes.push_back({tensor, span.first, span.second});
    return std::move(result);
  }

  ProgramLiveness result;

 private:
  static bool isLeaf(ir::ProgramKind kind) {
    return kind == ir::ProgramKind::Execute || kind == ir::ProgramKind::Copy ||
           kind == ir::ProgramKind::StreamCopy || kind == ir::ProgramKind::RemoteCopy || kind == ir::ProgramKind::Sync;
  }

  std::vector<ir::Id> uses(const ir::Program& p) const {
    std::vector<ir::Id> tensors;
    if (p.kind == ir::ProgramKind::Execute) {
      if (p.computeSet >= exe_.computeSets.size())
        throw std::invalid_argument("program " + std::to_string(p.id) + " executes compute set " +
                                    std::to_string(p.computeSet) + ", which does not exist");
      for (const auto& v : exe_.computeSets[p.computeSet].vertices)
        for (const auto& f : v.fields) tensors.push_back(ir::renamedTensor(p, f.ref.tensor));
    } else if (p.kind == ir::ProgramKind::Copy) {
      for (const auto& r : ir::renamedRegions(exe_, p)) {
        tensors.push_back(r.src.tensor);
        tensors.push_back(r.dst.tensor);
      }
    } else if (p.kind == ir::ProgramKind::StreamCopy || p.kind == ir::ProgramKind::RemoteCopy) {
      tensors.push_back(p.tensor.tensor);
    }
    for (ir::Id t : tensors)
      if (t >= exe_.tensors.size())
        throw std::invalid_argument("program " + std::to_string(p.id) + " uses tensor " + std::to_string(t) +
                                    ", which does not exist");
    return tensors;
  }

  void use(ir::Id tensor, std::uint64_t position) {
    auto [it, inserted] = spans_.emplace(tensor, std::make_pair(position, position));
    if (!inserted) it->second.second = position;  // positions only grow
  }

  const ir::Executable& exe_;
  std::vector<bool> visited_, onPath_;
  std::map<ir::Id, std::pair<std::uint64_t, std::uint64_t>> spans_;
};

}  // namespace

ProgramLiveness programLiveness(const ir::Executable& exe, ir::Id entryProgram) {
  OrderWalker walker(exe);
  walker.visit(entryProgram);
  return walker.finish();
}

}  // namespace ipusim::profiler
