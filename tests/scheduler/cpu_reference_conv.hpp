#pragma once
// Plain loops for the CPU reference's convolution family as Keras defines
// it (NHWC activations; a 1-D layer is one row): grouped and dilated
// convolutions (Conv1D/2D with groups and dilation_rate, padding valid, same
// or causal; DepthwiseConv1D/2D; the two halves of SeparableConv1D/2D) and
// transposed convolutions (Conv1D/2DTranspose, with output_padding),
// forward and backward, float values with double accumulators. Written from
// the definitions, not from the device's formulation: the output sizes and
// TF's padding are computed here, and a transposed convolution scatters each
// input position through the kernel into the output (TF's conv_transpose)
// rather than convolving a dilated input with a flipped kernel.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::testing {

struct ConvGeometry {
  // Images of inH x inW x inC in, outH x outW x outC out; the kernel taps
  // (kH x kW, dilated), strides, the padding before the first row/column;
  // `groups`: output channel co reads input channels [g cpg, (g + 1) cpg) of
  // group g = co / (outC / groups), cpg = inC / groups.
  std::uint64_t batch = 0, inH = 0, inW = 0, inC = 0, outH = 0, outW = 0, outC = 0;
  std::uint64_t kH = 1, kW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, groups = 1;
  std::uint64_t padTop = 0, padLeft = 0;
  // A convolution: `padding` valid, same (TF's arithmetic) or causal (the
  // left padding of Keras's Conv1D, on the columns).
  static ConvGeometry convolution(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                                  std::uint64_t outC, std::uint64_t kH, std::uint64_t kW, std::uint64_t strideH,
                                  std::uint64_t strideW, std::uint64_t dilationH, std::uint64_t dilationW,
                                  const std::string& padding, std::uint64_t groups);
  // A transposed convolution from inH x inW x inC to outH x outW x outC
  // (sizes as Keras computes them, given): its padding is that of the
  // convolution from the output back to the input (TF's arithmetic).
  static ConvGeometry transposed(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                                 std::uint64_t outH, std::uint64_t outW, std::uint64_t outC, std::uint64_t kH,
                                 std::uint64_t kW, std::uint64_t strideH, std::uint64_t strideW, std::uint64_t dilationH,
                                 std::uint64_t dilationW, const std::string& padding);
};

// Keras's output length of a transposed convolution (conv_transpose output
// length): output_padding < 0 means none given.
std::uint64_t transposedLength(std::uint64_t in, std::uint64_t k, std::uint64_t stride, std::uint64_t dilation,
                               const std::string& padding, std::int64_t outputPadding);

struct ConvGrads {
  std::vector<float> kernel, bias, input;  // input empty unless asked for
};

// y = x (*) kernel [kH][kW][inC / groups][outC] (+ bias [outC] when not empty).
std::vector<float> groupedConvForward(const ConvGeometry& g, const std::vector<float>& x,
                                      const std::vector<float>& kernel, const std::vector<float>& bias);
ConvGrads groupedConvBackward(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                              const std::vector<float>& gradOut, bool wantInput);

// y[oy][ox][f] = sum over input positions and taps landing on (oy, ox) of
// x[iy][ix][c] kernel[ky][kx][f][c] (kernel [kH][kW][outC][inC]), + bias.
std::vector<float> transposedConvForward(const ConvGeometry& g, const std::vector<float>& x,
                                         const std::vector<float>& kernel, const std::vector<float>& bias);
ConvGrads transposedConvBackward(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& gradOut, bool wantInput);

}  // namespace ipusim::testing
