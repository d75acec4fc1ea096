#pragma once
// The bounds every reader of a profile applies to the values it reads (check
// 6 of SCHEMA.md "Verifying a profile") and to the meta keys the analyses
// read. ONE list, a data file shipped with the Python reader
// (python/ipusim_profile/profile_rules.json) and compiled into this library,
// so the C++ readers and the Python reader refuse the same values with the
// same words: "<file>: damaged profile: slices.dur is -5 in row 7; expected
// an integer from 0 to 4611686018427387904".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ipusim::traces {

struct ColumnRule {
  enum class Kind { Integer, CounterValue };
  std::string table;
  std::string column;
  Kind kind = Kind::Integer;
  bool nullable = false;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string minColumn;  // the row's value of this column is a lower bound too; empty: none
};

struct MetaRule {
  // Integer, Number: the text is a decimal integer / number from min to max.
  // JsonObject: the text is a JSON object whose every value is a string (the
  // one value type the list uses so far), one of `oneOf` when it is not empty.
  // Text: the text itself is one of `oneOf`.
  enum class Kind { Integer, Number, JsonObject, Text };
  std::string key;
  Kind kind = Kind::Integer;
  double min = 0;
  double max = 0;
  std::vector<std::string> oneOf;
  std::string note;  // said after the expectation, e.g. "1 MHz to 1 THz"
};

const std::vector<ColumnRule>& columnRules();
// The SQL of the one view a profile holds (tile_slices), exactly as the writer
// creates it and sqlite_master.sql keeps it; readers refuse any other.
const std::string& tileSlicesViewSql();
const std::vector<MetaRule>& metaRules();
// The rule of table.column / of a meta key; throws std::logic_error when the
// list has none (a reader asked for a rule that is not written down).
const ColumnRule& columnRule(const std::string& table, const std::string& column);
const MetaRule& metaRule(const std::string& key);

// What the rule expects, in words: "an integer from 0 to 4611686018427387904",
// "NULL or an integer from 0 to 65535", "an integer from start_cycle (12) to
// ...", "a number or 'NaN'", "a JSON object whose values are \"HostToDevice\"
// or \"DeviceToHost\"". `minColumnValue`: the row's value of minColumn.
std::string describeExpectation(const ColumnRule& rule, std::int64_t minColumnValue = 0);
std::string describeExpectation(const MetaRule& rule);

// The columns that name a row of `table` in a message (row_keys), e.g.
// {"phase_id", "ipu", "tile"}; {"rowid"} for a table the list does not name.
const std::vector<std::string>& rowKeyColumns(const std::string& table);

// Throws ProfileError("<file>: damaged profile: <table>.<column> is <value>
// in the row with <rowKey>; expected ...") unless `value` satisfies the
// integer rule (`minColumnValue`: the row's value of rule.minColumn).
// `rowKey` is like "id = 7". -1 is NULL for a nullable column (the row
// structs' convention).
void requireValue(const std::string& file, const ColumnRule& rule, const std::string& rowKey, std::int64_t value,
                  std::int64_t minColumnValue = 0);

// A value of column `i` of a row as messages show it (the Python reader's
// rules.describe_value): an integer, a REAL as %.17g, text 'abc' (40
// characters at most), a blob of N bytes, NULL.
std::string describeSqliteValue(sqlite3_stmt* statement, int i);

// Check 6: every value of every rule's column in an open profile, one scan
// per table (a table the profile lacks is skipped). Throws ProfileError as
// above for the first row that breaks a rule.
void checkColumnRules(sqlite3* db, const std::string& path);

// The meta value `text` of `rule.key` (an Integer or Number rule) parsed and
// checked: the number, or a ProfileError("<file>: meta '<key>' is '<text>',
// expected an integer from 0 to 65536"). Throws std::logic_error for a
// JsonObject rule.
double checkMetaValue(const std::string& file, const MetaRule& rule, const std::string& text);

// The meta value `text` of `rule.key` checked against a rule of any kind (check
// 2): for a JsonObject rule, ProfileError("<file>: meta '<key>' is '<text>',
// expected a JSON object whose values are ...") when it is no JSON object, or
// ("<file>: meta '<key>' gives '<name>' the value 5, expected ...") naming the
// first member whose value breaks the rule.
void checkMetaText(const std::string& file, const MetaRule& rule, const std::string& text);

}  // namespace ipusim::traces
