#pragma once
// Reading one Keras object's config for the importer (keras_model.hpp):
// every key is either used, ignored because it does not change the
// computation, or checked to hold the value ipusim models (a regularizer must
// be null, dilation_rate 1, ...). A key the importer does not know is an
// error too: a newer Keras may have given it a meaning. Errors are
// std::invalid_argument "<file>: <where>: <key>: <what>", where `where` names
// the object ("layer 'conv2d_1' (Conv2D)", "compile_config.optimizer (Adam)").
// Internal to scheduler/.
#include "scheduler/models/initializer.hpp"
#include "scheduler/models/regularizer.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class KerasConfig {
 public:
  using json = nlohmann::json;
  KerasConfig(const json& config, std::string file, std::string where);

  bool has(const std::string& key) const;  // present and not null
  bool isNull(const std::string& key) const;  // present and null
  // Fails "missing" when absent and, when null, says Keras cannot use None
  // here; `expected` describes the value ("a positive integer").
  void require(const std::string& key, const std::string& expected) const;
  // A required positive integer of at most 4,294,967,295 (units, filters,
  // heads): missing, not a positive integer, or over that limit, each said so.
  std::uint32_t count32(const std::string& key);
  const json& at(const std::string& key) const;
  // Marks keys as read; check() then fails on any key never read.
  void ignore(std::initializer_list<const char*> keys);
  void check() const;

  // null: what Keras makes of None (see keras_config.cpp). The typed getters
  // below give `def` for an absent key and refuse null, since Keras computes
  // with these values (None fails there); a key whose None means a default
  // in Keras is read by its layer with isNull() first. boolean(): null is
  // false (Keras tests them for truth: `if self.use_bias`).
  std::string string(const std::string& key, const std::string& def);
  std::string oneOf(const std::string& key, const std::string& def, const std::set<std::string>& allowed);
  double number(const std::string& key, double def);
  std::int64_t integer(const std::string& key, std::int64_t def);
  bool boolean(const std::string& key, bool def);
  // A positive integer or a list/tuple of two (kernel_size, strides, pool_size).
  std::array<std::uint32_t, 2> pair(const std::string& key, std::array<std::uint32_t, 2> def);
  // A positive integer or a list of one (a 1-D layer's kernel_size, pool_size, strides).
  std::uint32_t single(const std::string& key, std::uint32_t def);
  // requireNull: the key must be absent or null; requireValue: absent, null
  // (Keras's falsy default for the keys it is used on) or `modelled`. For a
  // regularizer, a constraint, clipnorm ...
  void requireNull(const std::string& key, const std::string& why);
  void requireValue(const std::string& key, const json& modelled, const std::string& why);
  // An initializer (scheduler/models/initializer.hpp): one of `classes`, the
  // layer's default, or any other modelled one, kept in initializers() for
  // the layer (its own seed ignored: ipusim draws its own). null is
  // GlorotUniform: Keras's add_weight draws a float weight whose initializer
  // is None so.
  void requireInitializer(const std::string& key, const std::set<std::string>& classes);
  // The initializers read that are not the layer's default, by key ("kernel_initializer").
  const std::map<std::string, InitializerSpec>& initializers() const { return initializers_; }
  // A regularizer (scheduler/models/regularizer.hpp) or null, kept in
  // regularizers() by key ("kernel_regularizer") for the layer.
  void regularizer(const std::string& key);
  const std::map<std::string, RegularizerSpec>& regularizers() const { return regularizers_; }
  // An activation name (a string, or Keras 3's serialized function).
  std::string activation(const std::string& key);
  // A dtype or dtype policy: "float32", {"class_name": "Policy"|"DTypePolicy"|..., "config": {"name": ...}}.
  std::string dtypePolicy(const std::string& key);
  // A batch shape ([null, 28, 28, 1]) -> the per-example shape; `batch` gets a fixed batch size (else 0).
  // A size left unknown (null, as keras.applications models without their top write [null, null, null, 3]) is 0.
  std::vector<std::uint64_t> batchShape(const std::string& key, std::uint32_t& batch);

  // The file's format, "tf2" (TF 2.x and older Keras) or "keras3" (the
  // default): the few names whose meaning changed (hard_sigmoid) need it.
  void setFormat(std::string format) { format_ = std::move(format); }
  // A Keras 1 config read in Keras 2's keys (keras1_spellings.hpp): errors
  // name the key the file wrote ("nb_filter"), by Keras 2 key.
  void setFileKeys(std::map<std::string, std::string> fileKeys) { fileKeys_ = std::move(fileKeys); }
  const std::string& format() const { return format_; }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  // "<key>: null is refused: ..." for a key Keras computes with.
  [[noreturn]] void refuseNull(const std::string& key, const std::string& expected) const;
  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  void use(const std::string& key) { used_.insert(key); }
  const json& config_;
  std::string file_, where_;
  std::string format_ = "keras3";
  std::set<std::string> used_;
  std::map<std::string, InitializerSpec> initializers_;
  std::map<std::string, RegularizerSpec> regularizers_;
  std::map<std::string, std::string> fileKeys_;
};

// Keras's class_name of a serialized object ({"class_name": ...}), or "".
std::string kerasClassName(const nlohmann::json& object);

}  // namespace ipusim::scheduler
