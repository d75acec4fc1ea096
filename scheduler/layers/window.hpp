#pragma once
// The window of a Conv2D or pooling op (Keras/TF semantics, NHWC): kernel
// (or pool) size, strides, and padding "valid" or "same" with TF's
// arithmetic:
//   valid: out = ceil((in - k + 1) / s), no padding;
//   same:  out = ceil(in / s), padding total = max((out - 1) s + k - in, 0),
//          of which floor(total / 2) before (top/left) and the rest after.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ipusim::scheduler {

enum class Padding { Valid, Same };

struct Window {
  std::uint64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1;
  Padding padding = Padding::Valid;

  // The output size along a dimension of `in` elements with kernel k, stride s.
  static std::uint64_t outSize(std::uint64_t in, std::uint64_t k, std::uint64_t s, Padding p) {
    if (p == Padding::Same) return (in + s - 1) / s;
    return in >= k ? (in - k) / s + 1 : 0;
  }
  // Padding before the first element (top or left).
  static std::uint64_t padBefore(std::uint64_t in, std::uint64_t k, std::uint64_t s, Padding p) {
    if (p == Padding::Valid) return 0;
    const std::uint64_t out = outSize(in, k, s, p);
    const std::uint64_t needed = (out - 1) * s + k;
    return needed > in ? (needed - in) / 2 : 0;
  }
  std::uint64_t outH(std::uint64_t inH) const { return outSize(inH, kernelH, strideH, padding); }
  std::uint64_t outW(std::uint64_t inW) const { return outSize(inW, kernelW, strideW, padding); }
  std::uint64_t padTop(std::uint64_t inH) const { return padBefore(inH, kernelH, strideH, padding); }
  std::uint64_t padLeft(std::uint64_t inW) const { return padBefore(inW, kernelW, strideW, padding); }
};

inline const char* toString(Padding p) { return p == Padding::Same ? "same" : "valid"; }

}  // namespace ipusim::scheduler
