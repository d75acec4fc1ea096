#include "cpu_reference_optimizer.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::testing {

double scheduledLearningRate(const scheduler::LearningRateSchedule& s, std::uint64_t iteration) {
  const double step = double(iteration);
  if (s.type == "piecewise_constant_decay") {  // values[0] while step <= boundaries[0], ...
    std::size_t i = 0;
    while (i < s.boundaries.size() && step > double(s.boundaries[i])) ++i;
    return s.values[i];
  }
  const double init = s.initialLearningRate;
  if (s.type == "exponential_decay" || s.type == "inverse_time_decay") {
    double p = step / s.decaySteps;
    if (s.staircase) p = std::floor(p);
    return s.type == "exponential_decay" ? init * std::pow(s.decayRate, p) : init / (1 + s.decayRate * p);
  }
  if (s.type == "polynomial_decay") {
    double decaySteps = s.decaySteps, at = step;
    if (s.cycle)
      decaySteps *= at == 0 ? 1.0 : std::ceil(at / s.decaySteps);  // the first multiple past the step
    else
      at = std::min(at, decaySteps);
    return (init - s.endLearningRate) * std::pow(1 - at / decaySteps, s.power) + s.endLearningRate;
  }
  // cosine_decay: a linear warmup from init to warmup_target, then the cosine from it (or from init).
  const double pi = std::acos(-1.0);
  auto cosine = [&](double at, double from) {
    return from * ((1 - s.alpha) * 0.5 * (1 + std::cos(pi * at / s.decaySteps)) + s.alpha);
  };
  if (!s.warmup) return cosine(std::min(step, s.decaySteps), init);
  const double at = std::min(step, s.decaySteps + s.warmupSteps);
  if (at < s.warmupSteps) return (s.warmupTarget - init) * at / s.warmupSteps + init;
  return cosine(at - s.warmupSteps, s.warmupTarget);
}

CpuOptimizer::CpuOptimizer(scheduler::OptimizerSpec spec, const std::vector<std::vector<float>>& weights)
    : o_(std::move(spec)) {
  const float initial = o_.rule() == "adagrad" ? float(o_.initialAccumulatorValue) : 0.0f;
  for (const auto& w : weights)
    slots_.push_back(std::vector<std::vector<float>>(o_.slots(), std::vector<float>(w.size(), initial)));
}

void CpuOptimizer::apply(std::vector<std::vector<float>>& weights, std::map<std::size_t, std::vector<float>> grads) {
  const std::uint64_t t = ++iterations_;  // Keras's iterations + 1
  learningRate_ = o_.schedule.enabled() ? scheduledLearningRate(o_.schedule, t - 1) : o_.learningRate;
  // Clipping (Keras's _clip_gradients).
  if (o_.clipvalue > 0) {
    const float v = float(o_.clipvalue);
    for (auto& [i, g] : grads)
      for (float& e : g) e = std::min(std::max(e, -v), v);
  } else if (o_.clipnorm > 0) {
    for (auto& [i, g] : grads) {
      double sum = 0;
      for (float e : g) sum += double(e) * e;
      const double factor = o_.clipnorm / std::max(std::sqrt(sum), o_.clipnorm);
      for (float& e : g) e = float(e * factor);
    }
  } else if (o_.globalClipnorm > 0) {
    double sum = 0;
    for (const auto& [i, g] : grads)
      for (float e : g) sum += double(e) * e;
    const double factor = o_.globalClipnorm / std::max(std::sqrt(sum), o_.globalClipnorm);
    for (auto& [i, g] : grads)
      for (float& e : g) e = float(e * factor);
  }
  // Nadam's product of momentum factors, once per step before the updates.
  if (o_.rule() == "nadam") product_ *= o_.beta1 * (1 - 0.5 * std::pow(0.96, double(t)));
  for (auto& [i, g] : grads) {
    std::vector<float>& w = weights[i];
    if (o_.weightDecay != 0)  // decoupled weight decay, before the rule
      for (float& e : w) e = float(e - double(e) * o_.weightDecay * learningRate_);
    update(w, slots_[i], g, learningRate_);
  }
}

void CpuOptimizer::update(std::vector<float>& w, std::vector<std::vector<float>>& s, const std::vector<float>& g,
                          double learningRate) const {
  const std::string rule = o_.rule();
  const double t = double(iterations_);
  const float lr = float(learningRate);
  const std::size_t n = w.size();
  if (rule == "sgd" && o_.momentum == 0) {
    for (std::size_t i = 0; i < n; ++i) w[i] -= lr * g[i];
  } else if (rule == "sgd") {
    const float m = float(o_.momentum);
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] = m * s[0][i] - lr * g[i];
      w[i] += o_.nesterov ? m * s[0][i] - lr * g[i] : s[0][i];
    }
  } else if (rule == "adam") {
    const float alpha = float(learningRate * std::sqrt(1.0 - std::pow(o_.beta2, t)) / (1.0 - std::pow(o_.beta1, t)));
    const float b1 = float(1.0 - o_.beta1), b2 = float(1.0 - o_.beta2), eps = float(o_.epsilon);
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] += (g[i] - s[0][i]) * b1;
      s[1][i] += (g[i] * g[i] - s[1][i]) * b2;
      w[i] -= alpha * s[0][i] / (std::sqrt(s[1][i]) + eps);
    }
  } else if (rule == "rmsprop") {
    const float rho = float(o_.rho), eps = float(o_.epsilon), m = float(o_.momentum);
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] = rho * s[0][i] + (1.0f - rho) * g[i] * g[i];
      float d = s[0][i] + eps;
      if (o_.centered) {
        s[1][i] = rho * s[1][i] + (1.0f - rho) * g[i];
        d = s[0][i] - s[1][i] * s[1][i] + eps;
      }
      const float inc = lr * g[i] / std::sqrt(d);
      if (o_.momentum > 0) {
        auto& mom = s[o_.centered ? 2 : 1];
        mom[i] = m * mom[i] + inc;
        w[i] -= mom[i];
      } else {
        w[i] -= inc;
      }
    }
  } else if (rule == "adagrad") {
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] += g[i] * g[i];
      w[i] -= float(learningRate * g[i] / std::sqrt(double(s[0][i]) + o_.epsilon));
    }
  } else if (rule == "adamax") {
    const double correction = 1 - std::pow(o_.beta1, t);
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] += float((g[i] - s[0][i]) * (1 - o_.beta1));
      s[1][i] = std::max(float(o_.beta2 * s[1][i]), std::fabs(g[i]));
      w[i] -= float(learningRate * s[0][i] / (correction * (s[1][i] + o_.epsilon)));
    }
  } else {  // nadam
    const double uT = o_.beta1 * (1 - 0.5 * std::pow(0.96, t));
    const double uNext = o_.beta1 * (1 - 0.5 * std::pow(0.96, t + 1));
    const double productNext = product_ * uNext;
    const double correction2 = 1 - std::pow(o_.beta2, t);
    for (std::size_t i = 0; i < n; ++i) {
      s[0][i] += float((g[i] - s[0][i]) * (1 - o_.beta1));
      s[1][i] += float((double(g[i]) * g[i] - s[1][i]) * (1 - o_.beta2));
      const double mHat = uNext * s[0][i] / (1 - productNext) + (1 - uT) * g[i] / (1 - product_);
      const double vHat = s[1][i] / correction2;
      w[i] -= float(mHat * learningRate / (std::sqrt(vHat) + o_.epsilon));
    }
  }
}

}  // namespace ipusim::testing
