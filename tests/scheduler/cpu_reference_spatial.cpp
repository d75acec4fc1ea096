#include "cpu_reference_spatial.hpp"

#include <algorithm>

namespace ipusim::testing {
namespace {

// Calls f(b, oy, ox, y0, y1, x0, x1) for every output position with the
// input rows [y0, y1) and columns [x0, x1) its window covers (padding clipped).
template <class F>
void forEachWindow(const SpatialGeometry& g, F f) {
  const auto& w = g.window;
  for (std::uint64_t b = 0; b < g.batch; ++b)
    for (std::uint64_t oy = 0; oy < g.outH; ++oy)
      for (std::uint64_t ox = 0; ox < g.outW; ++ox) {
        const std::int64_t top = std::int64_t(oy * w.strideH) - std::int64_t(g.padTop);
        const std::int64_t left = std::int64_t(ox * w.strideW) - std::int64_t(g.padLeft);
        const std::int64_t y0 = std::max<std::int64_t>(top, 0), x0 = std::max<std::int64_t>(left, 0);
        const std::int64_t y1 = std::min<std::int64_t>(top + std::int64_t(w.kernelH), std::int64_t(g.inH));
        const std::int64_t x1 = std::min<std::int64_t>(left + std::int64_t(w.kernelW), std::int64_t(g.inW));
        f(b, oy, ox, top, left, y0, std::max(y0, y1), x0, std::max(x0, x1));
      }
}

}  // namespace

SpatialGeometry SpatialGeometry::of(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                                    std::uint64_t outC, const scheduler::Window& window) {
  SpatialGeometry g;
  g.batch = batch, g.inH = inH, g.inW = inW, g.inC = inC, g.outC = outC, g.window = window;
  g.outH = window.outH(inH), g.outW = window.outW(inW);
  g.padTop = window.padTop(inH), g.padLeft = window.padLeft(inW);
  return g;
}

std::vector<float> conv2dForward(const SpatialGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& bias) {
  std::vector<float> y(g.batch * g.outH * g.outW * g.outC);
  std::vector<double> acc(g.outC);
  forEachWindow(g, [&](auto b, auto oy, auto ox, auto top, auto left, auto y0, auto y1, auto x0, auto x1) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t iy = y0; iy < y1; ++iy)
      for (std::int64_t ix = x0; ix < x1; ++ix)
        for (std::uint64_t ci = 0; ci < g.inC; ++ci) {
          const double v = x[((b * g.inH + iy) * g.inW + ix) * g.inC + ci];
          const float* k = &kernel[(((iy - top) * g.window.kernelW + (ix - left)) * g.inC + ci) * g.outC];
          for (std::uint64_t co = 0; co < g.outC; ++co) acc[co] += v * k[co];
        }
    float* out = &y[((b * g.outH + oy) * g.outW + ox) * g.outC];
    for (std::uint64_t co = 0; co < g.outC; ++co) out[co] = float(acc[co]) + (bias.empty() ? 0.0f : bias[co]);
  });
  return y;
}

Conv2DReferenceGrads conv2dBackward(const SpatialGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                    const std::vector<float>& gradOut, bool wantInput) {
  std::vector<double> dk(kernel.size(), 0.0), db(g.outC, 0.0), dx(wantInput ? x.size() : 0, 0.0);
  forEachWindow(g, [&](auto b, auto oy, auto ox, auto top, auto left, auto y0, auto y1, auto x0, auto x1) {
    const float* go = &gradOut[((b * g.outH + oy) * g.outW + ox) * g.outC];
    for (std::uint64_t co = 0; co < g.outC; ++co) db[co] += go[co];
    for (std::int64_t iy = y0; iy < y1; ++iy)
      for (std::int64_t ix = x0; ix < x1; ++ix)
        for (std::uint64_t ci = 0; ci < g.inC; ++ci) {
          const std::uint64_t xi = ((b * g.inH + iy) * g.inW + ix) * g.inC + ci;
          const std::uint64_t ki = (((iy - top) * g.window.kernelW + (ix - left)) * g.inC + ci) * g.outC;
          double sum = 0;
          for (std::uint64_t co = 0; co < g.outC; ++co) {
            dk[ki + co] += double(x[xi]) * go[co];
            sum += double(kernel[ki + co]) * go[co];
          }
          if (wantInput) dx[xi] += sum;
        }
  });
  return {{dk.begin(), dk.end()}, {db.begin(), db.end()}, {dx.begin(), dx.end()}};
}

std::vector<float> pool2dForward(const SpatialGeometry& g, bool max, const std::vector<float>& x) {
  std::vector<float> y(g.batch * g.outH * g.outW * g.outC);
  forEachWindow(g, [&](auto b, auto oy, auto ox, auto, auto, auto y0, auto y1, auto x0, auto x1) {
    for (std::uint64_t c = 0; c < g.outC; ++c) {
      double acc = max ? -1e300 : 0.0;
      for (std::int64_t iy = y0; iy < y1; ++iy)
        for (std::int64_t ix = x0; ix < x1; ++ix) {
          const double v = x[((b * g.inH + iy) * g.inW + ix) * g.inC + c];
          acc = max ? std::max(acc, v) : acc + v;
        }
      const double count = double((y1 - y0) * (x1 - x0));
      y[((b * g.outH + oy) * g.outW + ox) * g.outC + c] = float(max ? acc : acc / count);
    }
  });
  return y;
}

std::vector<float> pool2dBackward(const SpatialGeometry& g, bool max, const std::vector<float>& x,
                                  const std::vector<float>& gradOut) {
  std::vector<float> dx(x.size(), 0.0f);
  forEachWindow(g, [&](auto b, auto oy, auto ox, auto, auto, auto y0, auto y1, auto x0, auto x1) {
    const float count = float((y1 - y0) * (x1 - x0));
    for (std::uint64_t c = 0; c < g.outC; ++c) {
      const float go = gradOut[((b * g.outH + oy) * g.outW + ox) * g.outC + c];
      auto at = [&](std::int64_t iy, std::int64_t ix) { return ((b * g.inH + iy) * g.inW + ix) * g.inC + c; };
      if (!max) {
        for (std::int64_t iy = y0; iy < y1; ++iy)
          for (std::int64_t ix = x0; ix < x1; ++ix) dx[at(iy, ix)] += go / count;
        continue;
      }
      std::uint64_t best = at(y0, x0);
      for (std::int64_t iy = y0; iy < y1; ++iy)
        for (std::int64_t ix = x0; ix < x1; ++ix)
          if (x[at(iy, ix)] > x[best]) best = at(iy, ix);
      dx[best] += go;
    }
  });
  return dx;
}

}  // namespace ipusim::testing
