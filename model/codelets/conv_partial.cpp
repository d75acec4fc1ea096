// The convolution partials (supervisor codelets), over NHWC activations
// and HWIO weights, in conv groups (grouped and depthwise convolutions):
//
// ConvPartialnx1 (AMP), ConvPartialHorizontalMac (HMAC), ConvPartialVerticalMac
// (VMAC): the same function, each with its poplin vertex's cycles. With G =
// convGroups, the input holds G groups of inChans channels, the output G
// groups of outChans:
//   out[b][oy][ox][g oC + co] (+)= sum_{ky,kx,ci} In(b, oy sH + ky kdH - padTop,
//   ox sW + kx kdW - padLeft, g iC + ci) W(ky, kx, g, ci, co), where In reads
//   the input dilated by dilationH/W (zeros between its rows and columns)
//   with implicit zero padding (a coordinate outside the dilated input, or
//   between its points, reads 0): In(b, y, x, c) = in[b][y / dH][x / dW][c]
//   when y % dH == 0, 0 <= y / dH < inH (likewise x); kdH/kdW the kernel's
//   dilation (Keras's dilation_rate). W(ky, kx, g, ci, co) =
//   weights[ky][kx][ci][g oC + co] (a grouped kernel as Keras stores it), or
//   with `flipped` weights[kH-1-ky][kW-1-kx][co][g iC + ci] (the forward
//   kernel read for the input gradient: dx is the convolution of dy,
//   dilated by the stride, with the flipped kernel, in and out channels
//   swapped, as poplin's backward pass transforms it).
//   Cycles: poplin's estimates, conv_cycle_model.hpp (ConvPartialnx1: conv
//   groups one after another, channels padded to the AMP's groups) and
//   conv_mac_cycle_model.hpp (HMAC; VMAC, half activations only, one output
//   channel per group, convGroupsPerGroup groups per vector).
//
// ConvWeightUpdatePartial (AMP), ConvWeightUpdateHorizontalMac (HMAC):
//   out[ky][kx][ci][g oC + co] (+)= sum_{b,oy,ox}
//   In(b, oy sH + ky kdH - padTop, ox sW + kx kdW - padLeft, g iC + ci) deltas[b][oy][ox][g oC + co].
//   Cycles: poplin plans a weight update as the convolution of
//   getWeightUpdateParams (batch <-> input channels, the deltas as the kernel)
//   and its expandDims transform folds the deltas' spatial dims into the input
//   channels, leaving a 1x1 convolution of kH kW ci field positions (batch
//   ci, rows kH, columns kW), b oH oW input and co output channels per group:
//   ConvPartial1x1Out, cycles::ampMatMulCycles(kH kW ci, b oH oW, co, G
//   conv groups), or ConvPartialHorizontalMac on that convolution.
//
// Typed variants <half,float> and <half,half>: half in and weights (deltas),
// float or half partials, computed in float (HalfCodelet) and rounded once
// per half store; cycles for half activations.
//
// Layout transposes cost nothing extra: the compiler lays the operands out
// for the vertex, as poplin does (MatMulPartial takes the same stance).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/conv_cycle_model.hpp"
#include "model/codelets/conv_mac_cycle_model.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/float_vectors.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ipusim::model {
namespace {

// The geometry both codelets share, read from params 0..12 (see kGeometry).
struct Geometry {
  std::uint64_t batch, inH, inW, inChans, outH, outW, outChans, kH, kW, sH, sW;
  std::int64_t padTop, padLeft;
  std::uint64_t dH = 1, dW = 1;    // input dilation
  std::uint64_t groups = 1;        // conv groups (inChans, outChans per group)
  std::uint64_t kdH = 1, kdW = 1;  // kernel dilation
  static Geometry of(const double* p) {
    return {std::uint64_t(p[0]), std::uint64_t(p[1]), std::uint64_t(p[2]), std::uint64_t(p[3]),
            std::uint64_t(p[4]), std::uint64_t(p[5]), std::uint64_t(p[6]), std::uint64_t(p[7]),
            std::uint64_t(p[8]), std::uint64_t(p[9]), std::uint64_t(p[10]), std::int64_t(p[11]),
            std::int64_t(p[12])};
  }
  std::uint64_t inC() const { return groups * inChans; }    // the input's channels
  std::uint64_t outC() const { return groups * outChans; }  // the output's channels
  // The input row (or column) read at output position o, kernel position k
  // (dilated by kdil): -1 when it is padding or a dilation hole.
  static std::int64_t source(std::uint64_t o, std::uint64_t k, std::uint64_t stride, std::int64_t pad,
                             std::uint64_t dilation, std::uint64_t kdil, std::uint64_t size) {
    const std::int64_t y = std::int64_t(o * stride + k * kdil) - pad;
    if (y < 0 || y % std::int64_t(dilation)) return -1;
    const std::int64_t row = y / std::int64_t(dilation);
    return row < std::int64_t(size) ? row : -1;
  }
};
const std::vector<std::string> kGeometry{"batch", "inH", "inW", "inChans", "outH", "outW", "outChans",
                                          "kernelH", "kernelW", "strideH", "strideW", "padTop", "padLeft"};

std::vector<std::string> withGeometry(std::vector<std::string> extra) {
  std::vector<std::string> p = kGeometry;
  p.insert(p.end(), extra.begin(), extra.end());
  return p;
}

void checkGeometry(ShapeCheck& check) {
  for (const char* d : {"batch", "inH", "inW", "inChans", "outH", "outW", "outChans", "kernelH", "kernelW",
                        "strideH", "strideW", "convGroups", "kernelDilationH", "kernelDilationW"})
    check.dimension(d);
  check.param("padTop"), check.param("padLeft");
}

// "<a> x <b> x <chans> = ..." for a field of `lead` dimensions then the
// channels: the convGroups factor is named only when there are groups.
std::string fieldText(const std::string& lead, std::initializer_list<std::uint64_t> leadSizes, const char* chans,
                      std::uint64_t groups, std::uint64_t perGroup) {
  std::string names = lead + " x " + (groups > 1 ? "convGroups x " : "") + chans, sizes;
  for (auto x : leadSizes) sizes += (sizes.empty() ? "" : " x ") + std::to_string(x);
  sizes += (groups > 1 ? " x " + std::to_string(groups) : std::string()) + " x " + std::to_string(perGroup);
  return names + " = " + sizes;
}

// The kernels. Both keep the vertex's order of additions per output element
// (the order of a loop of out[co] += a * w[co] over taps and channels, which
// they replaced): ConvPartialnx1's out[b][oy][ox][co] adds its products tap
// by tap (ky, then kx, skipping padding and dilation holes), channel by
// channel (ci); ConvWeightUpdatePartial's out[ky][kx][ci][co] adds its
// products position by position (b, then oy, then ox). Each product is
// rounded, then added and rounded (-ffp-contract=off). The kernels keep a
// block of outputs in registers for the whole sum, where that loop loaded
// and stored out once per product (the convnet spent a third of its time
// there): the lanes are elementwise, so every width gives the same bits.
using vec::Float16;
using vec::Float4;
using vec::Float8;
using vec::loadVector;
using vec::storeVector;

// A kernel's operands. rows[oy * kH + ky] (cols[ox * kW + kx]): the input
// row (column) that output row oy (column ox) reads at kernel row ky
// (column kx), or -1 (padding, a dilation hole).
struct ConvArgs {
  Geometry g;
  const float* in = nullptr;
  const float* w = nullptr;  // weights [ky][kx][ci][co] (forward) or deltas [b][oy][ox][co] (weight update)
  float* out = nullptr;
  const std::int64_t* rows = nullptr;
  const std::int64_t* cols = nullptr;
};

// ConvPartialnx1: outputs [co, co + kVecs V) of position (b, oy, ox).
template <class V, unsigned kVecs>
IPUSIM_INLINE void forwardBlock(const ConvArgs& x, std::uint64_t b, std::uint64_t oy, std::uint64_t ox,
                                std::uint64_t co) {
  constexpr std::uint64_t kLanes = sizeof(V) / sizeof(float);
  const Geometry& g = x.g;
  float* o = x.out + ((b * g.outH + oy) * g.outW + ox) * g.outChans + co;
  V acc[kVecs];
#pragma GCC unroll 4
  for (unsigned v = 0; v < kVecs; ++v) loadVector(acc[v], o + v * kLanes);
  for (std::uint64_t ky = 0; ky < g.kH; ++ky) {
    const std::int64_t y = x.rows[oy * g.kH + ky];
    if (y < 0) continue;
    for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
      const std::int64_t xx = x.cols[ox * g.kW + kx];
      if (xx < 0) continue;
      const float* a = x.in + ((b * g.inH + std::uint64_t(y)) * g.inW + std::uint64_t(xx)) * g.inChans;
      const float* w = x.w + (ky * g.kW + kx) * g.inChans * g.outChans + co;
      for (std::uint64_t ci = 0; ci < g.inChans; ++ci) {
        const float av = a[ci];
#pragma GCC unroll 4
        for (unsigned v = 0; v < kVecs; ++v) {
          V wv;
          loadVector(wv, w + ci * g.outChans + v * kLanes);
          acc[v] = acc[v] + av * wv;
        }
      }
    }
  }
#pragma GCC unroll 4
  for (unsigned v = 0; v < kVecs; ++v) storeVector(o + v * kLanes, acc[v]);
}

// ConvWeightUpdatePartial: outputs [ci0, ci0 + kRows) x [co, co + kVecs V) of kernel position (ky, kx).
template <class V, unsigned kRows, unsigned kVecs>
IPUSIM_INLINE void weightBlock(const ConvArgs& x, std::uint64_t ky, std::uint64_t kx, std::uint64_t ci0,
                               std::uint64_t co) {
  constexpr std::uint64_t kLanes = sizeof(V) / sizeof(float);
  const Geometry& g = x.g;
  float* o = x.out + ((ky * g.kW + kx) * g.inChans + ci0) * g.outChans + co;
  V acc[kRows][kVecs];
#pragma GCC unroll 4
  for (unsigned r = 0; r < kRows; ++r)
#pragma GCC unroll 2
    for (unsigned v = 0; v < kVecs; ++v) loadVector(acc[r][v], o + r * g.outChans + v * kLanes);
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy) {
      const std::int64_t y = x.rows[oy * g.kH + ky];
      if (y < 0) continue;
      for (std::uint64_t ox = 0; ox < g.outW; ++ox) {
        const std::int64_t xx = x.cols[ox * g.kW + kx];
        if (xx < 0) continue;
        const float* a = x.in + ((b * g.inH + std::uint64_t(y)) * g.inW + std::uint64_t(xx)) * g.inChans + ci0;
        const float* d = x.w + ((b * g.outH + oy) * g.outW + ox) * g.outChans + co;
        V dv[kVecs];
#pragma GCC unroll 2
        for (unsigned v = 0; v < kVecs; ++v) loadVector(dv[v], d + v * kLanes);
#pragma GCC unroll 4
        for (unsigned r = 0; r < kRows; ++r) {
          const float ar = a[r];
#pragma GCC unroll 2
          for (unsigned v = 0; v < kVecs; ++v) acc[r][v] = acc[r][v] + ar * dv[v];
        }
      }
    }
#pragma GCC unroll 4
  for (unsigned r = 0; r < kRows; ++r)
#pragma GCC unroll 2
    for (unsigned v = 0; v < kVecs; ++v) storeVector(o + r * g.outChans + v * kLanes, acc[r][v]);
}

// Every output channel of one block: 4, 2 or 1 x 16 lanes (kWide only), then
// 2 or 1 x 8, then 4, then 1.
template <bool kWide, class Block>
IPUSIM_INLINE void overChannels(std::uint64_t n, const Block& block) {
  std::uint64_t co = 0;
  if constexpr (kWide) {
    for (; co + 64 <= n; co += 64) block.template run<Float16, 4>(co);
    for (; co + 32 <= n; co += 32) block.template run<Float16, 2>(co);
    for (; co + 16 <= n; co += 16) block.template run<Float16, 1>(co);
  }
  for (; co + 16 <= n; co += 16) block.template run<Float8, 2>(co);
  for (; co + 8 <= n; co += 8) block.template run<Float8, 1>(co);
  for (; co + 4 <= n; co += 4) block.template run<Float4, 1>(co);
  for (; co < n; ++co) block.template run<float, 1>(co);
}

// The blocks of one position (forward) or of kRows input channels of one
// kernel position (weight update), for overChannels.
struct ForwardAt {
  const ConvArgs& x;
  std::uint64_t b, oy, ox;
  template <class V, unsigned kVecs>
  IPUSIM_INLINE void run(std::uint64_t co) const { forwardBlock<V, kVecs>(x, b, oy, ox, co); }
};
template <unsigned kRows>
struct WeightAt {
  const ConvArgs& x;
  std::uint64_t ky, kx, ci;
  template <class V, unsigned kVecs>
  IPUSIM_INLINE void run(std::uint64_t co) const { weightBlock<V, kRows, kVecs>(x, ky, kx, ci, co); }
};

template <bool kWide>
IPUSIM_INLINE void convForward(const ConvArgs& x) {
  const Geometry& g = x.g;
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ox = 0; ox < g.outW; ++ox)
        overChannels<kWide>(g.outChans, ForwardAt{x, b, oy, ox});
}

template <bool kWide>
IPUSIM_INLINE void convWeightUpdate(const ConvArgs& x) {
  const Geometry& g = x.g;
  for (std::uint64_t ky = 0; ky < g.kH; ++ky)
    for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
      std::uint64_t ci = 0;
      for (; ci + 4 <= g.inChans; ci += 4)
        overChannels<kWide>(g.outChans, WeightAt<4>{x, ky, kx, ci});
      for (; ci < g.inChans; ++ci)
        overChannels<kWide>(g.outChans, WeightAt<1>{x, ky, kx, ci});
    }
}

// 8 lanes: the baseline and AVX2 clones; 16 lanes for CPUs with AVX-512.
IPUSIM_KERNEL void convForward8(ConvArgs x) { convForward<false>(x); }
IPUSIM_KERNEL void convWeightUpdate8(ConvArgs x) { convWeightUpdate<false>(x); }
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, target("avx512f"))) void convForward16(ConvArgs x) { convForward<true>(x); }
__attribute__((noinline, target("avx512f"))) void convWeightUpdate16(ConvArgs x) { convWeightUpdate<true>(x); }
#endif

// The kernels' row and column tables for geometry g (see ConvArgs).
struct SourceTables {
  std::vector<std::int64_t> rows, cols;
  void fill(const Geometry& g) {
    rows.resize(g.outH * g.kH);
    cols.resize(g.outW * g.kW);
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ky = 0; ky < g.kH; ++ky)
        rows[oy * g.kH + ky] = Geometry::source(oy, ky, g.sH, g.padTop, g.dH, g.kdH, g.inH);
    for (std::uint64_t ox = 0; ox < g.outW; ++ox)
      for (std::uint64_t kx = 0; kx < g.kW; ++kx)
        cols[ox * g.kW + kx] = Geometry::source(ox, kx, g.sW, g.padLeft, g.dW, g.kdW, g.inW);
  }
};

// Grouped convolutions (convGroups > 1): the same order of additions per
// output element as the kernels above (taps, then input channels; positions
// for a weight update), the groups side by side. A depthwise convolution
// (one input and one output channel per group) runs as one loop over the
// groups, which GCC vectorises.
void groupedForward(const ConvArgs& x) {
  const Geometry& g = x.g;
  const std::uint64_t G = g.groups, iC = g.inChans, oC = g.outChans, inC = g.inC(), outC = g.outC();
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ox = 0; ox < g.outW; ++ox) {
        float* __restrict o = x.out + ((b * g.outH + oy) * g.outW + ox) * outC;
        for (std::uint64_t ky = 0; ky < g.kH; ++ky) {
          const std::int64_t y = x.rows[oy * g.kH + ky];
          if (y < 0) continue;
          for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
            const std::int64_t xx = x.cols[ox * g.kW + kx];
            if (xx < 0) continue;
            const float* __restrict a = x.in + ((b * g.inH + std::uint64_t(y)) * g.inW + std::uint64_t(xx)) * inC;
            const float* __restrict w = x.w + (ky * g.kW + kx) * iC * outC;
            if (iC == 1 && oC == 1) {
              for (std::uint64_t c = 0; c < G; ++c) o[c] = o[c] + a[c] * w[c];
              continue;
            }
            for (std::uint64_t c = 0; c < G; ++c)
              for (std::uint64_t ci = 0; ci < iC; ++ci) {
                const float av = a[c * iC + ci];
                const float* wr = w + ci * outC + c * oC;
                float* orow = o + c * oC;
                for (std::uint64_t co = 0; co < oC; ++co) orow[co] = orow[co] + av * wr[co];
              }
          }
        }
      }
}

void groupedWeightUpdate(const ConvArgs& x) {
  const Geometry& g = x.g;
  const std::uint64_t G = g.groups, iC = g.inChans, oC = g.outChans, inC = g.inC(), outC = g.outC();
  for (std::uint64_t ky = 0; ky < g.kH; ++ky)
    for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
      float* __restrict o = x.out + (ky * g.kW + kx) * iC * outC;
      for (std::uint64_t b = 0; b < g.batch; ++b)
        for (std::uint64_t oy = 0; oy < g.outH; ++oy) {
          const std::int64_t y = x.rows[oy * g.kH + ky];
          if (y < 0) continue;
          for (std::uint64_t ox = 0; ox < g.outW; ++ox) {
            const std::int64_t xx = x.cols[ox * g.kW + kx];
            if (xx < 0) continue;
            const float* __restrict a = x.in + ((b * g.inH + std::uint64_t(y)) * g.inW + std::uint64_t(xx)) * inC;
            const float* __restrict d = x.w + ((b * g.outH + oy) * g.outW + ox) * outC;
            if (iC == 1 && oC == 1) {
              for (std::uint64_t c = 0; c < G; ++c) o[c] = o[c] + a[c] * d[c];
              continue;
            }
            for (std::uint64_t c = 0; c < G; ++c)
              for (std::uint64_t ci = 0; ci < iC; ++ci) {
                const float av = a[c * iC + ci];
                float* orow = o + ci * outC + c * oC;
                const float* drow = d + c * oC;
                for (std::uint64_t co = 0; co < oC; ++co) orow[co] = orow[co] + av * drow[co];
              }
          }
        }
    }
}

// Runs the forward or the weight-update kernel, in 16 lanes where the CPU
// has AVX-512, on the vertex's fields.
void runConvKernel(bool forward, const Geometry& g, const float* in, const float* w, float* out) {
  thread_local SourceTables tables;
  tables.fill(g);
  ConvArgs x;
  x.g = g, x.in = in, x.w = w, x.out = out, x.rows = tables.rows.data(), x.cols = tables.cols.data();
  if (g.groups > 1) return forward ? groupedForward(x) : groupedWeightUpdate(x);
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (vec::hasAvx512()) return forward ? convForward16(x) : convWeightUpdate16(x);
#endif
  forward ? convForward8(x) : convWeightUpdate8(x);
}

// The forward vertices' method: the AMP (ConvPartialnx1), HMAC or VMAC.
enum class ForwardMethod { Nx1, HorizontalMac, VerticalMac };

// Params 13.. of the forward vertices, after the geometry.
const std::vector<std::string> kForwardParams{"dilationH",  "dilationW",       "flipped",        "accumulate",
                                              "convGroups", "kernelDilationH", "kernelDilationW"};

class ConvPartialForward final : public FlatCodelet<ConvPartialForward> {
 public:
  // The activation and partials types the cycles count (compute is float;
  // HalfCodelet converts half fields).
  explicit ConvPartialForward(ForwardMethod method, ir::DType inputType = ir::DType::Float,
                              ir::DType partialsType = ir::DType::Float)
      : method_(method), inputType_(inputType), partialsType_(partialsType) {}
  std::string name() const override {
    return method_ == ForwardMethod::Nx1             ? "ConvPartialnx1"
           : method_ == ForwardMethod::HorizontalMac ? "ConvPartialHorizontalMac"
                                                     : "ConvPartialVerticalMac";
  }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"weights", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::InOut}};
  }
  std::vector<std::string> params() const override {
    auto extra = kForwardParams;
    if (method_ == ForwardMethod::VerticalMac) extra.push_back("convGroupsPerGroup");
    return withGeometry(extra);
  }
  std::vector<ParamDefault> paramDefaults() const override {
    std::vector<ParamDefault> d{{"strideH", 1},    {"strideW", 1},         {"padTop", 0},          {"padLeft", 0},
                                {"dilationH", 1},  {"dilationW", 1},       {"flipped", 0},         {"accumulate", 0},
                                {"convGroups", 1}, {"kernelDilationH", 1}, {"kernelDilationW", 1}};
    if (method_ == ForwardMethod::VerticalMac) d.push_back({"convGroupsPerGroup", 4});
    return d;
  }
  bool isSupervisor() const override { return true; }

  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    checkGeometry(check);
    check.dimension("dilationH"), check.dimension("dilationW");
    check.flag("flipped"), check.flag("accumulate");
    const Geometry g = geometry(shape.params.data());
    if (method_ == ForwardMethod::VerticalMac) {
      check.dimension("convGroupsPerGroup");
      if (g.outChans != 1)
        throw std::invalid_argument(name() + ": outChans is " + std::to_string(g.outChans) +
                                    "; the vertical MAC takes one output channel per conv group");
    }
    check.expectSize("in", g.batch * g.inH * g.inW * g.inC(),
                     fieldText("batch x inH x inW", {g.batch, g.inH, g.inW}, "inChans", g.groups, g.inChans));
    check.expectSize("weights", g.kH * g.kW * g.inChans * g.outC(),
                     fieldText("kernelH x kernelW x inChans", {g.kH, g.kW, g.inChans}, "outChans", g.groups, g.outChans));
    check.expectSize("out", g.batch * g.outH * g.outW * g.outC(),
                     fieldText("batch x outH x outW", {g.batch, g.outH, g.outW}, "outChans", g.groups, g.outChans));
  }

  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const double* p = shape.params.data();
    const Geometry g = geometry(p);
    const bool zero = p[16] == 0;
    if (method_ == ForwardMethod::HorizontalMac) {
      cycles::HmacShape s;
      s.batch = g.batch, s.outH = g.outH, s.outW = g.outW, s.inChans = g.inChans, s.outChans = g.outChans;
      s.convGroups = g.groups, s.kernelH = g.kH, s.kernelW = g.kW, s.strideH = g.sH, s.strideW = g.sW;
      s.dilationH = g.dH, s.dilationW = g.dW, s.zeroPartials = zero;
      s.inputType = inputType_, s.partialsType = partialsType_;
      return cycles::convPartialHorizontalMacCycles(s, target);
    }
    if (method_ == ForwardMethod::VerticalMac) {
      cycles::VmacShape s;
      s.batch = g.batch, s.outH = g.outH, s.outW = g.outW, s.inChans = g.inChans, s.convGroups = g.groups;
      s.convGroupsPerGroup = std::uint64_t(p[20]), s.kernelH = g.kH, s.kernelW = g.kW;
      s.partialsType = partialsType_;
      return cycles::convPartialVerticalMacCycles(s, target);
    }
    cycles::Nx1Shape s;
    s.batch = g.batch, s.outH = g.outH, s.outW = g.outW, s.inChans = g.inChans, s.outChans = g.outChans;
    s.convGroups = g.groups, s.kernelH = g.kH, s.kernelW = g.kW, s.strideH = g.sH, s.strideW = g.sW;
    s.dilationH = g.dH, s.dilationW = g.dW, s.zeroPartials = zero;
    s.inputType = inputType_, s.partialsType = partialsType_;
    return cycles::convPartialnx1Cycles(s, target);
  }

  void computeFlat(const FieldData* f, const double* p) const {
    const Geometry g = geometry(p);
    const bool flipped = p[15] != 0, accumulate = p[16] != 0;
    const float* in = f[0].as<const float>();
    const float* w = f[1].as<const float>();
    float* out = f[2].as<float>();
    if (!accumulate) std::fill(out, out + f[2].size, 0.0f);
    if (flipped) {  // w as [ky][kx][ci][g co] of this convolution
      thread_local std::vector<float> scratch;
      scratch.resize(f[1].size);
      const std::uint64_t inC = g.inC(), outC = g.outC();
      for (std::uint64_t ky = 0; ky < g.kH; ++ky)
        for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
          const float* src = w + ((g.kH - 1 - ky) * g.kW + (g.kW - 1 - kx)) * g.outChans * inC;
          float* dst = scratch.data() + (ky * g.kW + kx) * g.inChans * outC;
          for (std::uint64_t c = 0; c < g.groups; ++c)
            for (std::uint64_t co = 0; co < g.outChans; ++co)
              for (std::uint64_t ci = 0; ci < g.inChans; ++ci)
                dst[ci * outC + c * g.outChans + co] = src[co * inC + c * g.inChans + ci];
        }
      w = scratch.data();
    }
    runConvKernel(true, g, in, w, out);
  }

 private:
  static Geometry geometry(const double* p) {
    Geometry g = Geometry::of(p);
    g.dH = std::uint64_t(p[13]), g.dW = std::uint64_t(p[14]);
    g.groups = std::uint64_t(p[17]), g.kdH = std::uint64_t(p[18]), g.kdW = std::uint64_t(p[19]);
    return g;
  }
  ForwardMethod method_;
  ir::DType inputType_, partialsType_;
};

// The weight-update vertex's method: the AMP (ConvWeightUpdatePartial) or HMAC.
enum class WeightUpdateMethod { Amp, HorizontalMac };

class ConvWeightUpdate final : public FlatCodelet<ConvWeightUpdate> {
 public:
  explicit ConvWeightUpdate(WeightUpdateMethod method, ir::DType inputType = ir::DType::Float,
                            ir::DType partialsType = ir::DType::Float)
      : method_(method), inputType_(inputType), partialsType_(partialsType) {}
  std::string name() const override {
    return method_ == WeightUpdateMethod::Amp ? "ConvWeightUpdatePartial" : "ConvWeightUpdateHorizontalMac";
  }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"deltas", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::InOut}};
  }
  std::vector<std::string> params() const override {
    return withGeometry({"accumulate", "convGroups", "kernelDilationH", "kernelDilationW"});
  }
  std::vector<ParamDefault> paramDefaults() const override {
    return {{"strideH", 1},   {"strideW", 1},    {"padTop", 0},          {"padLeft", 0},
            {"accumulate", 0}, {"convGroups", 1}, {"kernelDilationH", 1}, {"kernelDilationW", 1}};
  }
  bool isSupervisor() const override { return true; }

  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    checkGeometry(check);
    check.flag("accumulate");
    const Geometry g = geometry(shape.params.data());
    check.expectSize("in", g.batch * g.inH * g.inW * g.inC(),
                     fieldText("batch x inH x inW", {g.batch, g.inH, g.inW}, "inChans", g.groups, g.inChans));
    check.expectSize("deltas", g.batch * g.outH * g.outW * g.outC(),
                     fieldText("batch x outH x outW", {g.batch, g.outH, g.outW}, "outChans", g.groups, g.outChans));
    check.expectSize("out", g.kH * g.kW * g.inChans * g.outC(),
                     fieldText("kernelH x kernelW x inChans", {g.kH, g.kW, g.inChans}, "outChans", g.groups, g.outChans));
  }

  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const Geometry g = geometry(shape.params.data());
    const bool zero = shape.params[13] == 0;
    if (method_ == WeightUpdateMethod::Amp)
      return cycles::ampMatMulCycles(g.kH * g.kW * g.inChans, g.batch * g.outH * g.outW, g.outChans, zero, inputType_,
                                     partialsType_, target, g.groups);
    // The expanded weight-update convolution on the HMAC: batch inChans, an
    // output field of kH x kW, a 1x1 kernel, b oH oW input channels.
    cycles::HmacShape s;
    s.batch = g.inChans, s.outH = g.kH, s.outW = g.kW, s.inChans = g.batch * g.outH * g.outW;
    s.outChans = g.outChans, s.convGroups = g.groups, s.zeroPartials = zero;
    s.inputType = inputType_, s.partialsType = partialsType_;
    return cycles::convPartialHorizontalMacCycles(s, target);
  }

  void computeFlat(const FieldData* f, const double* p) const {
    const Geometry g = geometry(p);
    const bool accumulate = p[13] != 0;
    const float* in = f[0].as<const float>();
    const float* d = f[1].as<const float>();
    float* out = f[2].as<float>();
    if (!accumulate) std::fill(out, out + f[2].size, 0.0f);
    runConvKernel(false, g, in, d, out);
  }

 private:
  static Geometry geometry(const double* p) {
    Geometry g = Geometry::of(p);
    g.groups = std::uint64_t(p[14]), g.kdH = std::uint64_t(p[15]), g.kdW = std::uint64_t(p[16]);
    return g;
  }
  WeightUpdateMethod method_;
  ir::DType inputType_, partialsType_;
};

}  // namespace

void addConvPartialCodelets(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float;
  for (ForwardMethod m : {ForwardMethod::Nx1, ForwardMethod::HorizontalMac})
    registry.add(std::make_unique<ConvPartialForward>(m));
  for (WeightUpdateMethod m : {WeightUpdateMethod::Amp, WeightUpdateMethod::HorizontalMac})
    registry.add(std::make_unique<ConvWeightUpdate>(m));
  // Half activations and weights, float or half partials (poplin's
  // ConvPartialnx1<half,float,...> naming); the VMAC has half activations only.
  for (ir::DType partials : {F, H}) {
    for (ForwardMethod m : {ForwardMethod::Nx1, ForwardMethod::HorizontalMac, ForwardMethod::VerticalMac}) {
      auto c = std::make_unique<ConvPartialForward>(m, H, partials);
      const std::string name = typedCodeletName(c->name(), {H, partials});
      registry.add(std::make_unique<HalfCodelet>(name, std::move(c), std::vector{H, H, partials}));
    }
    for (WeightUpdateMethod m : {WeightUpdateMethod::Amp, WeightUpdateMethod::HorizontalMac}) {
      auto c = std::make_unique<ConvWeightUpdate>(m, H, partials);
      const std::string name = typedCodeletName(c->name(), {H, partials});
      registry.add(std::make_unique<HalfCodelet>(name, std::move(c), std::vector{H, H, partials}));
    }
  }
}

}  // namespace ipusim::model
