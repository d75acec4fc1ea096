#pragma once
// Internal to traces/: the text of python/ipusim_profile/profile_rules.json,
// compiled in by CMake (configure_file of profile_rules_json.cpp.in).
namespace ipusim::traces::internal {
extern const char* const kProfileRulesJson;
}
