#include "model/hardware/fused_matmul.hpp"

#include "model/codelets/matmul_kernel.hpp"
#include "model/numeric/half.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {

FusedMatMulPlan::FusedMatMulPlan(const ir::FusedMatMul& product, const MemoryLayout& memory) : f_(product) {
  const auto fail = [&](const std::string& what) {
    const std::string name = f_.out.tensor < memory.numTensors() ? memory.tensor(f_.out.tensor).name : "?";
    throw std::invalid_argument("fused product into '" + name + "': " + what);
  };
  const auto check = [&](const ir::TensorRef& ref, std::uint64_t elements, ir::DType type, const char* which) {
    if (ref.tensor >= memory.numTensors()) fail(std::string(which) + " refers to a tensor that does not exist");
    const ir::Tensor& t = memory.tensor(ref.tensor);
    if (ref.size() != elements || ref.end > t.numElements())
      fail(std::string(which) + " has " + std::to_string(ref.size()) + " elements of '" + t.name + "', expected " +
           std::to_string(elements));
    if (t.dtype != type) fail(std::string(which) + " '" + t.name + "' is " + ir::toString(t.dtype) + ", expected " +
                              ir::toString(type));
  };
  for (ir::DType type : {f_.inputType, f_.outputType})
    if (type != ir::DType::Float && type != ir::DType::Half) fail("types must be float or half");
  if (f_.m == 0 || f_.k == 0 || f_.n == 0 || f_.kSlice == 0) fail("an empty shape or k slice");
  if (f_.rowOffset + f_.m > f_.aRows)
    fail("rows [" + std::to_string(f_.rowOffset) + ", " + std::to_string(f_.rowOffset + f_.m) + ") of a, which has " +
         std::to_string(f_.aRows));
  check(f_.a, f_.aRows * f_.k, f_.inputType, "a");
  check(f_.b, f_.k * f_.n, f_.inputType, "b");
  check(f_.out, f_.m * f_.n, f_.outputType, "out");
  a_ = spans(f_.a, memory);
  b_ = spans(f_.b, memory);
  out_ = spans(f_.out, memory);
}

std::vector<FusedMatMulPlan::Span> FusedMatMulPlan::spans(const ir::TensorRef& ref, const MemoryLayout& memory) {
  std::vector<Span> out;
  for (const RegionPiece& p : memory.pieces(ref)) out.push_back({memory.pointer(p), p.offset, p.elements});
  return out;
}

void FusedMatMulPlan::read(const std::vector<Span>& from, ir::DType type, float* to) {
  for (const Span& s : from) {
    if (type == ir::DType::Float) {
      std::memcpy(to + s.first, s.data, s.elements * 4);
      continue;
    }
    for (std::uint64_t e = 0; e < s.elements; ++e) {
      numeric::HalfBits h;
      std::memcpy(&h, s.data + 2 * e, 2);
      to[s.first + e] = numeric::halfToFloat(h);  // exact
    }
  }
}

namespace {

// Columns of b per panel: a panel (k x width floats) stays in the second-level
// cache while every block of rows reads it. A whole b of 4096 x 4096 read
// with its row stride touched a new page at every step of k: the product
// took 2x the time of the tile program, whose tiles read compact blocks.
constexpr std::uint64_t kPanelBytes = 256 * 1024;
constexpr std::uint64_t kLanes = 16;  // the kernel's widest vector
std::uint64_t panelWidth(std::uint64_t k, std::uint64_t n) {
  return std::min(n, std::max(kLanes, kPanelBytes / 4 / k / kLanes * kLanes));
}

}  // namespace

void FusedMatMulPlan::gather(FusedScratch& scratch) const {
  const std::uint64_t k = f_.k, n = f_.n;
  // Grown, never shrunk: a resize up again would zero the elements anew.
  const auto atLeast = [](std::vector<float>& v, std::uint64_t size) {
    if (v.size() < size) v.resize(size);
  };
  atLeast(scratch.a, f_.aRows * k);
  atLeast(scratch.b, k * n);
  atLeast(scratch.result, f_.m * n);
  atLeast(scratch.stored, std::max(f_.aRows * k, k * n));
  // a as aRows x k, row-major.
  if (f_.transposeA) {
    read(a_, f_.inputType, scratch.stored.data());
    transpose(scratch.stored.data(), scratch.a.data(), k, f_.aRows);
  } else {
    read(a_, f_.inputType, scratch.a.data());
  }
  // b packed: panels of panelWidth columns one after the other, each k x
  // width row-major, from b as stored (k x n, or n x k when transposed).
  read(b_, f_.inputType, scratch.stored.data());
  const float* stored = scratch.stored.data();
  const std::uint64_t width = panelWidth(k, n);
  for (std::uint64_t j0 = 0; j0 < n; j0 += width) {
    const std::uint64_t w = std::min(width, n - j0);
    float* panel = scratch.b.data() + j0 * k;
    if (f_.transposeB)
      transpose(stored + j0 * k, panel, w, k);  // rows j0.. of the stored n x k
    else
      for (std::uint64_t p = 0; p < k; ++p) std::memcpy(panel + p * w, stored + p * n + j0, w * 4);
  }
}

namespace {
std::uint64_t panelsOf(const ir::FusedMatMul& f) {
  const std::uint64_t width = panelWidth(f.k, f.n);
  return (f.n + width - 1) / width;
}
}  // namespace

std::uint64_t FusedMatMulPlan::maxParts() const {
  const std::uint64_t panels = panelsOf(f_);
  return panels > 1 ? panels : (f_.m + 3) / 4;
}

void FusedMatMulPlan::computePart(FusedScratch& scratch, unsigned part, unsigned parts) const {
  // Parts of whole panels (each part then reads its panels of b only, and
  // parts run one after the other read b once, as one part would), or, with
  // one panel, of whole blocks of 4 rows.
  const std::uint64_t panels = panelsOf(f_), width = panelWidth(f_.k, f_.n);
  std::uint64_t i0 = 0, i1 = f_.m, p0 = 0, p1 = panels;
  if (panels > 1) {
    p0 = panels * part / parts, p1 = panels * (part + 1) / parts;
  } else {
    const std::uint64_t blocks = (f_.m + 3) / 4;
    i0 = std::min(f_.m, 4 * (blocks * part / parts)), i1 = std::min(f_.m, 4 * (blocks * (part + 1) / parts));
  }
  for (std::uint64_t panel = p0; panel < p1 && i0 < i1; ++panel) {
    const std::uint64_t j0 = panel * width;
    MatMulArgs x;
    x.a = scratch.a.data() + (f_.rowOffset + i0) * f_.k;  // A(i, p): row rowOffset + i of a
    x.aRowStride = f_.k;
    x.aColStride = 1;
    x.n = std::min(width, f_.n - j0);
    x.b = scratch.b.data() + j0 * f_.k;  // the panel
    x.bStride = x.n;
    x.out = scratch.result.data() + i0 * f_.n + j0;
    x.outStride = f_.n;
    x.m = i1 - i0, x.k = f_.k;
    x.kSlice = f_.kSlice;
    multiplyAccumulate(x);
  }
}

void FusedMatMulPlan::store(const FusedScratch& scratch) const {
  for (const Span& s : out_) {
    const float* from = scratch.result.data() + s.first;
    if (f_.outputType == ir::DType::Float) {
      std::memcpy(s.data, from, s.elements * 4);
      continue;
    }
    for (std::uint64_t e = 0; e < s.elements; ++e) {
      const numeric::HalfBits h = numeric::floatToHalf(from[e]);
      std::memcpy(s.data + 2 * e, &h, 2);
    }
  }
}

FusedMatMuls planFusedMatMuls(const ir::Executable& exe, const MemoryLayout& memory,
                              const std::function<bool(const ir::FusedMatMul&)>& keep) {
  const std::size_t n = exe.programs.size();
  // Where each program runs from: its uses, and its one parent and place there.
  std::vector<std::uint32_t> uses(n, 0);
  std::vector<std::pair<ir::Id, std::size_t>> parent(n, {ir::kNoId, 0});
  for (const ir::Program& p : exe.programs) {
    for (std::size_t i = 0; i < p.children.size(); ++i) ++uses[p.children[i]], parent[p.children[i]] = {p.id, i};
    if (p.kind == ir::ProgramKind::Call && p.callee < n) uses[p.callee] += 2;  // never fused
  }
  for (const ir::EntryPoint& e : exe.entryPoints)
    if (e.program < n) uses[e.program] += 2;
  const auto runsAsOneRun = [&](const std::vector<ir::Id>& programs) {
    if (programs.size() < 2) return false;
    for (ir::Id id : programs) {
      if (id >= n || uses[id] != 1) return false;
      const ir::ProgramKind kind = exe.programs[id].kind;
      if (kind != ir::ProgramKind::Execute && kind != ir::ProgramKind::Copy) return false;
    }
    const auto [seq, at] = parent[programs[0]];
    const ir::Program& s = exe.programs[seq];
    if (s.kind != ir::ProgramKind::Sequence || at + programs.size() > s.children.size()) return false;
    return std::equal(programs.begin(), programs.end(), s.children.begin() + std::ptrdiff_t(at));
  };

  std::map<std::vector<ir::Id>, std::vector<const ir::FusedMatMul*>> byPrograms;
  for (const ir::FusedMatMul& f : exe.fusedMatMuls)
    if (runsAsOneRun(f.programs)) byPrograms[f.programs].push_back(&f);
  // A program in two groups' runs would be skipped for both: neither is fused.
  std::vector<std::uint32_t> groupsOf(n, 0);
  for (const auto& [programs, products] : byPrograms)
    for (ir::Id id : programs) ++groupsOf[id];

  FusedMatMuls out;
  out.groupOfProgram.assign(n, -1);
  for (const auto& [programs, products] : byPrograms) {
    if (std::any_of(programs.begin(), programs.end(), [&](ir::Id id) { return groupsOf[id] != 1; })) continue;
    FusedMatMuls::Group g;
    for (const ir::FusedMatMul* f : products)
      if (!keep || keep(*f)) g.plans.emplace_back(*f, memory);
    g.last = programs.back();
    for (ir::Id id : programs) out.groupOfProgram[id] = std::int32_t(out.groups.size());
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace ipusim::model::hardware
