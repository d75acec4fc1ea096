#include "scheduler/layer_shapes.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

std::uint64_t windowedSize(std::uint64_t in, std::uint32_t window, std::uint32_t stride, const std::string& padding) {
  if (padding == "same") return (in + stride - 1) / stride;
  if (in < window) return 0;
  return (in - window) / stride + 1;
}

namespace {

// A merge's output: its inputs' common shape (concatenate: the sum of their
// sizes along the axis, every other dimension equal).
template <typename Fail>
std::vector<std::uint64_t> mergedShape(LayerSpec& l, const std::vector<std::vector<std::uint64_t>>& ins, Fail fail) {
  std::string shapes;
  for (const auto& s : ins) shapes += (shapes.empty() ? "" : ", ") + shapeText(s);
  if (l.kind == layer_kind::kSubtract && ins.size() != 2)
    fail("", "subtract takes exactly two inputs, got " + std::to_string(ins.size()));
  if (l.kind != layer_kind::kConcatenate) {
    for (const auto& s : ins)
      if (s != ins[0]) fail("", "the inputs' shapes do not merge: " + shapes + " (" + l.kind + " needs equal shapes)");
    return ins[0];
  }
  // Keras counts the axis with the batch (axis 0); -1 is the last.
  const std::int64_t rank = std::int64_t(ins[0].size()) + 1;
  const std::int64_t axis = l.axis < 0 ? l.axis + rank : l.axis;
  if (axis < 1 || axis >= rank)
    fail("axis", std::to_string(l.axis) + " is not an axis of the rank-" + std::to_string(rank) +
                     " inputs but the batch's (1 to " + std::to_string(rank - 1) + ", or -1 to " + std::to_string(1 - rank) + ")");
  l.axis = axis;
  std::vector<std::uint64_t> out = ins[0];
  out[std::size_t(axis - 1)] = 0;
  for (const auto& s : ins) {
    bool fits = s.size() == out.size();
    for (std::size_t d = 0; fits && d < s.size(); ++d) fits = d == std::size_t(axis - 1) || s[d] == out[d];
    if (!fits) fail("", "the inputs' shapes do not concatenate on axis " + std::to_string(axis) + ": " + shapes);
    out[std::size_t(axis - 1)] += s[std::size_t(axis - 1)];
  }
  return out;
}

}  // namespace

void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::uint64_t>& inputShape,
                      const std::string& source, const LayerKeyNamer& where) {
  namespace k = layer_kind;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerSpec& l = layers[i];
    auto fail = [&](const std::string& key, const std::string& what) {
      throw std::invalid_argument(source + ": " + where(i, key) + ": " + what);
    };
    if (l.inputs.empty()) l.inputs = {i == 0 ? kModelInput : i - 1};  // a chain
    std::vector<std::vector<std::uint64_t>> ins;
    for (std::size_t j : l.inputs) {
      if (j != kModelInput && j >= i) fail("", "internal: an input that is not an earlier layer");
      ins.push_back(j == kModelInput ? inputShape : layers[j].outputShape);
    }
    std::vector<std::uint64_t> shape = ins[0];
    l.inputShape = shape;
    if (shape.empty()) fail("", "the input has no shape");
    if (isMerge(l.kind)) {
      shape = mergedShape(l, ins, fail);
    } else if (l.kind == k::kGlobalAveragePooling2D || l.kind == k::kGlobalMaxPooling2D) {
      if (shape.size() != 3) fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(shape));
      shape = l.keepDims ? std::vector<std::uint64_t>{1, 1, shape[2]} : std::vector<std::uint64_t>{shape[2]};
    } else if (l.kind == k::kZeroPadding1D || l.kind == k::kZeroPadding2D || l.kind == k::kCropping1D ||
               l.kind == k::kCropping2D) {
      const bool two = l.kind == k::kZeroPadding2D || l.kind == k::kCropping2D;
      const bool crop = l.kind == k::kCropping1D || l.kind == k::kCropping2D;
      const char* key = crop ? "cropping" : "padding";
      if (shape.size() != (two ? 3u : 2u))
        fail("", std::string("expects a ") + (two ? "rows x columns x channels" : "steps x channels") +
                     " input (channels last), got " + shapeText(shape));
      // 2d: rows then columns; 1d: the steps (pads[2], pads[3]).
      for (std::size_t d = two ? 0 : 1; d < 2; ++d) {
        const std::uint64_t extra = std::uint64_t(l.pads[2 * d]) + l.pads[2 * d + 1];
        std::uint64_t& size = shape[two ? d : 0];
        if (crop && extra >= size)
          fail(key, "cuts " + std::to_string(extra) + " of the " + std::to_string(size) + " " +
                        (two && d == 0 ? "rows" : two ? "columns" : "steps") + " of its " + shapeText(l.inputShape) + " input");
        size = crop ? size - extra : size + extra;
      }
    } else if (l.kind == k::kFlatten) {
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
