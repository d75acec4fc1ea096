#include "cpu_reference_conv.hpp"

#include <algorithm>

namespace ipusim::testing {
namespace {

std::uint64_t dilated(std::uint64_t k, std::uint64_t d) { return (k - 1) * d + 1; }

// One dimension of a convolution: its output size and the padding before.
void convDimension(std::uint64_t in, std::uint64_t k, std::uint64_t s, std::uint64_t d, const std::string& padding,
                   std::uint64_t& out, std::uint64_t& before) {
  const std::uint64_t keff = dilated(k, d);
  if (padding == "valid") {
    out = in >= keff ? (in - keff) / s + 1 : 0;
    before = 0;
  } else if (padding == "causal") {  // keff - 1 zeros on the left, none on the right
    before = keff - 1;
    out = (in + before - keff) / s + 1;
  } else {  // same: TF pads (out - 1) s + keff - in in all, the smaller half first
    out = (in + s - 1) / s;
    const std::uint64_t needed = (out - 1) * s + keff;
    before = needed > in ? (needed - in) / 2 : 0;
  }
}

// TF's padding before for the convolution from `out` elements back to `in`.
std::uint64_t transposedPadding(std::uint64_t in, std::uint64_t out, std::uint64_t k, std::uint64_t s,
                                std::uint64_t d, const std::string& padding) {
  if (padding != "same") return 0;
  const std::uint64_t forwardOut = (out + s - 1) / s;  // == in for a valid configuration
  (void)in;
  const std::uint64_t needed = (forwardOut - 1) * s + dilated(k, d);
  return needed > out ? (needed - out) / 2 : 0;
}

}  // namespace

ConvGeometry ConvGeometry::convolution(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                                       std::uint64_t outC, std::uint64_t kH, std::uint64_t kW, std::uint64_t strideH,
                                       std::uint64_t strideW, std::uint64_t dilationH, std::uint64_t dilationW,
                                       const std::string& padding, std::uint64_t groups) {
  ConvGeometry g;
  g.batch = batch, g.inH = inH, g.inW = inW, g.inC = inC, g.outC = outC, g.kH = kH, g.kW = kW;
  g.strideH = strideH, g.strideW = strideW, g.dilationH = dilationH, g.dilationW = dilationW, g.groups = groups;
  convDimension(inH, kH, strideH, dilationH, padding, g.outH, g.padTop);
  convDimension(inW, kW, strideW, dilationW, padding, g.outW, g.padLeft);
  return g;
}

ConvGeometry ConvGeometry::transposed(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                                      std::uint64_t outH, std::uint64_t outW, std::uint64_t outC, std::uint64_t kH,
                                      std::uint64_t kW, std::uint64_t strideH, std::uint64_t strideW,
                                      std::uint64_t dilationH, std::uint64_t dilationW, const std::string& padding) {
  ConvGeometry g;
  g.batch = batch, g.inH = inH, g.inW = inW, g.inC = inC, g.outH = outH, g.outW = outW, g.outC = outC;
  g.kH = kH, g.kW = kW, g.strideH = strideH, g.strideW = strideW, g.dilationH = dilationH, g.dilationW = dilationW;
  g.padTop = transposedPadding(inH, outH, kH, strideH, dilationH, padding);
  g.padLeft = transposedPadding(inW, outW, kW, strideW, dilationW, padding);
  return g;
}

std::uint64_t transposedLength(std::uint64_t in, std::uint64_t k, std::uint64_t stride, std::uint64_t dilation,
                               const std::string& padding, std::int64_t outputPadding) {
  const std::int64_t keff = std::int64_t(dilated(k, dilation)), s = std::int64_t(stride), n = std::int64_t(in);
  if (outputPadding < 0) return std::uint64_t(padding == "valid" ? n * s + std::max<std::int64_t>(keff - s, 0) : n * s);
  const std::int64_t pad = padding == "same" ? keff / 2 : 0;
  return std::uint64_t((n - 1) * s + keff - 2 * pad + outputPadding);
}

std::vector<float> groupedConvForward(const ConvGeometry& g, const std::vector<float>& x,
                                      const std::vector<float>& kernel, const std::vector<float>& bias) {
  const std::uint64_t cpg = g.inC / g.groups, fpg = g.outC / g.groups;
  std::vector<float> y(g.batch * g.outH * g.outW * g.outC);
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ox = 0; ox < g.outW; ++ox)
        for (std::uint64_t co = 0; co < g.outC; ++co) {
          const std::uint64_t group = co / fpg;
          double acc = 0;
          for (std::uint64_t ky = 0; ky < g.kH; ++ky)
            for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
              const std::int64_t iy = std::int64_t(oy * g.strideH + ky * g.dilationH) - std::int64_t(g.padTop);
              const std::int64_t ix = std::int64_t(ox * g.strideW + kx * g.dilationW) - std::int64_t(g.padLeft);
              if (iy < 0 || ix < 0 || iy >= std::int64_t(g.inH) || ix >= std::int64_t(g.inW)) continue;
              for (std::uint64_t ci = 0; ci < cpg; ++ci)
                acc += double(x[((b * g.inH + iy) * g.inW + ix) * g.inC + group * cpg + ci]) *
                       kernel[((ky * g.kW + kx) * cpg + ci) * g.outC + co];
            }
          y[((b * g.outH + oy) * g.outW + ox) * g.outC + co] = float(acc) + (bias.empty() ? 0.0f : bias[co]);
        }
  return y;
}

ConvGrads groupedConvBackward(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                              const std::vector<float>& gradOut, bool wantInput) {
  const std::uint64_t cpg = g.inC / g.groups, fpg = g.outC / g.groups;
  std::vector<double> dk(kernel.size(), 0.0), db(g.outC, 0.0), dx(wantInput ? x.size() : 0, 0.0);
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ox = 0; ox < g.outW; ++ox)
        for (std::uint64_t co = 0; co < g.outC; ++co) {
          const double go = gradOut[((b * g.outH + oy) * g.outW + ox) * g.outC + co];
          const std::uint64_t group = co / fpg;
          db[co] += go;
          for (std::uint64_t ky = 0; ky < g.kH; ++ky)
            for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
              const std::int64_t iy = std::int64_t(oy * g.strideH + ky * g.dilationH) - std::int64_t(g.padTop);
              const std::int64_t ix = std::int64_t(ox * g.strideW + kx * g.dilationW) - std::int64_t(g.padLeft);
              if (iy < 0 || ix < 0 || iy >= std::int64_t(g.inH) || ix >= std::int64_t(g.inW)) continue;
              for (std::uint64_t ci = 0; ci < cpg; ++ci) {
                const std::uint64_t xi = ((b * g.inH + iy) * g.inW + ix) * g.inC + group * cpg + ci;
                const std::uint64_t ki = ((ky * g.kW + kx) * cpg + ci) * g.outC + co;
                dk[ki] += double(x[xi]) * go;
                if (wantInput) dx[xi] += double(kernel[ki]) * go;
              }
            }
        }
  return {{dk.begin(), dk.end()}, {db.begin(), db.end()}, {dx.begin(), dx.end()}};
}

std::vector<float> transposedConvForward(const ConvGeometry& g, const std::vector<float>& x,
                                         const std::vector<float>& kernel, const std::vector<float>& bias) {
  std::vector<double> acc(g.batch * g.outH * g.outW * g.outC, 0.0);
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t iy = 0; iy < g.inH; ++iy)
      for (std::uint64_t ix = 0; ix < g.inW; ++ix)
        for (std::uint64_t ky = 0; ky < g.kH; ++ky)
          for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
            const std::int64_t oy = std::int64_t(iy * g.strideH + ky * g.dilationH) - std::int64_t(g.padTop);
            const std::int64_t ox = std::int64_t(ix * g.strideW + kx * g.dilationW) - std::int64_t(g.padLeft);
            if (oy < 0 || ox < 0 || oy >= std::int64_t(g.outH) || ox >= std::int64_t(g.outW)) continue;
            for (std::uint64_t f = 0; f < g.outC; ++f)
              for (std::uint64_t c = 0; c < g.inC; ++c)
                acc[((b * g.outH + oy) * g.outW + ox) * g.outC + f] +=
                    double(x[((b * g.inH + iy) * g.inW + ix) * g.inC + c]) *
                    kernel[((ky * g.kW + kx) * g.outC + f) * g.inC + c];
          }
  std::vector<float> y(acc.size());
  for (std::size_t e = 0; e < y.size(); ++e) y[e] = float(acc[e]) + (bias.empty() ? 0.0f : bias[e % g.outC]);
  return y;
}

ConvGrads transposedConvBackward(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& gradOut, bool wantInput) {
  std::vector<double> dk(kernel.size(), 0.0), db(g.outC, 0.0), dx(wantInput ? x.size() : 0, 0.0);
  for (std::size_t e = 0; e < gradOut.size(); ++e) db[e % g.outC] += gradOut[e];
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t iy = 0; iy < g.inH; ++iy)
      for (std::uint64_t ix = 0; ix < g.inW; ++ix)
        for (std::uint64_t ky = 0; ky < g.kH; ++ky)
          for (std::uint64_t kx = 0; kx < g.kW; ++kx) {
            const std::int64_t oy = std::int64_t(iy * g.strideH + ky * g.dilationH) - std::int64_t(g.padTop);
            const std::int64_t ox = std::int64_t(ix * g.strideW + kx * g.dilationW) - std::int64_t(g.padLeft);
            if (oy < 0 || ox < 0 || oy >= std::int64_t(g.outH) || ox >= std::int64_t(g.outW)) continue;
            for (std::uint64_t f = 0; f < g.outC; ++f) {
              const double go = gradOut[((b * g.outH + oy) * g.outW + ox) * g.outC + f];
              for (std::uint64_t c = 0; c < g.inC; ++c) {
                const std::uint64_t xi = ((b * g.inH + iy) * g.inW + ix) * g.inC + c;
                const std::uint64_t ki = ((ky * g.kW + kx) * g.outC + f) * g.inC + c;
                dk[ki] += double(x[xi]) * go;
                if (wantInput) dx[xi] += double(kernel[ki]) * go;
              }
            }
          }
  return {{dk.begin(), dk.end()}, {db.begin(), db.end()}, {dx.begin(), dx.end()}};
}

}  // namespace ipusim::testing
