// loadExecutable / saveExecutable: the executable as a JSON file. Errors name
// the file; malformed JSON reports the byte where parsing stopped.
#include "model/ir/executable.hpp"
#include "model/util/input_file.hpp"
#include "model/util/json_error_text.hpp"
#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace ipusim::ir {

Executable loadExecutable(const std::string& path) {
  const std::string text = util::readInputFile(path, "serialized graph", kMaxExecutableFileBytes);
  util::checkJsonNesting(text, "executable '" + path + "'");
  nlohmann::json j;
  try {
    j = util::parseJsonWithUniqueKeys(text, "executable '" + path + "'");  // a key given twice is refused
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument("executable '" + path + "' is not valid JSON at byte " + std::to_string(e.byte) +
                                ": " + util::jsonErrorText(e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number out of range
    throw std::invalid_argument("executable '" + path + "' is not valid JSON: " + util::jsonErrorText(e.what()));
  }
  try {
    return fromJson(j);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("executable '" + path + "': " + e.what());
  }
}

void saveExecutable(const Executable& exe, const std::string& path) {
  // Written under a temporary name and renamed: a failed save never leaves a
  // truncated file where a good one was expected.
  const std::string temporary = path + ".tmp";
  // Created anew, never written through a link of that name (a planted
  // symlink would otherwise have the graph written over its target).
  ::unlink(temporary.c_str());
  const int created = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (created < 0) throw std::invalid_argument("cannot write executable '" + path + "': " + std::strerror(errno));
  ::close(created);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::invalid_argument("cannot write executable '" + path + "': " + std::strerror(errno));
    try {
      writeJson(exe, out);  // at most kMaxExecutableFileBytes, element by element
    } catch (const std::length_error& e) {
      out.close();
      std::remove(temporary.c_str());
      throw std::invalid_argument("cannot write executable '" + path + "': " + e.what());
    }
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::invalid_argument("cannot write executable '" + path + "': write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::invalid_argument("cannot write executable '" + path + "': " + reason);
  }
}

}  // namespace ipusim::ir
