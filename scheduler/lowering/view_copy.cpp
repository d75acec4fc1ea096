#include "scheduler/lowering/view_copy.hpp"

#include <algorithm>

namespace ipusim::scheduler {
namespace {

// A view dimension with its stride in the row-major destination too.
struct ViewCopyDim {
  std::uint64_t size, src, dst;
};

}  // namespace

std::vector<ir::CopyRegion> viewCopyRegions(ir::Id src, ir::Id dst, const std::vector<ViewDim>& view) {
  // The destination's row-major strides, then the dimensions of one element
  // dropped and contiguous neighbours merged.
  std::vector<ViewCopyDim> all(view.size());
  std::uint64_t elements = 1;
  for (std::size_t d = view.size(); d-- > 0;) {
    all[d] = {view[d].size, view[d].stride, elements};
    elements *= view[d].size;
  }
  if (elements == 0) return {};
  std::vector<ViewCopyDim> dims;
  for (const ViewCopyDim& d : all) {
    if (d.size == 1) continue;
    if (!dims.empty() && dims.back().src == d.size * d.src && dims.back().dst == d.size * d.dst) {
      dims.back() = {dims.back().size * d.size, d.src, d.dst};
      continue;
    }
    dims.push_back(d);
  }
  // The run: the innermost dimension when it is contiguous in both.
  std::uint64_t run = 1;
  if (!dims.empty() && dims.back().src == 1 && dims.back().dst == 1) {
    run = dims.back().size;
    dims.pop_back();
  }
  // The rows: the largest dimension left.
  ViewCopyDim rows{1, 0, 0};
  if (!dims.empty()) {
    const auto largest = std::max_element(dims.begin(), dims.end(), [](const ViewCopyDim& a, const ViewCopyDim& b) { return a.size < b.size; });
    rows = *largest;
    dims.erase(largest);
  }
  std::vector<ir::CopyRegion> regions;
  std::vector<std::uint64_t> index(dims.size(), 0);
  for (;;) {
    std::uint64_t s = 0, t = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) s += index[d] * dims[d].src, t += index[d] * dims[d].dst;
    ir::CopyRegion r{{src, s, s + run}, {dst, t, t + run}};
    if (rows.size > 1) r.rows = rows.size, r.srcStride = rows.src, r.dstStride = rows.dst;
    regions.push_back(r);
    std::size_t d = dims.size();
    while (d > 0 && ++index[d - 1] == dims[d - 1].size) index[--d] = 0;
    if (d == 0) break;
  }
  return regions;
}

}  // namespace ipusim::scheduler
