#include "scheduler/layers/einsum_equation.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <utility>

namespace ipusim::scheduler {
namespace {

// Where the equation's '...' stands (Keras's three forms).
enum class ElidedAxes { None, Left, Right };

struct EquationSpecs {
  std::string input, kernel, output;  // letters only
  ElidedAxes elided = ElidedAxes::None;
};

bool lettersOnly(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c); });
}

// Keras's forms, "[X],[Y]->[Z]", "...[X],[Y]->...[Z]" or "[X]...,[Y]->[Z]..."
// (X at least two letters there), matched whole.
EquationSpecs parseEquation(const std::string& equation, const LayerFail& fail) {
  const std::size_t comma = equation.find(','), arrow = equation.find("->");
  auto refuse = [&] {
    fail("equation", "'" + equation +
                         "' is not an EinsumDense equation: Keras reads [X],[Y]->[Z], ...[X],[Y]->...[Z] or "
                         "[X]...,[Y]->[Z]..., with X, Y and Z letters");
  };
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) refuse();
  EquationSpecs s{equation.substr(0, comma), equation.substr(comma + 1, arrow - comma - 1), equation.substr(arrow + 2)};
  const std::string dots = "...";
  auto strip = [&](std::string& spec, bool front) {
    if (spec.size() < dots.size()) return false;
    if (front ? spec.compare(0, 3, dots) != 0 : spec.compare(spec.size() - 3, 3, dots) != 0) return false;
    spec = front ? spec.substr(3) : spec.substr(0, spec.size() - 3);
    return true;
  };
  if (strip(s.input, true)) {
    if (!strip(s.output, true)) refuse();
    s.elided = ElidedAxes::Left;
  } else if (strip(s.input, false)) {
    if (!strip(s.output, false) || s.input.size() < 2) refuse();
    s.elided = ElidedAxes::Right;
  }
  if (!lettersOnly(s.input) || !lettersOnly(s.kernel) || !lettersOnly(s.output)) refuse();
  const std::initializer_list<std::pair<const std::string&, const char*>> specs{
      {s.input, "input"}, {s.kernel, "kernel"}, {s.output, "output"}};
  for (const auto& [spec, what] : specs)
    for (std::size_t i = 0; i < spec.size(); ++i)
      if (spec.find(spec[i], i + 1) != std::string::npos)
        fail("equation", "'" + std::string(1, spec[i]) + "' names two of the " + what + "'s axes '" + spec +
                             "' (a diagonal): not modelled");
  return s;
}

std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const LayerFail& fail) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    fail("output_shape", "the sizes multiply past 2^64 elements");
  return a * b;
}

}  // namespace

EinsumDensePlan planEinsumDense(const std::string& equation, bool hasBias, const std::string& biasAxes,
                                const Shape& inputShape, const std::vector<std::int64_t>& outputShape,
                                const LayerFail& fail) {
  const EquationSpecs s = parseEquation(equation, fail);
  const std::size_t rank = inputShape.size() + 1;  // with the batch
  if (s.input.size() > rank || (s.elided == ElidedAxes::None && s.input.size() != rank))
    fail("", "an input of rank " + std::to_string(rank) + " (with the batch) where the equation's input '" + s.input +
                 "' names " + std::to_string(s.input.size()) + " axes");
  const std::size_t elided = rank - s.input.size();
  if (s.elided == ElidedAxes::Right && elided > 0)
    fail("equation", "'" + equation +
                         "': the axes '...' elides on the right follow the kernel's new axes in the output, which "
                         "is not one matrix product (not modelled)");
  const std::size_t leading = s.elided == ElidedAxes::Left ? elided : 0;

  // Labels: letters, and for the axes '...' elides labels of their own (not letters).
  using Labels = std::vector<int>;
  auto labels = [&](const std::string& spec, bool withElided) {
    Labels out;
    if (withElided)
      for (std::size_t k = 0; k < leading; ++k) out.push_back(256 + int(k));
    for (unsigned char c : spec) out.push_back(c);
    return out;
  };
  const Labels in = labels(s.input, true), kernel = labels(s.kernel, false), out = labels(s.output, true);
  auto shown = [&](const Labels& ls) {
    std::string text = leading && !ls.empty() && ls[0] >= 256 ? "..." : "";
    for (int l : ls)
      if (l < 256) text += char(l);
    return text;
  };
  auto name = [](int l) { return l < 256 ? "'" + std::string(1, char(l)) + "'" : std::string("'...'"); };
  auto has = [](const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); };
  auto at = [](const Labels& ls, int l) { return std::size_t(std::find(ls.begin(), ls.end(), l) - ls.begin()); };

  // The full output shape as Keras builds it: the batch, the axes '...'
  // elides after it, then output_shape.
  const std::size_t given = out.size() - 1 - (leading ? leading - 1 : 0);
  if (outputShape.size() != given)
    fail("output_shape", std::to_string(outputShape.size()) + " sizes where the equation's output '" + shown(out) +
                             "' needs " + std::to_string(given) + " (without the batch" +
                             (leading ? std::string(" and the axes '...' elides") : "") + ")");
  Shape fullIn{0};
  fullIn.insert(fullIn.end(), inputShape.begin(), inputShape.end());
  Shape fullOut(out.size(), 0);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const int l = out[j];
    if (j == 0 || j < leading) {  // the batch and the elided axes: the input's
      if (!has(in, l))
        fail("equation", "the output's first axis " + name(l) + " is the batch's: it must be the input's first");
      fullOut[j] = fullIn[at(in, l)];
      continue;
    }
    const std::int64_t size = outputShape[j - (out.size() - given)];
    if (has(in, l)) {
      fullOut[j] = fullIn[at(in, l)];
      if (size >= 0 && std::uint64_t(size) != fullOut[j])
        fail("output_shape", std::to_string(size) + " for the output's axis " + name(l) + ", which the input has at " +
                                 std::to_string(fullOut[j]) + " (Keras: the input and output shapes must match there)");
    } else if (has(kernel, l)) {
      if (size < 0)
        fail("output_shape", "None for the output's axis " + name(l) +
                                 ", which only the kernel has: its size must be given (Keras: the weight must be "
                                 "fully specified)");
      if (size == 0) fail("output_shape", "0 for the output's axis " + name(l) + " (expected a positive size)");
      fullOut[j] = std::uint64_t(size);
    } else {
      fail("equation", "the output's axis " + name(l) + " is in neither the input '" + shown(in) + "' nor the kernel '" +
                           s.kernel + "'");
    }
  }

  // Each axis's part in the product.
  Labels freeAxes, contractedAxes, newAxes;
  for (int l : in) {
    const bool k = has(kernel, l), o = has(out, l);
    if (k && o)
      fail("equation", "the axis " + name(l) + " is the input's, the kernel's and the output's: a product per " +
                           name(l) + " (a batched einsum), not modelled");
    if (!k && !o) fail("equation", "the input's axis " + name(l) + " is summed without the kernel: not modelled");
    (k ? contractedAxes : freeAxes).push_back(l);
  }
  if (has(kernel, in[0]))
    fail("equation", "the batch axis " + name(in[0]) + " is contracted (a sum over the examples): not modelled");
  for (int l : kernel) {
    if (has(in, l)) continue;
    if (!has(out, l))
      fail("equation", "the kernel's axis " + name(l) + " is in neither the input '" + shown(in) + "' nor the output '" +
                           shown(out) + "': its size is unknown (Keras: the weight must be fully specified)");
    newAxes.push_back(l);
  }
  Labels inOrder = freeAxes, kernelOrder = contractedAxes, outOrder = freeAxes;
  inOrder.insert(inOrder.end(), contractedAxes.begin(), contractedAxes.end());
  kernelOrder.insert(kernelOrder.end(), newAxes.begin(), newAxes.end());
  outOrder.insert(outOrder.end(), newAxes.begin(), newAxes.end());
  if (in != inOrder || kernel != kernelOrder || out != outOrder)
    fail("equation", "'" + equation +
                         "' needs a transposition: ipusim computes one matrix product, input [free axes, contracted "
                         "axes] . kernel [contracted axes, new axes] = output [free axes, new axes], each group in "
                         "one order throughout (here free " + shown(freeAxes) + ", contracted " + shown(contractedAxes) +
                         ", new " + shown(newAxes) + ")");

  EinsumDensePlan plan;
  for (std::size_t j = 1; j < out.size(); ++j) plan.outputShape.push_back(fullOut[j]);
  for (int l : kernel) plan.kernelShape.push_back(has(in, l) ? fullIn[at(in, l)] : fullOut[at(out, l)]);
  for (std::size_t i = 1; i < freeAxes.size(); ++i) plan.rows = checkedProduct(plan.rows, fullIn[at(in, freeAxes[i])], fail);
  for (int l : contractedAxes) plan.contracted = checkedProduct(plan.contracted, fullIn[at(in, l)], fail);
  for (int l : newAxes) plan.produced = checkedProduct(plan.produced, fullOut[at(out, l)], fail);
  checkedProduct(plan.contracted, plan.produced, fail);

  if (hasBias) {
    if (biasAxes.empty()) fail("bias_axes", "'' names no axis (Keras fails on it; null: no bias)");
    std::string missing;
    for (std::size_t i = 0; i < biasAxes.size(); ++i) {
      const unsigned char c = biasAxes[i];
      if (!std::isalpha(c) || s.output.find(char(c)) == std::string::npos)
        fail("bias_axes", "'" + std::string(1, char(c)) + "' is not an axis of the output '" + s.output + "'");
      if (biasAxes.find(char(c), i + 1) != std::string::npos)
        fail("bias_axes", "'" + std::string(1, char(c)) + "' is named twice in '" + biasAxes + "'");
    }
    for (int l : newAxes)
      if (biasAxes.find(char(l)) == std::string::npos) missing += char(l);
    if (!missing.empty() || biasAxes.size() != newAxes.size())
      fail("bias_axes", "'" + biasAxes + "': a bias over other axes than the kernel's new ones ('" + shown(newAxes) +
                            "') is not modelled (a bias over all of them, or none, is)");
    // Keras's bias shape: the output's axes from the first biased one on, which are the new axes.
    for (int l : newAxes) plan.biasShape.push_back(fullOut[at(out, l)]);
  }

  // Keras's compute_fans.
  const Shape& k = plan.kernelShape;
  if (k.size() == 1) {
    plan.fanIn = plan.fanOut = k[0];
  } else if (k.size() >= 2) {
    std::uint64_t receptive = 1;
    for (std::size_t i = 0; i + 2 < k.size(); ++i) receptive *= k[i];
    plan.fanIn = k[k.size() - 2] * receptive, plan.fanOut = k.back() * receptive;
  }
  return plan;
}

}  // namespace ipusim::scheduler
