#pragma once
// How a counter value is stored in counters.value (REAL NOT NULL): a finite
// number or an infinity as REAL (SQLite keeps ±Inf), and NaN as the text
// 'NaN' — SQLite cannot hold a NaN REAL (it binds NULL, which the column
// refuses). A diverging training's NaN or inf loss is data, recorded and
// shown as such. Any other text, a blob or NULL in the column is a damaged
// profile. Every reader of counters.value goes through counterValue().
#include <cstdint>
#include <string>

struct sqlite3_stmt;

namespace ipusim::traces {

inline constexpr const char* kNanCounterText = "NaN";

// Binds `value` to parameter `index` of an INSERT into counters.
void bindCounterValue(sqlite3_stmt* statement, int index, double value);

// Column `index` of a row of counters read by `statement`. Throws
// ProfileError("<file>: damaged profile: counters value of track T at ts X
// is text 'abc'; expected a number or 'NaN'").
double counterValue(sqlite3_stmt* statement, int index, const std::string& file, std::int64_t trackId,
                    std::int64_t ts);

}  // namespace ipusim::traces
