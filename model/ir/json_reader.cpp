#include "model/ir/json_reader.hpp"

#include "model/util/json_error_text.hpp"
#include "model/util/nearest_name.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ipusim::ir::json_reader {

void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument((path.empty() ? std::string("executable") : path) + ": " + what);
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string item(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

namespace {
std::string got(const json& j) { return std::string(", got ") + j.type_name(); }
}  // namespace

void expectObject(const json& j, const std::string& path, const std::vector<std::string>& allowed) {
  if (!j.is_object()) fail(path, "expected an object" + got(j));
  for (const auto& entry : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), entry.key()) != allowed.end()) continue;
    std::string list;
    for (const auto& key : allowed) list += (list.empty() ? "" : ", ") + key;
    fail(child(path, entry.key()), "unknown key" + util::didYouMean(entry.key(), allowed) + " (expected one of: " + list + ")");
  }
}

const json& required(const json& obj, const std::string& path, const std::string& key, const char* expected) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(child(path, key), std::string("missing (expected ") + expected + ")");
  return *it;
}

const json* optional(const json& obj, const std::string& key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& expectArray(const json& j, const std::string& path) {
  if (!j.is_array()) fail(path, "expected an array" + got(j));
  return j;
}

std::uint64_t asU64(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) return std::uint64_t(j.get<std::int64_t>());
  fail(path, "expected an unsigned integer" + (j.is_number() ? ", got " + j.dump() : got(j)));
}

std::uint32_t asU32(const json& j, const std::string& path) {
  const std::uint64_t v = asU64(j, path);
  if (v > std::numeric_limits<std::uint32_t>::max())
    fail(path, "expected an unsigned 32-bit integer, got " + std::to_string(v));
  return std::uint32_t(v);
}

double asDouble(const json& j, const std::string& path) {
  if (j.is_number()) return j.get<double>();
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  fail(path, "expected a number" + got(j));
}

bool asBool(const json& j, const std::string& path) {
  if (!j.is_boolean()) fail(path, "expected true or false" + got(j));
  return j.get<bool>();
}

std::string asString(const json& j, const std::string& path) {
  if (!j.is_string()) fail(path, "expected a string" + got(j));
  std::string text = j.get<std::string>();
  // Every string of a graph is a name or a word that the summaries, reports
  // and the profile show: one holding an escape sequence drove the terminal,
  // a newline split their lines.
  if (util::holdsControlCharacter(text))
    fail(path, util::oneLineText(text.size() > 40 ? text.substr(0, 40) + "..." : text) +
                   " holds a control character: expected printable text (a name)");
  return text;
}

}  // namespace ipusim::ir::json_reader
