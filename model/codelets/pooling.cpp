// Pooling over NHWC activations (supervisor codelets, as popnn's pooling
// vertices are), windows kernelH x kernelW at strides strideH/W, the input
// padded by padTop/padLeft (and implicitly at the bottom/right):
//   MaxPool:     out = max over the window's input positions (padding ignored);
//   AvgPool:     out = mean over the window's input positions (padding not
//                counted, as TF's avg_pool with SAME padding);
//   MaxPoolGrad: gradIn[argmax of each window] += gradOut, the argmax being
//                the first maximum in row-major window order (TF's MaxPoolGrad
//                sends a tie's gradient to one position; popnn would send it
//                to every tied position);
//   AvgPoolGrad: gradIn[p] += gradOut / count for each position p of a window.
// Half variants (MaxPool<half>, ...): every field half, computed in float,
// vectors of 4 halves in the cycles.
// Cycles: popnn's planning estimate (conv_cycle_model.hpp poolingCycles):
// MaxPool as MaxPooling, AvgPool and AvgPoolGrad as SumPooling (popnn's
// average backward is a sum pooling of the scaled deltas), MaxPoolGrad as
// MaxPoolingGrad; the forward vertices over the output field, the gradients
// over the input field they produce.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/conv_cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <limits>

namespace ipusim::model {
namespace {

struct Window {
  std::uint64_t batch, inH, inW, chans, outH, outW, kH, kW, sH, sW;
  std::int64_t padTop, padLeft;
  static Window of(const double* p) {
    return {std::uint64_t(p[0]), std::uint64_t(p[1]), std::uint64_t(p[2]), std::uint64_t(p[3]),
            std::uint64_t(p[4]), std::uint64_t(p[5]), std::uint64_t(p[6]), std::uint64_t(p[7]),
            std::uint64_t(p[8]), std::uint64_t(p[9]), std::int64_t(p[10]), std::int64_t(p[11])};
  }
  // [begin, end) of input rows (or columns) of window o, clipped to the input.
  static std::pair<std::uint64_t, std::uint64_t> range(std::uint64_t o, std::uint64_t stride, std::uint64_t k,
                                                       std::int64_t pad, std::uint64_t size) {
    const std::int64_t first = std::int64_t(o * stride) - pad;
    const std::int64_t begin = std::max<std::int64_t>(0, first);
    const std::int64_t end = std::min<std::int64_t>(std::int64_t(size), first + std::int64_t(k));
    return {std::uint64_t(begin), std::uint64_t(std::max(begin, end))};
  }
  std::uint64_t inSize() const { return batch * inH * inW * chans; }
  std::uint64_t outSize() const { return batch * outH * outW * chans; }
  // body(b, oy, ox, y0, y1, x0, x1) for every window.
  template <class Body>
  void forEachWindow(Body&& body) const {
    for (std::uint64_t b = 0; b < batch; ++b)
      for (std::uint64_t oy = 0; oy < outH; ++oy) {
        const auto [y0, y1] = range(oy, sH, kH, padTop, inH);
        for (std::uint64_t ox = 0; ox < outW; ++ox) {
          const auto [x0, x1] = range(ox, sW, kW, padLeft, inW);
          body(b, oy, ox, y0, y1, x0, x1);
        }
      }
  }
  std::uint64_t in(std::uint64_t b, std::uint64_t y, std::uint64_t x) const { return ((b * inH + y) * inW + x) * chans; }
  std::uint64_t out(std::uint64_t b, std::uint64_t y, std::uint64_t x) const { return ((b * outH + y) * outW + x) * chans; }
};

enum class Pool { Max, Avg, MaxGrad, AvgGrad };

template <Pool P>
class Pooling final : public FlatCodelet<Pooling<P>> {
 public:
  // The element type whose vectors the cycles count (compute is float).
  explicit Pooling(ir::DType type = ir::DType::Float) : type_(type) {}
  static constexpr bool kGrad = P == Pool::MaxGrad || P == Pool::AvgGrad;
  std::string name() const override {
    switch (P) {
      case Pool::Max: return "MaxPool";
      case Pool::Avg: return "AvgPool";
      case Pool::MaxGrad: return "MaxPoolGrad";
      case Pool::AvgGrad: return "AvgPoolGrad";
    }
    return "";
  }
  std::vector<FieldSpec> fields() const override {
    using F = FieldAccess;
    switch (P) {
      case Pool::Max:
      case Pool::Avg: return {{"in", ir::DType::Float, F::In}, {"out", ir::DType::Float, F::Out}};
      case Pool::MaxGrad:
        return {{"in", ir::DType::Float, F::In}, {"gradOut", ir::DType::Float, F::In}, {"gradIn", ir::DType::Float, F::Out}};
      case Pool::AvgGrad: return {{"gradOut", ir::DType::Float, F::In}, {"gradIn", ir::DType::Float, F::Out}};
    }
    return {};
  }
  std::vector<std::string> params() const override {
    return {"batch", "inH", "inW", "chans", "outH", "outW", "kernelH", "kernelW", "strideH", "strideW", "padTop", "padLeft"};
  }
  std::vector<ParamDefault> paramDefaults() const override { return {{"padTop", 0}, {"padLeft", 0}}; }
  bool isSupervisor() const override { return true; }

  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    for (const char* d : {"batch", "inH", "inW", "chans", "outH", "outW", "kernelH", "kernelW", "strideH", "strideW"})
      check.dimension(d);
    check.param("padTop"), check.param("padLeft");
    const Window w = Window::of(shape.params.data());
    const std::string in = "batch x inH x inW x chans", out = "batch x outH x outW x chans";
    if (P == Pool::Max || P == Pool::Avg) {
      check.expectSize("in", w.inSize(), in), check.expectSize("out", w.outSize(), out);
    } else {
      if (P == Pool::MaxGrad) check.expectSize("in", w.inSize(), in);
      check.expectSize("gradOut", w.outSize(), out), check.expectSize("gradIn", w.inSize(), in);
    }
  }

  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const Window w = Window::of(shape.params.data());
    cycles::PoolShape s{w.batch, kGrad ? w.inH : w.outH, kGrad ? w.inW : w.outW, w.chans, w.kH, w.kW, type_};
    const cycles::PoolKind kind = P == Pool::Max ? cycles::PoolKind::Max
                                  : P == Pool::MaxGrad ? cycles::PoolKind::MaxGrad
                                                       : cycles::PoolKind::Sum;
    return cycles::poolingCycles(kind, s, target);
  }

  void computeFlat(const FieldData* f, const double* p) const {
    const Window w = Window::of(p);
    const std::uint64_t C = w.chans;
    if constexpr (P == Pool::Max || P == Pool::Avg) {
      const float* in = f[0].as<const float>();
      float* out = f[1].as<float>();
      w.forEachWindow([&](auto b, auto oy, auto ox, auto y0, auto y1, auto x0, auto x1) {
        float* o = out + w.out(b, oy, ox);
        const float init = P == Pool::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
        std::fill(o, o + C, init);
        for (std::uint64_t y = y0; y < y1; ++y)
          for (std::uint64_t x = x0; x < x1; ++x) {
            const float* i = in + w.in(b, y, x);
            for (std::uint64_t c = 0; c < C; ++c) o[c] = P == Pool::Max ? std::max(o[c], i[c]) : o[c] + i[c];
          }
        if (P == Pool::Avg) {
          const float count = float((y1 - y0) * (x1 - x0));
          for (std::uint64_t c = 0; c < C; ++c) o[c] = count > 0 ? o[c] / count : 0.0f;
        }
      });
    } else {
      const float* in = P == Pool::MaxGrad ? f[0].as<const float>() : nullptr;
      const float* gradOut = f[P == Pool::MaxGrad ? 1 : 0].as<const float>();
      float* gradIn = f[P == Pool::MaxGrad ? 2 : 1].as<float>();
      std::fill(gradIn, gradIn + w.inSize(), 0.0f);
      w.forEachWindow([&](auto b, auto oy, auto ox, auto y0, auto y1, auto x0, auto x1) {
        const float* g = gradOut + w.out(b, oy, ox);
        if (y0 == y1 || x0 == x1) return;
        if (P == Pool::AvgGrad) {
          const float count = float((y1 - y0) * (x1 - x0));
          for (std::uint64_t y = y0; y < y1; ++y)
            for (std::uint64_t x = x0; x < x1; ++x)
              for (std::uint64_t c = 0; c < C; ++c) gradIn[w.in(b, y, x) + c] += g[c] / count;
          return;
        }
        for (std::uint64_t c = 0; c < C; ++c) {
          std::uint64_t best = w.in(b, y0, x0) + c;
          for (std::uint64_t y = y0; y < y1; ++y)
            for (std::uint64_t x = x0; x < x1; ++x)
              if (in[w.in(b, y, x) + c] > in[best]) best = w.in(b, y, x) + c;
          gradIn[best] += g[c];
        }
      });
    }
  }

 private:
  ir::DType type_;
};

}  // namespace

void addPoolingCodelets(CodeletRegistry& registry) {  // each in float and all-half
  addFloatAndHalf<Pooling<Pool::Max>>(registry);
  addFloatAndHalf<Pooling<Pool::Avg>>(registry);
  addFloatAndHalf<Pooling<Pool::MaxGrad>>(registry);
  addFloatAndHalf<Pooling<Pool::AvgGrad>>(registry);
}

}  // namespace ipusim::model
