#include "sim/options/engine_options.hpp"

#include "model/util/json_error_text.hpp"
#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"
#include "model/util/nearest_name.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace ipusim::sim {

const char* toString(InstrumentationLevel level) {
  switch (level) {
    case InstrumentationLevel::Device: return "device";
    case InstrumentationLevel::Ipu: return "ipu";
    case InstrumentationLevel::Tile: return "tile";
    case InstrumentationLevel::Vertex: return "vertex";
  }
  return "?";
}

namespace {

// The text of a value: Poplar options are strings; JSON booleans and numbers
// are accepted as their usual spelling.
std::string valueText(const std::string& key, const nlohmann::json& value, const std::string& source) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_unsigned() || value.is_number_integer()) return value.dump();
  throw std::invalid_argument(source + ": option '" + key + "' has a " + value.type_name() +
                              " value; expected a string, boolean or number");
}

bool parseBool(const std::string& key, const std::string& text, const std::string& source) {
  if (text == "true") return true;
  if (text == "false") return false;
  throw std::invalid_argument(source + ": option '" + key + "' = '" + text + "': expected true or false");
}

std::uint64_t parseCount(const std::string& key, const std::string& text, const std::string& source) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || text.size() > 18)
    throw std::invalid_argument(source + ": option '" + key + "' = '" + text +
                                "': expected a whole number from 0 to 999999999999999999 (at most 18 digits)");
  return std::stoull(text);
}

InstrumentationLevel parseLevel(const std::string& key, const std::string& text, const std::string& source) {
  for (auto level : {InstrumentationLevel::Device, InstrumentationLevel::Ipu, InstrumentationLevel::Tile,
                     InstrumentationLevel::Vertex})
    if (text == toString(level)) return level;
  throw std::invalid_argument(source + ": option '" + key + "' = '" + text + "': expected device, ipu, tile or vertex");
}

struct OptionSetter {
  EngineOptionInfo info;
  std::function<void(EngineOptions&, const std::string& text, const std::string& source)> set;
};

const std::vector<OptionSetter>& setters() {
  static const std::vector<OptionSetter> table = {
      {{"autoReport.all", "true|false", "false",
        "turn on outputGraphProfile, outputExecutionProfile and outputDebugInfo (not outputSerializedGraph)"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         const bool on = parseBool("autoReport.all", t, s);
         o.outputGraphProfile = o.outputExecutionProfile = o.outputDebugInfo = on;
       }},
      {{"autoReport.directory", "a directory", ".", "where profile.pop and the other reports are written"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         if (t.empty()) throw std::invalid_argument(s + ": option 'autoReport.directory' is empty; expected a directory");
         // (A NUL would cut the name short where the system reads it, and the message with it.)
         if (t.find('\0') != std::string::npos)
           throw std::invalid_argument(s + ": option 'autoReport.directory' holds a NUL character (\\u0000); "
                                           "expected a directory name");
         o.directory = t;
       }},
      {{"autoReport.executionProfileProgramRunCount", "integer >= 0", "2",
        "how many runs of each program are captured in detail (every run gets a row in `runs`)"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.executionProfileProgramRunCount = parseCount("autoReport.executionProfileProgramRunCount", t, s);
       }},
      {{"autoReport.outputGraphProfile", "true|false", "false", "write the graph profile (programs, tile memory)"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.outputGraphProfile = parseBool("autoReport.outputGraphProfile", t, s);
       }},
      {{"autoReport.outputExecutionProfile", "true|false", "false", "write the execution profile (runs, slices)"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.outputExecutionProfile = parseBool("autoReport.outputExecutionProfile", t, s);
       }},
      {{"autoReport.outputDebugInfo", "true|false", "false", "write debug origins (workload layer and op) of program steps"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.outputDebugInfo = parseBool("autoReport.outputDebugInfo", t, s);
       }},
      {{"autoReport.outputSerializedGraph", "true|false", "false", "write serialized_graph.json (not part of autoReport.all)"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.outputSerializedGraph = parseBool("autoReport.outputSerializedGraph", t, s);
       }},
      {{"debug.allowOutOfMemory", "true|false", "false",
        "compile (or load with run --graph) a graph that exceeds tile memory, warn and report the over-full tiles in the profile instead of failing"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.allowOutOfMemory = parseBool("debug.allowOutOfMemory", t, s);
       }},
      {{"debug.instrument", "true|false", "false", "capture execution cycles even without an execution profile"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.instrument = parseBool("debug.instrument", t, s);
       }},
      {{"debug.computeInstrumentationLevel", "device|ipu|tile|vertex", "tile",
        "detail of captured compute: per device, per IPU, per tile (tile_phase_cycles) or per vertex"},
       [](EngineOptions& o, const std::string& t, const std::string& s) {
         o.instrumentationLevel = parseLevel("debug.computeInstrumentationLevel", t, s);
       }},
  };
  return table;
}

}  // namespace

const std::vector<EngineOptionInfo>& engineOptionTable() {
  static const std::vector<EngineOptionInfo> infos = [] {
    std::vector<EngineOptionInfo> out;
    for (const auto& s : setters()) out.push_back(s.info);
    return out;
  }();
  return infos;
}

void EngineOptions::apply(const nlohmann::json& options, const std::string& source) {
  if (options.is_null()) return;
  if (!options.is_object())
    throw std::invalid_argument(source + ": expected a JSON object of engine options, got a " +
                                std::string(options.type_name()));
  std::vector<std::string> names;
  for (const auto& s : setters()) names.push_back(s.info.name);
  // autoReport.all first, so that a specific option given beside it wins.
  auto ordered = options.items();
  std::vector<std::pair<std::string, nlohmann::json>> items;
  for (auto it = ordered.begin(); it != ordered.end(); ++it) items.emplace_back(it.key(), it.value());
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.first == "autoReport.all" && b.first != "autoReport.all"; });
  for (const auto& item : items) {
    // Named copies: a lambda may not capture a structured binding in C++17 (clang refuses it).
    const std::string& key = item.first;
    const nlohmann::json& value = item.second;
    auto found = std::find_if(setters().begin(), setters().end(), [&](const OptionSetter& s) { return s.info.name == key; });
    if (found == setters().end())
      throw std::invalid_argument(source + ": unknown engine option '" + key + "'; the nearest valid option is '" +
                                  util::nearestName(key, names) + "' (see `ipusim options`)");
    found->set(*this, valueText(key, value, source), source);
  }
}

void EngineOptions::applyText(const std::string& text, const std::string& source) {
  util::checkJsonNesting(text, source);
  nlohmann::json parsed;
  try {
    parsed = util::parseJsonWithUniqueKeys(text, source);  // an option given twice is refused by name
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(source + ": malformed JSON at byte " + std::to_string(e.byte) +
                                ": expected an object such as {\"autoReport.all\":\"true\"}");
  } catch (const nlohmann::json::exception& e) {  // a number out of range (found by fuzz_engine_options)
    throw std::invalid_argument(source + ": malformed JSON: " + util::jsonErrorText(e.what()));
  }
  apply(parsed, source);
}

nlohmann::json EngineOptions::toJson() const {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  return {
      {"autoReport.outputGraphProfile", b(outputGraphProfile)},
      {"autoReport.outputExecutionProfile", b(outputExecutionProfile)},
      {"autoReport.outputDebugInfo", b(outputDebugInfo)},
      {"autoReport.outputSerializedGraph", b(outputSerializedGraph)},
      {"autoReport.directory", directory},
      {"autoReport.executionProfileProgramRunCount", std::to_string(executionProfileProgramRunCount)},
      {"debug.allowOutOfMemory", b(allowOutOfMemory)},
      {"debug.instrument", b(instrument)},
      {"debug.computeInstrumentationLevel", toString(instrumentationLevel)},
  };
}

EngineOptions resolveEngineOptions(const nlohmann::json& compiled, const std::string& commandLine) {
  EngineOptions options;
  options.apply(compiled, "the executable's options");
  if (!commandLine.empty()) options.applyText(commandLine, "--engine-options");
  if (const char* env = std::getenv("POPLAR_ENGINE_OPTIONS"); env && *env)
    options.applyText(env, "POPLAR_ENGINE_OPTIONS");
  return options;
}

}  // namespace ipusim::sim
