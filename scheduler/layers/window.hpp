#pragma once
// The window of a Conv2D or pooling op (Keras/TF semantics, NHWC): kernel
// (or pool) size, strides, the kernel's dilation (Keras's dilation_rate:
// taps d apart, an effective size of (k - 1) d + 1 = K), and padding
// "valid", "same" with TF's arithmetic, or "causal" (Keras's Conv1D):
//   valid:  out = ceil((in - K + 1) / s), no padding;
//   same:   out = ceil(in / s), padding total = max((out - 1) s + K - in, 0),
//           of which floor(total / 2) before (top/left) and the rest after;
//   causal: K - 1 before, none after (Keras pads the steps on the left so
//           that an output never reads a later step): out = ceil(in / s).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ipusim::scheduler {

enum class Padding { Valid, Same, Causal };

struct Window {
  std::uint64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1;
  Padding padding = Padding::Valid;
  std::uint64_t dilationH = 1, dilationW = 1;  // the kernel's (convolutions only)

  // The effective size of a kernel of k taps dilated by d.
  static std::uint64_t effective(std::uint64_t k, std::uint64_t d) { return k ? (k - 1) * d + 1 : 0; }
  // The output size along a dimension of `in` elements with effective kernel size k, stride s.
  static std::uint64_t outSize(std::uint64_t in, std::uint64_t k, std::uint64_t s, Padding p) {
    if (p != Padding::Valid) return (in + s - 1) / s;
    return in >= k ? (in - k) / s + 1 : 0;
  }
  // Padding before the first element (top or left).
  static std::uint64_t padBefore(std::uint64_t in, std::uint64_t k, std::uint64_t s, Padding p) {
    if (p == Padding::Valid) return 0;
    if (p == Padding::Causal) return k - 1;
    const std::uint64_t out = outSize(in, k, s, p);
    const std::uint64_t needed = (out - 1) * s + k;
    return needed > in ? (needed - in) / 2 : 0;
  }
  std::uint64_t effectiveH() const { return effective(kernelH, dilationH); }
  std::uint64_t effectiveW() const { return effective(kernelW, dilationW); }
  std::uint64_t outH(std::uint64_t inH) const { return outSize(inH, effectiveH(), strideH, padding); }
  std::uint64_t outW(std::uint64_t inW) const { return outSize(inW, effectiveW(), strideW, padding); }
  std::uint64_t padTop(std::uint64_t inH) const { return padBefore(inH, effectiveH(), strideH, padding); }
  std::uint64_t padLeft(std::uint64_t inW) const { return padBefore(inW, effectiveW(), strideW, padding); }
};

inline const char* toString(Padding p) {
  return p == Padding::Same ? "same" : p == Padding::Causal ? "causal" : "valid";
}

}  // namespace ipusim::scheduler
