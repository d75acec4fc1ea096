// Executable::validate: structural checks of a compiled graph, each error
// naming the element by its path ("computeSets[3] 'fwd/matmul' vertex 7: ...").
#include "model/ir/executable.hpp"
#include "model/ir/range_text.hpp"
#include "model/ir/renames.hpp"
#include "model/ir/tensor_intervals.hpp"
#include "model/ir/tile_memory_usage.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace ipusim::ir {
namespace {

// One row of a Copy's regions: its source or destination range, the
// declared region and the row index in it.
struct Row {
  Id tensor = kNoId;
  std::uint64_t begin = 0, end = 0;
  std::size_t region = 0;
  std::uint64_t row = 0;
};

// The non-empty source (or destination) rows of a Copy's regions in address
// order (tensor, begin; then region and row), merged from the regions' own
// ordered rows (a stride of 0 or more): memory by regions, not by rows.
// peek(i) looks i rows ahead (i < 2).
class RowsInOrder {
 public:
  RowsInOrder(const std::vector<CopyRegion>& regions, bool sources) : regions_(regions), sources_(sources) {
    ahead_.reserve(2);  // (peek's pointers stay valid while at most two rows wait)
    for (std::size_t r = 0; r < regions.size(); ++r) push(r, 0);
  }
  const Row* peek(std::size_t ahead) {
    while (ahead_.size() <= ahead && !heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      const Row row = heap_.back();
      heap_.pop_back();
      push(row.region, row.row + 1);
      ahead_.push_back(row);
    }
    return ahead < ahead_.size() ? &ahead_[ahead] : nullptr;
  }
  void pop() {
    if (peek(0)) ahead_.erase(ahead_.begin());
  }

 private:
  static bool later(const Row& a, const Row& b) {  // (the heap's top is the earliest row)
    return std::tie(a.tensor, a.begin, a.region, a.row) > std::tie(b.tensor, b.begin, b.region, b.row);
  }
  void push(std::size_t r, std::uint64_t k) {
    const CopyRegion& region = regions_[r];
    if (k >= std::max<std::uint64_t>(1, region.rows)) return;
    const TensorRef& ref = sources_ ? region.src : region.dst;
    if (ref.size() == 0) return;  // (an empty row meets nothing; a region of them has one row)
    const std::uint64_t shift = k * (sources_ ? region.srcStride : region.dstStride);
    heap_.push_back({ref.tensor, ref.begin + shift, ref.end + shift, r, k});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  const std::vector<CopyRegion>& regions_;
  bool sources_;
  std::vector<Row> heap_;
  std::vector<Row> ahead_;
};

class Validator {
 public:
  Validator(const Executable& exe, std::uint32_t numTiles) : exe_(exe), numTiles_(numTiles) {}

  void run() {
    for (std::size_t i = 0; i < exe_.tensors.size(); ++i) checkTensor(i);
    for (std::size_t i = 0; i < exe_.computeSets.size(); ++i) checkComputeSet(i);
    for (std::size_t i = 0; i < exe_.streams.size(); ++i) checkStream(i);
    std::map<std::string, std::size_t> remoteNames;  // each remote buffer's name once (as a stream's)
    for (std::size_t i = 0; i < exe_.remoteBuffers.size(); ++i) checkRemoteBuffer(i, remoteNames);
    for (std::size_t i = 0; i < exe_.programs.size(); ++i) checkProgram(i);
    checkRemoteBuffersUsed();
    checkProgramsAcyclic();
    checkEntryPoints();
    checkMirror();
  }

 private:
  [[noreturn]] static void fail(const std::string& where, const std::string& what) {
    throw std::invalid_argument(where + ": " + what);
  }

  static std::string named(const char* table, std::size_t i, const std::string& name) {
    return std::string(table) + "[" + std::to_string(i) + "] '" + name + "'";
  }

  std::string tensorName(Id id) const { return "'" + exe_.tensors[id].name + "'"; }

  void checkId(const std::string& where, Id id, std::size_t index) const {
    if (id != index) fail(where, "id is " + std::to_string(id) + ", expected its index " + std::to_string(index));
  }

  void checkTensor(std::size_t i) const {
    const Tensor& t = exe_.tensors[i];
    const std::string where = named("tensors", i, t.name);
    checkId(where, t.id, i);
    std::uint64_t n = 1;
    for (auto d : t.shape) {
      if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / sizeOf(t.dtype) / d)
        fail(where, "shape has too many elements to address");
      n *= d;
    }
    std::uint64_t next = 0;
    for (std::size_t k = 0; k < t.mapping.size(); ++k) {
      const TileInterval& iv = t.mapping[k];
      // Named only on failure: a replicated tensor has an interval per tile and replica.
      const auto at = [&] { return "mapping[" + std::to_string(k) + "] " + rangeText(iv.begin, iv.end); };
      if (iv.begin >= iv.end) fail(where, at() + " is empty or reversed");
      if (iv.begin < next) fail(where, at() + " overlaps or is out of order (previous interval ends at " + std::to_string(next) + ")");
      if (iv.begin > next) fail(where, "elements " + rangeText(next, iv.begin) + " are not mapped to any tile");
      if (iv.end > n) fail(where, at() + " goes past the tensor's " + std::to_string(n) + " elements");
      if (iv.tile >= numTiles_)
        fail(where, at() + " is on tile " + std::to_string(iv.tile) + ", but the target has " + std::to_string(numTiles_) + " tiles");
      // (Its end is rounded up to the tile memory's alignment: an end within
      // 8 bytes of 2^64 rounded to 0, and the tile counted as empty.)
      const std::uint64_t bytes = (iv.end - iv.begin) * sizeOf(t.dtype);
      constexpr std::uint64_t kHighestEnd = std::numeric_limits<std::uint64_t>::max() - (kTileMemoryAlignment - 1);
      if (iv.address != TileInterval::kUnplaced && (bytes > kHighestEnd || iv.address > kHighestEnd - bytes))
        fail(where, at() + " address " + std::to_string(iv.address) + " overflows");
      next = iv.end;
    }
    if (next != n) fail(where, "elements " + rangeText(next, n) + " are not mapped to any tile");
    if (t.drawnInit && !t.initialValue.empty())
      fail(where, "has both initialValue and initialUniform / initialNormal / initialOrthogonal / initialIdentity; expected one");
    if (t.drawnInit) checkMatrixInit(where, t, n);
    if (t.drawnInit && !(std::isfinite(t.drawnInit->limit) && t.drawnInit->limit >= 0))
      fail(where, "initialUniform.limit must be a finite number >= 0");
    if (t.drawnInit && !std::isfinite(t.drawnInit->center)) fail(where, "initialUniform.center / initialNormal.mean must be finite");
    if (t.drawnInit && !(std::isfinite(t.drawnInit->stddev) && t.drawnInit->stddev >= 0))
      fail(where, "initialNormal.stddev must be a finite number >= 0");
    if (t.drawnInit && t.dtype != DType::Float && t.dtype != DType::Half)
      fail(where, "initialUniform / initialNormal / initialOrthogonal / initialIdentity needs a float or half tensor, not " +
                      std::string(toString(t.dtype)));
    if (!t.initialValue.empty() && t.initialValue.size() != n)
      fail(where, "initialValue has " + std::to_string(t.initialValue.size()) + " values, expected " + std::to_string(n) + " (or none)");
  }

  // Orthogonal and Identity initial values: a rows x cols matrix of the
  // tensor's n elements, a finite gain.
  void checkMatrixInit(const std::string& where, const Tensor& t, std::uint64_t n) const {
    const DrawnInit& d = *t.drawnInit;
    const bool orthogonal = d.distribution == DrawnInit::Distribution::Orthogonal;
    if (!orthogonal && d.distribution != DrawnInit::Distribution::Identity) return;
    const std::string key = orthogonal ? "initialOrthogonal" : "initialIdentity";
    if (!std::isfinite(d.gain)) fail(where, key + ".gain must be a finite number");
    if (d.rows == 0 || n % d.rows != 0 || n / d.rows != d.cols)
      fail(where, key + ".rows x cols is " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + ", expected " +
                      std::to_string(n) + " elements (the tensor's)");
  }

  // A ref must name a tensor and stay inside it.
  void checkRef(const std::string& where, const std::string& what, const TensorRef& ref) const {
    if (ref.tensor >= exe_.tensors.size())
      fail(where, what + " refers to tensor " + std::to_string(ref.tensor) + ", but there are " +
                      std::to_string(exe_.tensors.size()) + " tensors");
    const Tensor& t = exe_.tensors[ref.tensor];
    if (ref.begin > ref.end || ref.end > t.numElements())
      fail(where, what + " elements " + rangeText(ref.begin, ref.end) + " are outside tensor " + tensorName(ref.tensor) +
                      " of " + std::to_string(t.numElements()) + " elements");
  }

  void checkScalarCondition(const std::string& where, const TensorRef& ref) const {
    checkRef(where, "condition", ref);
    if (ref.size() != 1) fail(where, "condition must be one element, got " + std::to_string(ref.size()));
    const DType type = exe_.tensors[ref.tensor].dtype;
    if (type == DType::Float || type == DType::Half)
      fail(where, "condition tensor " + tensorName(ref.tensor) + " must be bool, int or uint, not " + toString(type));
  }

  void checkComputeSet(std::size_t i) const {
    const ComputeSet& cs = exe_.computeSets[i];
    const std::string base = named("computeSets", i, cs.name);
    checkId(base, cs.id, i);
    for (std::size_t v = 0; v < cs.vertices.size(); ++v) {
      const Vertex& vertex = cs.vertices[v];
      // Graphs have hundreds of thousands of vertices: the checks run without
      // building a message first; only a failing vertex is checked again with
      // the messages below.
      if (vertexPasses(vertex)) continue;
      const std::string where = base + " vertex " + std::to_string(v);
      if (vertex.codelet.empty()) fail(where, "codelet name is empty");
      if (vertex.tile >= numTiles_)
        fail(where, "tile " + std::to_string(vertex.tile) + " is out of range (the target has " + std::to_string(numTiles_) + " tiles)");
      std::set<std::string> seen;
      for (const VertexField& field : vertex.fields) {
        const std::string what = "field '" + field.name + "'";
        if (field.name.empty()) fail(where, "a field has an empty name");
        if (!seen.insert(field.name).second) fail(where, what + " is connected twice");
        checkRef(where, what, field.ref);
        checkOnTile(where, what, field.ref, vertex.tile);
      }
    }
  }

  // The checks of checkComputeSet's vertex loop, without messages.
  bool vertexPasses(const Vertex& vertex) const {
    if (vertex.codelet.empty() || vertex.tile >= numTiles_) return false;
    for (std::size_t f = 0; f < vertex.fields.size(); ++f) {
      const VertexField& field = vertex.fields[f];
      if (field.name.empty()) return false;
      for (std::size_t g = 0; g < f; ++g)
        if (vertex.fields[g].name == field.name) return false;
      const TensorRef& ref = field.ref;
      if (ref.tensor >= exe_.tensors.size()) return false;
      const Tensor& t = exe_.tensors[ref.tensor];
      if (ref.begin > ref.end || ref.end > t.numElements()) return false;
      bool elsewhere = false;
      forEachIntervalOf(t, ref.begin, ref.end,
                        [&](const TileInterval& iv, std::uint64_t, std::uint64_t) { elsewhere |= iv.tile != vertex.tile; });
      if (elsewhere) return false;
    }
    return true;
  }

  // Every element of `ref` must live on `tile` (mapping is sorted: checked above).
  void checkOnTile(const std::string& where, const std::string& what, const TensorRef& ref, std::uint32_t tile) const {
    const Tensor& t = exe_.tensors[ref.tensor];
    // (Big graphs have thousands of vertices reading slices of tensors spread over every tile.)
    forEachIntervalOf(t, ref.begin, ref.end, [&](const TileInterval& iv, std::uint64_t lo, std::uint64_t hi) {
      if (iv.tile != tile)
        fail(where, what + " elements " + rangeText(lo, hi) + " of tensor " + tensorName(ref.tensor) + " are not on tile " +
                        std::to_string(tile) + " (they are on tile " + std::to_string(iv.tile) + ")");
    });
  }

  void checkStream(std::size_t i) const {
    const Stream& s = exe_.streams[i];
    const std::string where = named("streams", i, s.name);
    checkId(where, s.id, i);
    if (s.name.empty()) fail(where, "name is empty");
    for (std::size_t k = 0; k < i; ++k)
      if (exe_.streams[k].name == s.name) fail(where, "name is already used by streams[" + std::to_string(k) + "]");
    if (s.elementsPerCopy == 0) fail(where, "elementsPerCopy must be > 0");
    if (s.bufferDepth == 0) fail(where, "bufferDepth must be >= 1");
  }

  void checkRemoteBuffer(std::size_t i, std::map<std::string, std::size_t>& names) const {
    const RemoteBuffer& b = exe_.remoteBuffers[i];
    const std::string where = named("remoteBuffers", i, b.name);
    checkId(where, b.id, i);
    if (b.name.empty()) fail(where, "name is empty");
    if (b.elements == 0) fail(where, "elements must be > 0");
    // (Its bytes, elements x the dtype's size, wrapped: 2^62 floats counted
    // as 0 bytes of Streaming Memory, and were accepted.)
    if (b.elements > std::numeric_limits<std::uint64_t>::max() / sizeOf(b.dtype))
      fail(where, "elements " + std::to_string(b.elements) + " of " + toString(b.dtype) +
                      " are more bytes than 64 bits count: expected at most " +
                      std::to_string(std::numeric_limits<std::uint64_t>::max() / sizeOf(b.dtype)));
    if (const auto [it, added] = names.emplace(b.name, i); !added)
      fail(where, "name is already used by remoteBuffers[" + std::to_string(it->second) + "]");
    if (!b.initialValue.empty() && b.initialValue.size() != b.elements)
      fail(where, "initialValue has " + std::to_string(b.initialValue.size()) + " values, expected " +
                      std::to_string(b.elements) + " (or none: zeros)");
  }

  // Every remote buffer is some RemoteCopy's (the compiler writes none
  // other): a buffer no copy uses is never read, yet a functional load
  // backs it with host memory, so that a 224 KB graph holding one of 2^34
  // floats (under the 112 GB of an ipu2's Streaming Memory) took 64 GiB.
  // A used buffer holds a tensor region's elements (checkRegionMatches).
  void checkRemoteBuffersUsed() const {
    std::vector<bool> used(exe_.remoteBuffers.size(), false);
    for (const Program& p : exe_.programs)
      if (p.kind == ProgramKind::RemoteCopy) used[p.remoteBuffer] = true;
    for (std::size_t i = 0; i < used.size(); ++i)
      if (!used[i])
        fail(named("remoteBuffers", i, exe_.remoteBuffers[i].name),
             "no RemoteCopy program loads or stores it: expected every remote buffer to be copied to or from a "
             "tensor");
  }

  // A StreamCopy's or RemoteCopy's tensor region: inside its tensor, with
  // the elements and dtype of what it is copied to or from (`other`, which
  // `verb` its `elements`: "stream 'x'" copies, "remote buffer 'y'" holds).
  void checkRegionMatches(const std::string& where, const TensorRef& ref, const std::string& other, const char* verb,
                          std::uint64_t elements, DType dtype) const {
    checkRef(where, "tensor", ref);
    if (ref.size() != elements)
      fail(where, "tensor region has " + std::to_string(ref.size()) + " elements but " + other + " " + verb + " " +
                      std::to_string(elements));
    if (exe_.tensors[ref.tensor].dtype != dtype)
      fail(where, std::string("tensor is ") + toString(exe_.tensors[ref.tensor].dtype) + " but " + other + " is " +
                      toString(dtype));
  }

  void checkChildCount(const std::string& where, const Program& p, std::size_t min, std::size_t max) const {
    const std::size_t n = p.children.size();
    if (n < min || n > max) {
      const std::string expected = min == max ? std::to_string(min) : std::to_string(min) + " or " + std::to_string(max);
      fail(where, std::string(toString(p.kind)) + " needs " + expected + " child program(s), has " + std::to_string(n));
    }
  }

  void checkProgramId(const std::string& where, const std::string& what, Id id) const {
    if (id >= exe_.programs.size())
      fail(where, what + " " + (id == kNoId ? std::string("is not set") : std::to_string(id) + " is out of range") +
                      " (there are " + std::to_string(exe_.programs.size()) + " programs)");
  }

  void checkCopyRegion(const std::string& where, const std::string& prefix, const CopyRegion& r) const {
    checkRef(where, prefix + "src", r.src);
    checkRef(where, prefix + "dst", r.dst);
    if (r.src.size() != r.dst.size())
      fail(where, prefix + "src has " + std::to_string(r.src.size()) + " elements but " + prefix + "dst has " +
                      std::to_string(r.dst.size()));
    const DType a = exe_.tensors[r.src.tensor].dtype, b = exe_.tensors[r.dst.tensor].dtype;
    if (a != b) fail(where, prefix + "src is " + toString(a) + " but " + prefix + "dst is " + toString(b));
  }

  // The checks of checkCopy's region loop, without messages.
  bool regionPasses(const CopyRegion& region) const {
    auto rowPasses = [&](const TensorRef& src, const TensorRef& dst) {
      for (const TensorRef* ref : {&src, &dst})
        if (ref->tensor >= exe_.tensors.size() || ref->begin > ref->end ||
            ref->end > exe_.tensors[ref->tensor].numElements())
          return false;
      return src.size() == dst.size() && exe_.tensors[src.tensor].dtype == exe_.tensors[dst.tensor].dtype;
    };
    if (!rowPasses(region.src, region.dst)) return false;
    if (region.rows <= 1) return true;
    const std::uint64_t last = region.rows - 1;
    if (region.dst.size() == 0 || region.dstStride < region.dst.size() ||
        region.srcStride > (~0ull - region.src.end) / last || region.dstStride > (~0ull - region.dst.end) / last)
      return false;
    const std::uint64_t srcShift = last * region.srcStride, dstShift = last * region.dstStride;
    return rowPasses({region.src.tensor, region.src.begin + srcShift, region.src.end + srcShift},
                     {region.dst.tensor, region.dst.begin + dstShift, region.dst.end + dstShift});
  }

  // Whether any region's destination extent meets another region's source
  // or destination extent in the same tensor, or a 2-D region's own source
  // extent (its rows are copied in order: a row must not read another's output).
  static bool extentsMeet(const std::vector<CopyRegion>& regions) {
    struct Span { Id tensor; std::uint64_t begin, end; std::size_t region; };
    auto extent = [](const TensorRef& ref, const CopyRegion& r, std::uint64_t stride, std::size_t index) {
      const std::uint64_t last = r.rows > 1 ? (r.rows - 1) * stride : 0;
      return Span{ref.tensor, ref.begin, ref.end + last, index};
    };
    std::vector<Span> dsts;
    for (std::size_t i = 0; i < regions.size(); ++i)
      if (regions[i].dst.size()) dsts.push_back(extent(regions[i].dst, regions[i], regions[i].dstStride, i));
    auto less = [](const Span& a, const Span& b) { return a.tensor != b.tensor ? a.tensor < b.tensor : a.begin < b.begin; };
    std::sort(dsts.begin(), dsts.end(), less);
    for (std::size_t k = 1; k < dsts.size(); ++k)
      if (dsts[k].tensor == dsts[k - 1].tensor && dsts[k].begin < dsts[k - 1].end) return true;
    for (std::size_t i = 0; i < regions.size(); ++i) {
      if (!regions[i].src.size()) continue;
      const Span src = extent(regions[i].src, regions[i], regions[i].srcStride, i);
      auto it = std::upper_bound(dsts.begin(), dsts.end(), src, [](const Span& v, const Span& d) {
        return v.tensor != d.tensor ? v.tensor < d.tensor : v.begin < d.end;
      });
      // (A 1-D region's own src and dst may meet: memmove. A 2-D region's
      // may not, row against other row: its rows are checked one by one.)
      for (; it != dsts.end() && it->tensor == src.tensor && it->begin < src.end; ++it)
        if (it->region != i || regions[i].rows > 1) return true;
    }
    return false;
  }

  // A multi-region Copy is one exchange phase: every region is read before
  // any is written, so no destination may meet another region's source or
  // destination (a region's own src and dst may overlap: memmove, as for a
  // single-region Copy).
  void checkCopy(const std::string& where, const Program& p) const {
    if (p.regions.empty()) {
      checkCopyRegion(where, "", CopyRegion{p.src, p.dst});
      return;
    }
    if (p.src.tensor != kNoId || p.dst.tensor != kNoId)
      fail(where, "has both src/dst and regions; a multi-region Copy uses regions only");
    // 2-D regions are checked by their first and last rows.
    for (std::size_t r = 0; r < p.regions.size(); ++r) {
      const CopyRegion& region = p.regions[r];
      // As for vertices: a region is checked without messages first, and
      // only a failing one again with them (a Copy has up to millions).
      if (regionPasses(region)) continue;
      const std::string prefix = "regions[" + std::to_string(r) + "].";
      checkCopyRegion(where, prefix, CopyRegion{region.src, region.dst});
      if (region.rows > 1) {
        // Empty rows bound nothing: 2^62 of them passed every check, and the
        // load walked them one by one for ever.
        if (region.dst.size() == 0)
          fail(where, prefix + "rows is " + std::to_string(region.rows) +
                          ", but a row has 0 elements: expected rows of at least one element, or rows 1");
        if (region.dstStride < region.dst.size())
          fail(where, prefix + "dstStride " + std::to_string(region.dstStride) + " is less than a row (" +
                          std::to_string(region.dst.size()) + " elements): its rows would overwrite each other");
        const std::uint64_t last = region.rows - 1;
        if (region.srcStride > (~0ull - region.src.end) / last || region.dstStride > (~0ull - region.dst.end) / last)
          fail(where, prefix + "rows x stride overflows");
        checkCopyRegion(where, prefix + "last row's ", CopyRegion{
            {region.src.tensor, region.src.begin + last * region.srcStride, region.src.end + last * region.srcStride},
            {region.dst.tensor, region.dst.begin + last * region.dstStride, region.dst.end + last * region.dstStride}});
      }
    }
    // Overlaps: first between the regions' extents (first row to last row),
    // exact for 1-D regions; only when extents meet are 2-D regions checked
    // row by row (a gather of a large matmul has millions of rows).
    if (!extentsMeet(p.regions)) return;
    // Rows are walked in address order, merged from the regions (each
    // region's rows come in that order already), never all held at once: the
    // list of every row took about 100 bytes a row, so that an 87 KB graph of
    // two interleaved regions of 5e7 rows each took 10 GB and minutes.
    auto describe = [&](const char* what, const Row& row) {
      // (a 2-D region's row named too: two rows of one region may meet)
      return "regions[" + std::to_string(row.region) + "]." +
             (p.regions[row.region].rows > 1 ? "row " + std::to_string(row.row) + "'s " : std::string()) + what + " " +
             rangeText(row.begin, row.end) + " of tensor " + tensorName(row.tensor);
    };
    // Destinations: disjoint, so each meets none before it once sorted.
    RowsInOrder dsts(p.regions, false);
    Row last{};
    for (bool first = true; const Row* row = dsts.peek(0); first = false) {
      if (!first && row->tensor == last.tensor && row->begin < last.end)
        fail(where, describe("dst", *row) + " overlaps " + describe("dst", last));
      last = *row;
      dsts.pop();
    }
    // Sources against the (disjoint, sorted) destinations: those ending at or
    // before a source's start meet no later source either. A source may meet
    // its own row's destination (memmove), so it is an error from the first
    // other one: two destinations are looked at.
    RowsInOrder srcs(p.regions, true);
    RowsInOrder dst(p.regions, false);
    for (; const Row* src = srcs.peek(0); srcs.pop()) {
      const auto before = [&](const Row& d) {
        return d.tensor != src->tensor ? d.tensor < src->tensor : d.end <= src->begin;
      };
      while (dst.peek(0) && before(*dst.peek(0))) dst.pop();
      for (std::size_t ahead = 0; ahead < 2; ++ahead) {
        const Row* d = dst.peek(ahead);
        if (!d || d->tensor != src->tensor || d->begin >= src->end) break;
        if (d->region != src->region || d->row != src->row)
          fail(where, describe("src", *src) + " overlaps " + describe("dst", *d) +
                          " (a Copy reads all its regions before writing any)");
      }
    }
  }

  // An Execute's renames: each `from` once, in ascending order, and each `to`
  // a tensor of the same dtype laid out as `from` tile by tile (the compute
  // set's fields then lie on their vertices' tiles whichever tensor they touch).
  void checkRenames(const std::string& where, const Program& p) const {
    for (std::size_t i = 0; i < p.renames.size(); ++i) {
      const TensorRename& r = p.renames[i];
      const std::string at = where + ": renames[" + std::to_string(i) + "]";
      for (Id t : {r.from, r.to})
        if (t >= exe_.tensors.size())
          fail(at, "tensor " + std::to_string(t) + " is out of range (there are " +
                       std::to_string(exe_.tensors.size()) + " tensors)");
      if (i > 0 && r.from <= p.renames[i - 1].from)
        fail(at, "from " + std::to_string(r.from) + " is not above the previous rename's " +
                     std::to_string(p.renames[i - 1].from) + " (renames are sorted by 'from', each tensor once)");
      const Tensor &from = exe_.tensors[r.from], &to = exe_.tensors[r.to];
      if (from.dtype != to.dtype || from.numElements() != to.numElements())
        fail(at, "tensor '" + to.name + "' (" + std::to_string(to.numElements()) + " " + toString(to.dtype) +
                     ") does not have the shape of '" + from.name + "' (" + std::to_string(from.numElements()) +
                     " " + toString(from.dtype) + ")");
      if (layoutOf(r.from) != layoutOf(r.to))
        fail(at, "tensor '" + to.name + "' is not mapped over the tiles of '" + from.name +
                     "' interval by interval (a renamed field must stay on its vertex's tile)");
    }
  }

  // Tensor t's layout, numbered: tensors whose intervals have the same
  // tiles, begins and ends (addresses aside) share a number. Renames compare
  // these numbers: comparing the two mappings rename by rename took programs
  // x intervals (40,000 programs renaming a tensor of 200,000 intervals: 14 s
  // of an 18 MB graph's 16; a graph of 1 GiB, days). Each tensor is hashed
  // once and compared once with the first tensor of its hash.
  std::size_t layoutOf(Id t) const {
    const auto [known, added] = layoutOfTensor_.emplace(t, 0);
    if (!added) return known->second;
    const std::vector<TileInterval>& mapping = exe_.tensors[t].mapping;
    std::uint64_t hash = mapping.size();
    for (const TileInterval& iv : mapping)
      for (std::uint64_t v : {std::uint64_t(iv.tile), iv.begin, iv.end})
        hash = (hash ^ v) * 0x100000001b3ull + (hash >> 29);
    std::vector<Id>& sameHash = tensorsOfHash_[hash];
    for (Id other : sameHash) {
      const std::vector<TileInterval>& theirs = exe_.tensors[other].mapping;
      if (theirs.size() == mapping.size() &&
          std::equal(mapping.begin(), mapping.end(), theirs.begin(), [](const TileInterval& a, const TileInterval& b) {
            return a.tile == b.tile && a.begin == b.begin && a.end == b.end;
          }))
        return known->second = layoutOfTensor_.at(other);
    }
    sameHash.push_back(t);
    return known->second = layoutOfTensor_.size();  // (a number no other layout has)
  }

  // A Copy moving Copy `copyOf`'s regions renamed: that Copy holds its own
  // regions, this one none, and the regions as this one moves them are a
  // valid Copy (checked as one, so a rename cannot make them overlap).
  void checkRenamedCopy(const std::string& where, const Program& p) const {
    if (p.copyOf >= exe_.programs.size())
      fail(where, "copyOf " + std::to_string(p.copyOf) + " is out of range (there are " +
                      std::to_string(exe_.programs.size()) + " programs)");
    const Program& holder = exe_.programs[p.copyOf];
    if (holder.kind != ProgramKind::Copy || holder.copyOf != kNoId)
      fail(where, "copyOf " + std::to_string(p.copyOf) + " ('" + holder.name +
                      "') is not a Copy holding its own regions");
    if (!p.regions.empty() || p.src.tensor != kNoId || p.dst.tensor != kNoId)
      fail(where, "has copyOf and regions of its own; expected one or the other");
    checkRenames(where, p);
    checkCopy(where, withOwnRegions(exe_, p));
  }

  // A Sequence running its IPUs apart times Execute and Copy children only
  // (the executor has no per-IPU clock for the others).
  void checkApart(const std::string& where, const Program& p) const {
    if (p.kind != ProgramKind::Sequence) fail(where, "ipusApart is set, but only a Sequence runs its IPUs apart");
    for (std::size_t c = 0; c < p.children.size(); ++c) {
      const Program& child = exe_.programs[p.children[c]];
      if (child.kind != ProgramKind::Execute && child.kind != ProgramKind::Copy)
        fail(where, "children[" + std::to_string(c) + "] ('" + child.name + "') is a " + toString(child.kind) +
                        "; a Sequence with ipusApart runs Execute and Copy children only");
    }
  }

  void checkProgram(std::size_t i) const {
    const Program& p = exe_.programs[i];
    const std::string where = named("programs", i, p.name) + " (" + toString(p.kind) + ")";
    checkId(where, p.id, i);
    for (std::size_t c = 0; c < p.children.size(); ++c)
      if (p.children[c] >= exe_.programs.size())  // (the message is built only for a wrong id)
        checkProgramId(where, "children[" + std::to_string(c) + "]", p.children[c]);
    if (p.ipusApart) checkApart(where, p);
    switch (p.kind) {
      case ProgramKind::Sequence: break;
      case ProgramKind::Execute:
        checkChildCount(where, p, 0, 0);
        if (p.computeSet >= exe_.computeSets.size())
          fail(where, "computeSet " + std::to_string(p.computeSet) + " is out of range (there are " +
                          std::to_string(exe_.computeSets.size()) + " compute sets)");
        checkRenames(where, p);
        break;
      case ProgramKind::Copy:
        checkChildCount(where, p, 0, 0);
        if (p.copyOf != kNoId) {
          checkRenamedCopy(where, p);
        } else {
          if (!p.renames.empty()) fail(where, "has renames but no copyOf (a Copy renames another Copy's tensors)");
          checkCopy(where, p);
        }
        break;
      case ProgramKind::StreamCopy: {
        checkChildCount(where, p, 0, 0);
        if (p.stream >= exe_.streams.size())
          fail(where, "stream " + std::to_string(p.stream) + " is out of range (there are " +
                          std::to_string(exe_.streams.size()) + " streams)");
        const Stream& s = exe_.streams[p.stream];
        checkRegionMatches(where, p.tensor, "stream '" + s.name + "'", "copies", s.elementsPerCopy, s.dtype);
        break;
      }
      case ProgramKind::RemoteCopy: {
        checkChildCount(where, p, 0, 0);
        if (p.remoteBuffer >= exe_.remoteBuffers.size())
          fail(where, "remoteBuffer " + std::to_string(p.remoteBuffer) + " is out of range (there are " +
                          std::to_string(exe_.remoteBuffers.size()) + " remote buffers)");
        const RemoteBuffer& b = exe_.remoteBuffers[p.remoteBuffer];
        checkRegionMatches(where, p.tensor, "remote buffer '" + b.name + "'", "holds", b.elements, b.dtype);
        break;
      }
      case ProgramKind::Repeat: checkChildCount(where, p, 1, 1); break;
      case ProgramKind::RepeatWhileTrue:
        checkChildCount(where, p, 2, 2);
        checkScalarCondition(where, p.condition);
        break;
      case ProgramKind::If:
        checkChildCount(where, p, 1, 2);
        checkScalarCondition(where, p.condition);
        break;
      case ProgramKind::Sync: checkChildCount(where, p, 0, 0); break;
      case ProgramKind::Call:
        checkChildCount(where, p, 0, 0);
        checkProgramId(where, "callee", p.callee);
        break;
      default: fail(where, "invalid program kind " + std::to_string(int(p.kind)));
    }
  }

  // A program that reaches itself (through children or Call) would never end;
  // one nesting more than kMaxProgramDepth levels (its height, counted when
  // the walk leaves it) would overflow the recursive program walk's stack.
  void checkProgramsAcyclic() const {
    enum State : std::uint8_t { Unvisited, Active, Done };
    std::vector<State> state(exe_.programs.size(), Unvisited);
    std::vector<std::size_t> height(exe_.programs.size(), 0);
    std::vector<std::pair<Id, std::size_t>> stack;  // program, next edge
    auto edgeCount = [&](Id id) {
      const Program& p = exe_.programs[id];
      return p.children.size() + (p.kind == ProgramKind::Call ? 1 : 0);
    };
    auto edge = [&](Id id, std::size_t k) {
      const Program& p = exe_.programs[id];
      return k < p.children.size() ? p.children[k] : p.callee;
    };
    for (Id root = 0; root < exe_.programs.size(); ++root) {
      if (state[root] != Unvisited) continue;
      stack.push_back({root, 0});
      state[root] = Active;
      while (!stack.empty()) {
        const Id id = stack.back().first;
        const std::size_t next = stack.back().second++;
        if (next == edgeCount(id)) {
          for (std::size_t k = 0; k < edgeCount(id); ++k) height[id] = std::max(height[id], height[edge(id, k)]);
          if (++height[id] > kMaxProgramDepth)
            fail(named("programs", id, exe_.programs[id].name),
                 "nests programs " + std::to_string(height[id]) + " deep; the limit is " +
                     std::to_string(kMaxProgramDepth) + " (the program walk recurses on a fixed thread stack)");
          state[id] = Done;
          stack.pop_back();
          continue;
        }
        const Id child = edge(id, next);
        if (state[child] == Active)
          fail(named("programs", child, exe_.programs[child].name), "is part of a cycle: it runs itself through program " +
                                                                        std::to_string(id) + " '" + exe_.programs[id].name + "'");
        if (state[child] == Unvisited) {
          state[child] = Active;
          stack.push_back({child, 0});
        }
      }
    }
  }

  void checkEntryPoints() const {
    for (std::size_t i = 0; i < exe_.entryPoints.size(); ++i) {
      const EntryPoint& e = exe_.entryPoints[i];
      const std::string where = named("entryPoints", i, e.name);
      if (e.name.empty()) fail(where, "name is empty");
      for (std::size_t k = 0; k < i; ++k)
        if (exe_.entryPoints[k].name == e.name) fail(where, "name is already used by entryPoints[" + std::to_string(k) + "]");
      checkProgramId(where, "program", e.program);
    }
  }

  // A mirrored phase holds replica 0's work only (replica_mirror.hpp).
  void checkMirror() const {
    const ReplicaMirror& m = exe_.mirror;
    if (!m.active()) return;
    const std::string where = "mirror";
    if (m.tilesPerReplica == 0 || std::uint64_t(m.tilesPerReplica) * m.replicas > numTiles_)
      fail(where, std::to_string(m.replicas) + " replicas of " + std::to_string(m.tilesPerReplica) +
                      " tiles, expected a positive tile count whose product fits the " + std::to_string(numTiles_) +
                      " tiles");
    if (m.computeSets.size() != exe_.computeSets.size() || m.copies.size() != exe_.programs.size())
      fail(where, "flags " + std::to_string(m.computeSets.size()) + " compute sets and " +
                      std::to_string(m.copies.size()) + " programs, expected one flag per compute set (" +
                      std::to_string(exe_.computeSets.size()) + ") and per program (" +
                      std::to_string(exe_.programs.size()) + ")");
    for (std::size_t i = 0; i < m.computeSets.size(); ++i) {
      if (!m.computeSets[i]) continue;
      const ComputeSet& cs = exe_.computeSets[i];
      for (std::size_t v = 0; v < cs.vertices.size(); ++v)
        if (cs.vertices[v].tile >= m.tilesPerReplica)
          fail(named("computeSets", i, cs.name) + " vertex " + std::to_string(v),
               "is mirrored but on tile " + std::to_string(cs.vertices[v].tile) + ", expected replica 0's (below " +
                   std::to_string(m.tilesPerReplica) + ")");
    }
    for (std::size_t i = 0; i < m.copies.size(); ++i)
      if (m.copies[i] && exe_.programs[i].kind != ProgramKind::Copy)
        fail(named("programs", i, exe_.programs[i].name), "is flagged as a mirrored Copy but is a " +
                                                              std::string(toString(exe_.programs[i].kind)));
  }

  const Executable& exe_;
  std::uint32_t numTiles_;
  mutable std::map<Id, std::size_t> layoutOfTensor_;          // (layoutOf)
  mutable std::map<std::uint64_t, std::vector<Id>> tensorsOfHash_;  // a layout's hash -> a tensor of each layout
};

}  // namespace

void Executable::validate(std::uint32_t numTilesTotal) const { Validator(*this, numTilesTotal).run(); }

}  // namespace ipusim::ir
