#include "scheduler/models/initializer.hpp"

#include "scheduler/models/keras_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;
using Kind = InitializerSpec::Kind;

InitializerSpec varianceScaling(double scale, const std::string& mode, const std::string& distribution) {
  InitializerSpec s;
  s.kind = Kind::VarianceScaling;
  s.a = scale, s.mode = mode, s.distribution = distribution;
  return s;
}

// The named forms (keras/src/initializers/random_initializers.py).
std::optional<InitializerSpec> named(const std::string& name) {
  static const std::map<std::string, InitializerSpec> forms{
      {"GlorotUniform", varianceScaling(1, "fan_avg", "uniform")},
      {"GlorotNormal", varianceScaling(1, "fan_avg", "truncated_normal")},
      {"HeUniform", varianceScaling(2, "fan_in", "uniform")},
      {"HeNormal", varianceScaling(2, "fan_in", "truncated_normal")},
      {"LecunUniform", varianceScaling(1, "fan_in", "uniform")},
      {"LecunNormal", varianceScaling(1, "fan_in", "truncated_normal")}};
  const auto it = forms.find(name);
  return it == forms.end() ? std::nullopt : std::optional<InitializerSpec>(it->second);
}

// snake_case and Keras 1 names -> the class.
std::string className(const std::string& name) {
  static const std::map<std::string, std::string> aliases{
      {"glorot_uniform", "GlorotUniform"}, {"glorot_normal", "GlorotNormal"}, {"he_uniform", "HeUniform"},
      {"he_normal", "HeNormal"}, {"lecun_uniform", "LecunUniform"}, {"lecun_normal", "LecunNormal"},
      {"zeros", "Zeros"}, {"zero", "Zeros"}, {"ones", "Ones"}, {"one", "Ones"}, {"constant", "Constant"},
      {"random_uniform", "RandomUniform"}, {"uniform", "RandomUniform"}, {"random_normal", "RandomNormal"},
      {"normal", "RandomNormal"}, {"truncated_normal", "TruncatedNormal"}, {"variance_scaling", "VarianceScaling"},
      {"orthogonal", "Orthogonal"}, {"identity", "Identity"}};
  const auto it = aliases.find(name);
  return it == aliases.end() ? name : it->second;
}

double number(const json& config, const char* key, double def, const std::function<void(const std::string&)>& fail) {
  if (!config.is_object() || !config.contains(key) || config.at(key).is_null()) return def;
  const json& v = config.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    fail(std::string(key) + ": expected a finite number, got " + v.dump());
  return v.get<double>();
}

std::string text(const json& config, const char* key, const std::string& def) {
  if (!config.is_object() || !config.contains(key) || !config.at(key).is_string()) return def;
  return config.at(key).get<std::string>();
}

std::string bracketedShape(const std::vector<std::uint64_t>& shape) {
  std::string t = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + "]";
}

// Orthogonal: the weight as Keras flattens it, all dimensions but the last
// by the last; Identity: its two dimensions.
ir::DrawnInit matrixInit(const InitializerSpec& spec, const std::vector<std::uint64_t>& shape, std::uint64_t seed,
                         const std::function<void(const std::string&)>& fail) {
  const bool orthogonal = spec.kind == Kind::Orthogonal;
  ir::DrawnInit d;
  if (orthogonal && shape.size() < 2) {
    fail("Orthogonal needs a weight of at least 2 dimensions (as Keras), got shape " + bracketedShape(shape));
    return d;
  }
  if (!orthogonal && shape.size() != 2) {
    fail("Identity needs a 2-D weight (Keras's Identity makes 2-D matrices only), got shape " + bracketedShape(shape));
    return d;
  }
  d.distribution = orthogonal ? ir::DrawnInit::Distribution::Orthogonal : ir::DrawnInit::Distribution::Identity;
  d.seed = orthogonal ? seed : 0;
  d.gain = spec.a;
  d.rows = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) d.rows *= shape[i];
  d.cols = shape.back();
  return d;
}

}  // namespace

InitializerSpec glorotUniformSpec() { return *named("GlorotUniform"); }

InitializerSpec constantSpec(double value) {
  InitializerSpec s;
  s.a = value;
  return s;
}

InitializerSpec readInitializer(const json& v, const std::function<void(const std::string&)>& fail) {
  const std::string cls = className(v.is_string() ? v.get<std::string>() : kerasClassName(v));
  static const json kNoConfig = json::object();
  const json& config = v.is_object() && v.contains("config") ? v.at("config") : kNoConfig;
  InitializerSpec s;
  if (auto form = named(cls)) {
    s = *form;
  } else if (cls == "Zeros" || cls == "Ones") {
    s = constantSpec(cls == "Ones" ? 1 : 0);
  } else if (cls == "Constant") {
    s = constantSpec(number(config, "value", 0, fail));
  } else if (cls == "RandomUniform") {
    s.kind = Kind::Uniform;
    s.a = number(config, "minval", -0.05, fail), s.b = number(config, "maxval", 0.05, fail);
    if (!(s.a <= s.b)) fail("minval " + std::to_string(s.a) + " above maxval " + std::to_string(s.b));
  } else if (cls == "RandomNormal" || cls == "TruncatedNormal") {
    s.kind = cls == "RandomNormal" ? Kind::Normal : Kind::TruncatedNormal;
    s.a = number(config, "mean", 0, fail), s.b = number(config, "stddev", 0.05, fail);
    if (!(s.b >= 0)) fail("stddev: expected a number >= 0, got " + std::to_string(s.b));
  } else if (cls == "VarianceScaling") {
    s = varianceScaling(number(config, "scale", 1, fail), text(config, "mode", "fan_in"),
                        text(config, "distribution", "truncated_normal"));
    if (s.distribution == "normal") s.distribution = "truncated_normal";  // tf.keras's alias
    if (!(s.a > 0)) fail("scale: expected a positive number, got " + std::to_string(s.a));
    if (s.mode != "fan_in" && s.mode != "fan_out" && s.mode != "fan_avg")
      fail("mode: '" + s.mode + "' (expected fan_in, fan_out or fan_avg)");
    if (s.distribution != "truncated_normal" && s.distribution != "untruncated_normal" && s.distribution != "uniform")
      fail("distribution: '" + s.distribution + "' (expected truncated_normal, untruncated_normal or uniform)");
  } else if (cls == "Orthogonal" || cls == "OrthogonalInitializer" || cls == "Identity" ||
             cls == "IdentityInitializer") {
    // Keras's gain: any number (a negative one flips the signs; 0 gives zeros).
    s.kind = cls.rfind("Orthogonal", 0) == 0 ? Kind::Orthogonal : Kind::Identity;
    s.a = number(config, "gain", 1, fail);
  } else {
    fail(v.dump().substr(0, 200) + " is not modelled (modelled: Zeros, Ones, Constant, RandomUniform, RandomNormal, "
         "TruncatedNormal, VarianceScaling, GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, "
         "Orthogonal, Identity)");
  }
  s.text = v.dump().substr(0, 200);
  return s;
}

InitialValues initialValuesOf(const InitializerSpec& spec, const std::vector<std::uint64_t>& shape, std::uint64_t seed,
                              const std::function<void(const std::string&)>& fail) {
  InitialValues out;
  if (spec.kind == Kind::Constant) {
    out.fill = spec.a;
    return out;
  }
  ir::DrawnInit d;
  d.seed = seed;
  using D = ir::DrawnInit::Distribution;
  switch (spec.kind) {
    case Kind::Orthogonal:
    case Kind::Identity:
      d = matrixInit(spec, shape, seed, fail);
      break;
    case Kind::Uniform:
      d.center = (spec.a + spec.b) / 2, d.limit = (spec.b - spec.a) / 2;
      break;
    case Kind::Normal:
    case Kind::TruncatedNormal:
      d.distribution = spec.kind == Kind::Normal ? D::Normal : D::TruncatedNormal;
      d.center = spec.a, d.stddev = spec.b;
      break;
    default: {
      // Keras's compute_fans and VarianceScaling.__call__.
      double fanIn = 1, fanOut = 1;
      if (shape.size() == 1) {
        fanIn = fanOut = double(shape[0]);
      } else if (shape.size() >= 2) {
        double receptive = 1;
        for (std::size_t i = 0; i + 2 < shape.size(); ++i) receptive *= double(shape[i]);
        fanIn = double(shape[shape.size() - 2]) * receptive;
        fanOut = double(shape.back()) * receptive;
      }
      const double n = spec.mode == "fan_in" ? fanIn : spec.mode == "fan_out" ? fanOut : (fanIn + fanOut) / 2;
      const double scale = spec.a / std::max(1.0, n);
      if (spec.distribution == "uniform") {
        d.limit = std::sqrt(3.0 * scale);
      } else if (spec.distribution == "untruncated_normal") {
        d.distribution = D::Normal, d.stddev = std::sqrt(scale);
      } else {
        // The deviation of a standard normal cut at two deviations: 0.879...
        d.distribution = D::TruncatedNormal, d.stddev = std::sqrt(scale) / 0.87962566103423978;
      }
    }
  }
  out.drawn = d;
  return out;
}

}  // namespace ipusim::scheduler
