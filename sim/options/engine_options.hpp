#pragma once
// Engine options, as Poplar names them. Sources, lowest priority first: the
// options compiled into the executable, `--engine-options JSON`, and the
// POPLAR_ENGINE_OPTIONS environment variable (the environment wins, as in
// Poplar). Values are strings as in Poplar; JSON booleans and numbers are
// accepted too. An unknown key is an error naming it and the nearest valid
// key; a malformed value names the key and what it accepts.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipusim::sim {

enum class InstrumentationLevel { Device, Ipu, Tile, Vertex };
const char* toString(InstrumentationLevel level);

struct EngineOptions {
  bool outputGraphProfile = false;
  bool outputExecutionProfile = false;
  bool outputDebugInfo = false;
  bool outputSerializedGraph = false;
  std::string directory = ".";
  std::uint64_t executionProfileProgramRunCount = 2;
  bool allowOutOfMemory = false;  // Poplar's default; DESIGN.md said true (see the option table)
  bool instrument = false;
  InstrumentationLevel instrumentationLevel = InstrumentationLevel::Tile;

  // A profile is written when any of the profile outputs is on.
  bool writesProfile() const { return outputGraphProfile || outputExecutionProfile; }
  bool capturesExecution() const { return outputExecutionProfile || instrument; }

  // Applies one JSON object of options on top of this one. `source` names
  // where it came from in error messages ("POPLAR_ENGINE_OPTIONS").
  void apply(const nlohmann::json& options, const std::string& source);
  // Parses `text` as a JSON object and applies it; malformed JSON is an error
  // naming `source` and the byte position.
  void applyText(const std::string& text, const std::string& source);
  // The effective options as Poplar-style strings, for the profile's meta.
  nlohmann::json toJson() const;
};

// One row per supported option: name, accepted values, default, meaning.
struct EngineOptionInfo {
  std::string name, accepts, defaultValue, description;
};
const std::vector<EngineOptionInfo>& engineOptionTable();

// compiled < commandLine < POPLAR_ENGINE_OPTIONS (read from the environment).
// Throws std::invalid_argument with a message naming the culprit.
EngineOptions resolveEngineOptions(const nlohmann::json& compiled, const std::string& commandLine);

}  // namespace ipusim::sim
