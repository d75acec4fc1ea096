#include "traces/counter_value.hpp"

#include "traces/profile_error.hpp"

#include <sqlite3.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ipusim::traces {

void bindCounterValue(sqlite3_stmt* statement, int index, double value) {
  if (std::isnan(value))
    sqlite3_bind_text(statement, index, kNanCounterText, -1, SQLITE_STATIC);
  else
    sqlite3_bind_double(statement, index, value);
}

double counterValue(sqlite3_stmt* statement, int index, const std::string& file, std::int64_t trackId,
                    std::int64_t ts) {
  const int type = sqlite3_column_type(statement, index);
  if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) return sqlite3_column_double(statement, index);
  std::string found = type == SQLITE_NULL ? "NULL" : type == SQLITE_BLOB ? "a blob" : "text";
  if (type == SQLITE_TEXT) {
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, index));
    if (text && std::strcmp(text, kNanCounterText) == 0) return std::numeric_limits<double>::quiet_NaN();
    std::string shown = text ? text : "";
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    found += " '" + shown + "'";
  }
  throw ProfileError(file + ": damaged profile: counters value of track " + std::to_string(trackId) + " at ts " +
                     std::to_string(ts) + " is " + found + "; expected a number or '" + kNanCounterText + "'");
}

}  // namespace ipusim::traces
