#include "sim/host/graph_runner.hpp"

#include "model/clock.hpp"
#include "model/numeric/half.hpp"
#include "model/stop_request.hpp"
#include "sim/host/interrupt.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ipusim::sim {

double inputValue(ir::Id stream, std::uint64_t copy, std::uint64_t element) {
  // Smooth, sign-changing and different for every stream and copy.
  return std::sin(0.01 * double(element) + 0.7 * double(copy) + 1.3 * double(stream));
}

namespace {

template <class T>
void fill(model::Bytes& bytes, ir::Id stream, std::uint64_t copy, std::uint64_t count) {
  bytes.resize(count * sizeof(T));
  for (std::uint64_t i = 0; i < count; ++i) {
    // Integers (labels, indices) in [0, 9]: valid classes for the bundled workloads.
    const double x = inputValue(stream, copy, i);
    const T v = std::is_floating_point_v<T> ? static_cast<T>(x) : static_cast<T>(std::floor((x + 1.0) * 4.999));
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
}

// Half streams carry IEEE binary16 patterns: the same inputs, rounded to half.
void fillHalf(model::Bytes& bytes, ir::Id stream, std::uint64_t copy, std::uint64_t count) {
  bytes.resize(count * sizeof(model::numeric::HalfBits));
  for (std::uint64_t i = 0; i < count; ++i) {
    const model::numeric::HalfBits v = model::numeric::floatToHalf(float(inputValue(stream, copy, i)));
    std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
  }
}

std::vector<double> decodeHalf(const model::Bytes& bytes) {
  std::vector<double> out(bytes.size() / sizeof(model::numeric::HalfBits));
  for (std::size_t i = 0; i < out.size(); ++i) {
    model::numeric::HalfBits v;
    std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
    out[i] = model::numeric::halfToFloat(v);
  }
  return out;
}

template <class T>
std::vector<double> decode(const model::Bytes& bytes) {
  std::vector<double> out(bytes.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = double(v);
  }
  return out;
}

}  // namespace

GraphRunner::GraphRunner(sc_core::sc_module_name name, Engine& engine, std::uint32_t entry, std::uint64_t runs)
    : sc_module(name), engine_(engine), entry_(entry), runs_(runs) {
  const auto& exe = engine_.system().executable();
  for (const auto& spec : exe.streams) {
    auto& stream = engine_.system().stream(spec.id);
    if (spec.direction == ir::StreamDirection::HostToDevice) {
      auto copies = std::make_shared<std::uint64_t>(0);
      stream.connect([spec, copies](model::Bytes& bytes) {
        const std::uint64_t copy = (*copies)++;
        if (spec.dtype == ir::DType::Float) fill<float>(bytes, spec.id, copy, spec.elementsPerCopy);
        else if (spec.dtype == ir::DType::Bool) fill<std::uint8_t>(bytes, spec.id, copy, spec.elementsPerCopy);
        else if (spec.dtype == ir::DType::Half) fillHalf(bytes, spec.id, copy, spec.elementsPerCopy);
        else fill<std::int32_t>(bytes, spec.id, copy, spec.elementsPerCopy);
      });
    } else {
      auto* sink = &outputs_[spec.name];
      auto* received = &received_[spec.name];
      // Whole copies fit the budget while their count is below this (a kept
      // copy costs its doubles, its vector and the allocator's header).
      const std::uint64_t copyBytes = spec.elementsPerCopy * sizeof(double) + sizeof(std::vector<double>) + 16;
      const std::uint64_t keptCopies = kKeptBytesPerStream / copyBytes;
      stream.connect([spec, sink, received, keptCopies](model::Bytes& bytes) {
        if ((*received)++ >= keptCopies) return;
        if (spec.dtype == ir::DType::Float) sink->push_back(decode<float>(bytes));
        else if (spec.dtype == ir::DType::Bool) sink->push_back(decode<std::uint8_t>(bytes));
        else if (spec.dtype == ir::DType::Half) sink->push_back(decodeHalf(bytes));
        else sink->push_back(decode<std::int32_t>(bytes));
      });
    }
  }
  SC_THREAD(main);
}

void GraphRunner::main() {
  try {
    for (std::uint64_t r = 0; r < runs_ && !interruptRequested(); ++r) {
      engine_.run(entry_);
      ++runsDone_;
    }
  } catch (const model::StopRequested&) {
    // Interrupted: the caller sees interruptRequested() and reports it.
  } catch (...) {
    failure_ = std::current_exception();
  }
  endCycle_ = model::nowCycles();
  sc_core::sc_stop();
}

std::uint64_t GraphRunner::copiesReceived(const std::string& stream) const {
  const auto it = received_.find(stream);
  return it == received_.end() ? 0 : it->second;
}

void GraphRunner::rethrowFailure() const {
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace ipusim::sim
