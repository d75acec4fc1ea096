#pragma once
// Strict reading of JSON for the IR: every accessor names the key path
// ("computeSets[3].vertices[7].tile") and the expected type in its error, and
// objects are checked against the keys they may contain (unknown keys are
// errors, with the nearest valid key suggested). Internal to model/ir.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::ir::json_reader {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what);
std::string child(const std::string& path, const std::string& key);  // "a.b" (or "b" at the root)
std::string item(const std::string& path, std::size_t index);        // "a[3]"

// Throws unless `j` is an object whose keys are all in `allowed`.
void expectObject(const json& j, const std::string& path, const std::vector<std::string>& allowed);
const json& required(const json& obj, const std::string& path, const std::string& key, const char* expected);
const json* optional(const json& obj, const std::string& key);
const json& expectArray(const json& j, const std::string& path);

std::uint64_t asU64(const json& j, const std::string& path);
std::uint32_t asU32(const json& j, const std::string& path);
double asDouble(const json& j, const std::string& path);  // null reads as NaN (JSON cannot hold NaN)
bool asBool(const json& j, const std::string& path);
std::string asString(const json& j, const std::string& path);  // printable: no control character

}  // namespace ipusim::ir::json_reader
