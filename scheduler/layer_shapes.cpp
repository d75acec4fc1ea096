#include "scheduler/layer_shapes.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

std::uint64_t windowedSize(std::uint64_t in, std::uint32_t window, std::uint32_t stride, const std::string& padding) {
  if (padding == "same") return (in + stride - 1) / stride;
  if (in < window) return 0;
  return (in - window) / stride + 1;
}

void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::uint64_t>& inputShape,
                      const std::string& source, const LayerKeyNamer& where) {
  namespace k = layer_kind;
  std::vector<std::uint64_t> shape = inputShape;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerSpec& l = layers[i];
    auto fail = [&](const std::string& key, const std::string& what) {
      throw std::invalid_argument(source + ": " + where(i, key) + ": " + what);
    };
    l.inputShape = shape;
    if (shape.empty()) fail("", "the input has no shape");
    if (l.kind == k::kFlatten) {
      shape = {elementsOf(shape)};
    } else if (l.kind == k::kReshape) {
      std::int64_t unknownAt = -1;
      std::uint64_t known = 1;
      std::vector<std::uint64_t> out;
      for (std::size_t d = 0; d < l.targetShape.size(); ++d) {
        const std::int64_t v = l.targetShape[d];
        if (v == -1 && unknownAt < 0) {
          unknownAt = std::int64_t(d);
          out.push_back(0);
        } else if (v <= 0) {
          fail("target_shape", "expected positive sizes and at most one -1, got " + std::to_string(v) + " at " +
                                   std::to_string(d));
        } else {
          out.push_back(std::uint64_t(v));
          known *= std::uint64_t(v);
        }
      }
      const std::uint64_t n = elementsOf(shape);
      if (unknownAt >= 0) {
        if (n % known) fail("target_shape", "cannot reshape " + shapeText(shape) + " (" + std::to_string(n) +
                                                " elements) with a -1 beside sizes whose product is " + std::to_string(known));
        out[std::size_t(unknownAt)] = n / known;
      } else if (known != n) {
        fail("target_shape", "cannot reshape " + shapeText(shape) + " (" + std::to_string(n) + " elements) to " +
                                 shapeText(out) + " (" + std::to_string(known) + " elements)");
      }
      shape = out;
    } else if (l.kind == k::kDense) {
      shape.back() = l.units;  // Keras's Dense works on the last axis
    } else if (l.kind == k::kConv2D || l.kind == k::kMaxPooling2D || l.kind == k::kAveragePooling2D) {
      const bool conv = l.kind == k::kConv2D;
      if (shape.size() != 3)
        fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(shape) +
                     (shape.size() == 1 ? " (add a reshape to rows x columns x channels before it)" : ""));
      const char* windowKey = conv ? "kernel_size" : "pool_size";
      std::vector<std::uint64_t> out = shape;
      for (int d = 0; d < 2; ++d) {
        out[d] = windowedSize(shape[d], l.window[d], l.strides[d], l.padding);
        if (out[d] == 0)
          fail(windowKey, std::to_string(l.window[0]) + "x" + std::to_string(l.window[1]) +
                              " with padding 'valid' is larger than its " + shapeText(shape) + " input");
      }
      if (conv) out[2] = l.units;
      shape = out;
    } else if (l.kind == k::kBatchNormalization || l.kind == k::kDropout || l.kind == k::kActivation) {
      // same shape; batch normalisation keeps one mean and variance per channel (the last axis)
    } else {
      fail("type", "unknown layer kind '" + l.kind + "'");
    }
    l.outputShape = shape;
  }
}

}  // namespace ipusim::scheduler
