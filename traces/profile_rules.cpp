#include "traces/profile_rules.hpp"

#include "traces/internal/profile_rules_json.hpp"
#include "traces/profile_error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace ipusim::traces {
namespace {

struct Rules {
  std::string tileSlicesView;
  std::vector<ColumnRule> columns;
  std::vector<MetaRule> meta;
  std::map<std::string, std::vector<std::string>> rowKeys;
};

Rules parseRules() {
  const nlohmann::json j = nlohmann::json::parse(internal::kProfileRulesJson);
  Rules rules;
  rules.tileSlicesView = j.at("tile_slices_view").get<std::string>();
  for (const auto& c : j.at("columns")) {
    ColumnRule rule;
    rule.table = c.at("table").get<std::string>();
    rule.column = c.at("column").get<std::string>();
    if (c.value("kind", std::string("integer")) == "counter_value") {
      rule.kind = ColumnRule::Kind::CounterValue;
    } else {
      rule.min = c.at("min").get<std::int64_t>();
      rule.max = c.at("max").get<std::int64_t>();
    }
    rule.nullable = c.value("nullable", false);
    rule.minColumn = c.value("min_column", std::string());
    rules.columns.push_back(std::move(rule));
  }
  const nlohmann::json& rowKeys = j.at("row_keys");
  for (auto it = rowKeys.begin(); it != rowKeys.end(); ++it)
    rules.rowKeys[it.key()] = it.value().get<std::vector<std::string>>();
  for (const auto& m : j.at("meta")) {
    MetaRule rule;
    rule.key = m.at("key").get<std::string>();
    const std::string kind = m.at("kind").get<std::string>();
    if (kind == "json_object") {
      rule.kind = MetaRule::Kind::JsonObject;
      if (m.at("value_type").get<std::string>() != "string")
        throw std::logic_error("profile_rules.json: meta " + rule.key + ": value_type " + m.at("value_type").dump() +
                               ", this reader knows \"string\" only");
      rule.oneOf = m.value("one_of", std::vector<std::string>());
    } else if (kind == "text") {
      rule.kind = MetaRule::Kind::Text;
      rule.oneOf = m.at("one_of").get<std::vector<std::string>>();
    } else {
      rule.kind = kind == "number" ? MetaRule::Kind::Number : MetaRule::Kind::Integer;
      rule.min = m.at("min").get<double>();
      rule.max = m.at("max").get<double>();
    }
    rule.note = m.value("note", std::string());
    rules.meta.push_back(std::move(rule));
  }
  return rules;
}

const Rules& rules() {
  static const Rules parsed = parseRules();
  return parsed;
}

// A bound as the rules file writes it: a whole number in decimal.
std::string bound(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Whole decimal digits, as the rules define a meta integer.
bool isDecimalInteger(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// [+-]digits[.digits][(e|E)[+-]digits] or [+-].digits[...]: a decimal number.
bool isDecimalNumber(const std::string& text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

// A text as messages quote it: 40 characters at most.
std::string shortened(const std::string& text) { return text.size() > 40 ? text.substr(0, 40) + "..." : text; }

// A member's value as messages show it (the Python reader's
// rules.describe_json_value): a scalar as JSON, 40 characters at most; a
// container by its kind (dumping one nested 100,000 deep would overflow the stack).
std::string describeJsonValue(const nlohmann::json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return shortened(value.dump());
}

// The first member name a JSON object's top level gives twice (empty when
// none, or when `text` is no object: the parse that follows says so).
// nlohmann::json keeps the last of a name given twice without a word, so a
// stream's direction given both ways was read as the second. Only the top
// level, which the rule reads; a SAX pass: no value is kept, any depth.
std::string keyGivenTwice(const std::string& text) {
  struct Keys {
    std::size_t depth = 0;
    std::set<std::string> names;
    std::string twice;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(std::int64_t) { return true; }
    bool number_unsigned(std::uint64_t) { return true; }
    bool number_float(double, const std::string&) { return true; }
    bool string(std::string&) { return true; }
    bool binary(nlohmann::json::binary_t&) { return true; }
    bool start_object(std::size_t) { return ++depth, true; }
    bool start_array(std::size_t) { return ++depth, true; }
    bool end_object() { return --depth, true; }
    bool end_array() { return --depth, true; }
    bool key(std::string& name) {
      if (depth == 1 && !names.insert(name).second) twice = name;
      return twice.empty();  // (stops at the first)
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
  } keys;
  nlohmann::json::sax_parse(text, &keys);
  return keys.twice;
}

}  // namespace

const std::vector<ColumnRule>& columnRules() { return rules().columns; }
const std::string& tileSlicesViewSql() { return rules().tileSlicesView; }
const std::vector<MetaRule>& metaRules() { return rules().meta; }

const ColumnRule& columnRule(const std::string& table, const std::string& column) {
  for (const ColumnRule& rule : columnRules())
    if (rule.table == table && rule.column == column) return rule;
  throw std::logic_error("profile_rules.json has no rule for " + table + "." + column);
}

const MetaRule& metaRule(const std::string& key) {
  for (const MetaRule& rule : metaRules())
    if (rule.key == key) return rule;
  throw std::logic_error("profile_rules.json has no rule for meta " + key);
}

std::string describeExpectation(const ColumnRule& rule, std::int64_t minColumnValue) {
  if (rule.kind == ColumnRule::Kind::CounterValue) return "a number or 'NaN'";
  std::string text = rule.nullable ? "NULL or an integer" : "an integer";
  constexpr auto kLowest = std::numeric_limits<std::int64_t>::min();
  constexpr auto kHighest = std::numeric_limits<std::int64_t>::max();
  if (!rule.minColumn.empty())
    text += " from " + rule.minColumn + " (" + std::to_string(minColumnValue) + ") to " + std::to_string(rule.max);
  else if (rule.min != kLowest || rule.max != kHighest)
    text += " from " + std::to_string(rule.min) + " to " + std::to_string(rule.max);
  return text;
}

std::string describeExpectation(const MetaRule& rule) {
  if (rule.kind == MetaRule::Kind::JsonObject) {
    std::string values;
    for (std::size_t i = 0; i < rule.oneOf.size(); ++i)
      values += (i == 0 ? "\"" : i + 1 == rule.oneOf.size() ? " or \"" : ", \"") + rule.oneOf[i] + "\"";
    const std::string text = "a JSON object whose values are " + (values.empty() ? std::string("strings") : values);
    return rule.note.empty() ? text : text + " (" + rule.note + ")";
  }
  if (rule.kind == MetaRule::Kind::Text) {
    std::string text;
    for (std::size_t i = 0; i < rule.oneOf.size(); ++i)
      text += (i == 0 ? "'" : i + 1 == rule.oneOf.size() ? " or '" : ", '") + rule.oneOf[i] + "'";
    return rule.note.empty() ? text : text + " (" + rule.note + ")";
  }
  const bool integer = rule.kind == MetaRule::Kind::Integer;
  std::string text = std::string(integer ? "an integer" : "a number") + " from " +
                     (integer ? std::to_string(std::uint64_t(rule.min)) : bound(rule.min)) + " to " +
                     (integer ? std::to_string(std::uint64_t(rule.max)) : bound(rule.max));
  return rule.note.empty() ? text : text + " (" + rule.note + ")";
}

const std::vector<std::string>& rowKeyColumns(const std::string& table) {
  static const std::vector<std::string> kRowid{"rowid"};
  const auto it = rules().rowKeys.find(table);
  return it == rules().rowKeys.end() ? kRowid : it->second;
}

void requireValue(const std::string& file, const ColumnRule& rule, const std::string& rowKey, std::int64_t value,
                  std::int64_t minColumnValue) {
  if (rule.nullable && value == -1) return;
  const std::int64_t low = rule.minColumn.empty() ? rule.min : std::max(rule.min, minColumnValue);
  if (value >= low && value <= rule.max) return;
  throw ProfileError(file + ": damaged profile: " + rule.table + "." + rule.column + " is " + std::to_string(value) +
                     " in the row with " + rowKey + "; expected " + describeExpectation(rule, minColumnValue));
}

double checkMetaValue(const std::string& file, const MetaRule& rule, const std::string& text) {
  if (rule.kind == MetaRule::Kind::JsonObject || rule.kind == MetaRule::Kind::Text)
    throw std::logic_error("checkMetaValue: meta " + rule.key + " is not a number");
  double value = 0;
  bool ok = false;
  if (rule.kind == MetaRule::Kind::Integer) {
    if (isDecimalInteger(text)) {  // compared as integers: a double would round 2^62 + 1 to 2^62
      errno = 0;
      const unsigned long long parsed = std::strtoull(text.c_str(), nullptr, 10);
      value = double(parsed);
      ok = errno != ERANGE && parsed >= std::uint64_t(rule.min) && parsed <= std::uint64_t(rule.max);
    }
  } else if (isDecimalNumber(text)) {
    value = std::strtod(text.c_str(), nullptr);
    ok = value >= rule.min && value <= rule.max;  // false for an overflow's inf too
  }
  if (!ok) throw ProfileError(file + ": meta '" + rule.key + "' is '" + shortened(text) + "', expected " + describeExpectation(rule));
  return value;
}

void checkMetaText(const std::string& file, const MetaRule& rule, const std::string& text) {
  if (rule.kind == MetaRule::Kind::Text) {
    if (std::find(rule.oneOf.begin(), rule.oneOf.end(), text) == rule.oneOf.end())
      throw ProfileError(file + ": meta '" + rule.key + "' is '" + shortened(text) + "', expected " + describeExpectation(rule));
    return;
  }
  if (rule.kind != MetaRule::Kind::JsonObject) {
    checkMetaValue(file, rule, text);
    return;
  }
  // Parsing is iterative (any depth); the value is only walked one level
  // down, never copied, compared or dumped whole (those recurse).
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object())
    throw ProfileError(file + ": meta '" + rule.key + "' is '" + shortened(text) + "', expected " + describeExpectation(rule));
  if (const std::string twice = keyGivenTwice(text); !twice.empty())
    throw ProfileError(file + ": meta '" + rule.key + "' gives '" + shortened(twice) + "' twice, expected " +
                       describeExpectation(rule) + ", each key once");
  const auto allowed = [&](const nlohmann::json& value) {
    if (!value.is_string()) return false;
    const auto& text = value.get_ref<const std::string&>();
    return rule.oneOf.empty() || std::find(rule.oneOf.begin(), rule.oneOf.end(), text) != rule.oneOf.end();
  };
  for (const auto& [name, value] : parsed.items()) {  // in key order (a std::map)
    if (!allowed(value))
      throw ProfileError(file + ": meta '" + rule.key + "' gives '" + shortened(name) + "' the value " +
                         describeJsonValue(value) + ", expected " + describeExpectation(rule));
  }
}

}  // namespace ipusim::traces
