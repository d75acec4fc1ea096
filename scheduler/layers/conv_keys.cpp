#include "scheduler/layers/conv_keys.hpp"

#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/window.hpp"
#include "scheduler/models/workload_limits.hpp"

#include <cctype>
#include <optional>

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

// A positive integer, or `rank` of them: the window's [rows, columns]
// ([1, steps] for 1-D); nullopt when `v` is neither.
std::optional<std::array<std::uint32_t, 2>> sizes(const nlohmann::json& v, int rank) {
  auto positive = [](const nlohmann::json& e) {
    return e.is_number_integer() && e.get<std::int64_t>() > 0 && e.get<std::int64_t>() <= 0xffffffffll;
  };
  if (positive(v)) return rank == 1 ? std::array<std::uint32_t, 2>{1, v.get<std::uint32_t>()}
                                    : std::array<std::uint32_t, 2>{v.get<std::uint32_t>(), v.get<std::uint32_t>()};
  if (!v.is_array() || v.size() != std::size_t(rank)) return std::nullopt;
  for (const auto& e : v)
    if (!positive(e)) return std::nullopt;
  if (rank == 1) return std::array<std::uint32_t, 2>{1, v[0].get<std::uint32_t>()};
  return std::array<std::uint32_t, 2>{v[0].get<std::uint32_t>(), v[1].get<std::uint32_t>()};
}

std::string sizesForms(int rank) {
  return rank == 1 ? "a positive integer or [steps]" : "a positive integer or [rows, columns]";
}


std::string pairText(const std::array<std::uint32_t, 2>& p, int rank) {
  return rank == 1 ? std::to_string(p[1]) : "[" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + "]";
}

// Keras refuses strides > 1 with dilation_rate > 1 (BaseConv, BaseDepthwiseConv, ...).
template <class Fail>
void checkStridesWithDilation(const LayerSpec& spec, int rank, const Fail& fail) {
  const bool strided = spec.strides[0] > 1 || spec.strides[1] > 1;
  const bool dilated = spec.dilation[0] > 1 || spec.dilation[1] > 1;
  if (strided && dilated)
    fail("dilation_rate", pairText(spec.dilation, rank) + " with strides " + pairText(spec.strides, rank) +
                              ": Keras refuses strides > 1 together with dilation_rate > 1");
}

}  // namespace

int convRank(const std::string& kind) {
  return kind == k::kConv1D || kind == k::kDepthwiseConv1D || kind == k::kSeparableConv1D || kind == k::kConv1DTranspose
             ? 1
             : 2;
}

void readConvWindow(const WorkloadReader& l, LayerSpec& spec, int rank, bool causal) {
  auto read = [&](const char* key, std::array<std::uint32_t, 2> def) {
    if (!l.has(key)) return def;
    const auto v = sizes(l.raw().at(key), rank);
    if (!v) l.fail(l.key(key), "expected " + sizesForms(rank) + ", got " + l.raw().at(key).dump());
    return *v;
  };
  if (!l.has("kernel_size")) l.fail(l.key("kernel_size"), "missing (expected " + sizesForms(rank) + ")");
  spec.window = read("kernel_size", {1, 1});
  spec.strides = read("strides", {1, 1});
  spec.dilation = read("dilation_rate", {1, 1});
  spec.padding = readPadding(l, "valid", causal);
  checkStridesWithDilation(spec, rank, [&](const char* key, const std::string& what) { l.fail(l.key(key), what); });
}

void readConvWindow(KerasConfig& c, LayerSpec& spec, int rank, bool causal) {
  auto read = [&](const char* key, std::array<std::uint32_t, 2> def) {
    c.ignore({key});
    if (c.isNull(key)) c.refuseNull(key, sizesForms(rank));  // Keras's standardize_tuple fails on None
    if (!c.has(key)) return def;
    const auto v = sizes(c.at(key), rank);
    if (!v) c.fail(key, "expected " + sizesForms(rank) + ", got " + c.at(key).dump());
    return *v;
  };
  c.require("kernel_size", sizesForms(rank));
  spec.window = read("kernel_size", {1, 1});
  spec.strides = read("strides", {1, 1});
  spec.dilation = read("dilation_rate", {1, 1});
  spec.padding = readPadding(c, causal);
  requireChannelsLast(c);
  checkStridesWithDilation(spec, rank, [&](const char* key, const std::string& what) { c.fail(key, what); });
}

std::uint32_t readPositive(KerasConfig& c, const char* key, std::int64_t def) {
  if (def <= 0) return c.count32(key);
  const std::int64_t v = c.integer(key, def);
  if (v <= 0 || v > 0xffffffffll) c.fail(key, "expected a positive integer, got " + c.at(key).dump());
  return std::uint32_t(v);
}

Shape convImage(const LayerSpec&, const Shape& in, int rank, const LayerFail& fail) {
  if (rank == 1) {
    if (in.size() != 2)
      fail("", "expects a steps x channels input (channels last), got " + shapeText(in) +
                   (in.size() == 1 ? " (add a reshape to steps x channels before it)" : ""));
    return {1, in[0], in[1]};
  }
  if (in.size() != 3)
    fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(in) +
                 (in.size() == 1 ? " (add a reshape to rows x columns x channels before it)" : ""));
  return in;
}

Shape convOutputShape(const LayerSpec& l, const Shape& in, int rank, std::uint64_t channels, const LayerFail& fail) {
  const Shape image = convImage(l, in, rank, fail);
  const Window w = windowOf(l);
  const std::uint64_t rows = w.outH(image[0]), cols = w.outW(image[1]);
  if (rows == 0 || cols == 0)
    fail("kernel_size", pairText(l.window, rank) + (l.dilation != std::array<std::uint32_t, 2>{1, 1}
                                                        ? " dilated by " + pairText(l.dilation, rank)
                                                        : std::string()) +
                            " with padding 'valid' is larger than its " + shapeText(in) + " input");
  if (rank == 1) return {cols, channels};
  return {rows, cols, channels};
}

std::pair<std::uint64_t, std::uint64_t> kernelFans(const Shape& kernel) {
  std::uint64_t field = 1;
  for (std::size_t d = 0; d + 2 < kernel.size(); ++d) field *= kernel[d];
  return {kernel[kernel.size() - 2] * field, kernel.back() * field};
}

void checkConvLimits(const LayerSpec& l, std::uint64_t kernelElements, const char* key, std::uint32_t batch,
                     const LayerFail& fail) {
  constexpr std::uint64_t kFloat = 4;
  const WideCount weights = WideCount(kernelElements) * kFloat;
  if (weights > kMaxTensorBytes)
    fail(key, "needs " + wideText(weights) + " bytes of float kernel; " + tensorLimitText());
  const WideCount activations = WideCount(batch) * elementsOf(l.outputShape) * kFloat;
  if (activations > kMaxTensorBytes)
    fail(key, "needs " + wideText(activations) + " bytes of float activations (batch " + std::to_string(batch) +
                  "); " + tensorLimitText());
}

}  // namespace ipusim::scheduler
