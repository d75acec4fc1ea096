#pragma once
// JSON parsed with each key of an object given once. nlohmann::json keeps
// the last of a key given twice without a word ({"steps": 8, "steps": 4}
// trained 4 steps; a Keras layer's second "units" replaced its first), so
// every file a user gives ipusim (workloads, Keras models, serialized
// graphs) and every JSON value given on the command line is parsed here.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace ipusim::util {

// nlohmann::json::parse(text, nullptr, allowExceptions), except that a key
// given twice in one object throws std::invalid_argument("<source>: <path>:
// given twice in one object (JSON keeps only the last); expected each key
// once"), the path naming the key from the document's top (an array's
// elements shown as []: "model.layers[].units"). Syntax errors are left as
// nlohmann reports them (an exception, or a discarded value).
nlohmann::json parseJsonWithUniqueKeys(std::string_view text, const std::string& source, bool allowExceptions = true);

}  // namespace ipusim::util
