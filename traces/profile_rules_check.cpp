// Check 6 of SCHEMA.md "Verifying a profile": every value a rule of
// profile_rules.json bounds, one scan per table. The scan's SQL finds the
// first row breaking any rule of its table; the rules are then applied to
// that row in their order, so the message names the first broken one, as
// the Python reader's (ipusim_profile/rules.py) does.
#include "traces/internal/sqlite_statement.hpp"
#include "traces/profile_rules.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

namespace ipusim::traces {
namespace {

using internal::Statement;

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

// The SQL condition a value of `rule` satisfies.
std::string condition(const ColumnRule& rule) {
  const std::string c = quoted(rule.column);
  std::string sql;
  if (rule.kind == ColumnRule::Kind::CounterValue) {
    sql = "(typeof(" + c + ") IN ('real', 'integer') OR (typeof(" + c + ") = 'text' AND " + c + " = 'NaN'))";
  } else {
    sql = "(typeof(" + c + ") = 'integer'";
    if (rule.min != std::numeric_limits<std::int64_t>::min()) sql += " AND " + c + " >= " + std::to_string(rule.min);
    if (rule.max != std::numeric_limits<std::int64_t>::max()) sql += " AND " + c + " <= " + std::to_string(rule.max);
    if (!rule.minColumn.empty()) sql += " AND " + c + " >= " + quoted(rule.minColumn);
    sql += ")";
  }
  return rule.nullable ? "(" + c + " IS NULL OR " + sql + ")" : sql;
}

}  // namespace

std::string describeSqliteValue(sqlite3_stmt* s, int i) {
  switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL: return "NULL";
    case SQLITE_INTEGER: return std::to_string(sqlite3_column_int64(s, i));
    case SQLITE_FLOAT: {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", sqlite3_column_double(s, i));
      return text;
    }
    case SQLITE_BLOB: return "a blob of " + std::to_string(sqlite3_column_bytes(s, i)) + " bytes";
    default: {
      const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
      std::string text = raw ? raw : "";
      if (text.size() > 40) text = text.substr(0, 40) + "...";
      return "text '" + text + "'";
    }
  }
}

namespace {

std::string describeValue(sqlite3_stmt* s, int i) { return describeSqliteValue(s, i); }

bool hasTable(sqlite3* db, const std::string& table, const std::string& path) {
  Statement probe(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", path);
  probe.bindText(1, table);
  return probe.step() && probe.columnInt(0) > 0;
}

// Whether the row's value of `rule` (column `i`; the min column at `minAt`) satisfies it.
bool satisfies(sqlite3_stmt* s, const ColumnRule& rule, int i, int minAt) {
  const int type = sqlite3_column_type(s, i);
  if (type == SQLITE_NULL) return rule.nullable;
  if (rule.kind == ColumnRule::Kind::CounterValue)
    return type == SQLITE_FLOAT || type == SQLITE_INTEGER ||
           (type == SQLITE_TEXT && std::strcmp(reinterpret_cast<const char*>(sqlite3_column_text(s, i)), "NaN") == 0);
  if (type != SQLITE_INTEGER) return false;
  const std::int64_t v = sqlite3_column_int64(s, i);
  if (v < rule.min || v > rule.max) return false;
  return minAt < 0 || (sqlite3_column_type(s, minAt) == SQLITE_INTEGER && v >= sqlite3_column_int64(s, minAt));
}

// Every column the scan names exists: SQLite reads a double-quoted name that
// names no column as a string literal ("bytes"), which the rules would then
// report as the value "text 'bytes'".
void requireColumns(sqlite3* db, const std::string& path, const std::string& table,
                    const std::vector<std::string>& columns) {
  Statement info(db, "SELECT name FROM pragma_table_info(?1)", path);
  info.bindText(1, table);
  std::vector<std::string> present;
  while (info.step()) present.push_back(info.columnText(0));
  for (const std::string& column : columns)
    if (column != "rowid" && std::find(present.begin(), present.end(), column) == present.end())
      throw ProfileError(path + ": damaged profile: table " + table + " has no column " + column);
}

void checkTable(sqlite3* db, const std::string& path, const std::string& table,
                const std::vector<const ColumnRule*>& rules) {
  const std::vector<std::string>& keys = rowKeyColumns(table);
  std::vector<std::string> named = keys;
  for (const ColumnRule* rule : rules) {
    named.push_back(rule->column);
    if (!rule->minColumn.empty()) named.push_back(rule->minColumn);
  }
  requireColumns(db, path, table, named);
  std::string columns, where;
  for (const std::string& key : keys) columns += (columns.empty() ? "" : ", ") + quoted(key);
  std::map<std::string, int> at;
  for (const ColumnRule* rule : rules) {
    at[rule->column] = int(keys.size() + at.size());
    columns += ", " + quoted(rule->column);
    where += (where.empty() ? "" : " AND ") + condition(*rule);
  }
  for (const ColumnRule* rule : rules)  // a min column without a rule of its own
    if (!rule->minColumn.empty() && !at.count(rule->minColumn)) {
      at[rule->minColumn] = int(keys.size() + at.size());
      columns += ", " + quoted(rule->minColumn);
    }
  Statement s(db, "SELECT " + columns + " FROM " + quoted(table) + " WHERE NOT (" + where + ") LIMIT 1", path);
  if (!s.step()) return;
  std::string rowKey;
  for (std::size_t k = 0; k < keys.size(); ++k)
    rowKey += (k ? ", " : "") + keys[k] + " = " + describeValue(s.get(), int(k));
  for (const ColumnRule* rule : rules) {
    const int i = at.at(rule->column);
    const int minAt = rule->minColumn.empty() ? -1 : at.at(rule->minColumn);
    if (satisfies(s.get(), *rule, i, minAt)) continue;
    const std::int64_t minValue = minAt < 0 ? 0 : sqlite3_column_int64(s.get(), minAt);
    throw ProfileError(path + ": damaged profile: " + table + "." + rule->column + " is " + describeValue(s.get(), i) +
                       " in the row with " + rowKey + "; expected " + describeExpectation(*rule, minValue));
  }
  throw ProfileError(path + ": damaged profile: table " + table + " has a row breaking a rule of profile_rules.json: " +
                     rowKey);
}

}  // namespace

void checkColumnRules(sqlite3* db, const std::string& path) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ColumnRule*>> byTable;
  for (const ColumnRule& rule : columnRules()) {
    if (!byTable.count(rule.table)) order.push_back(rule.table);
    byTable[rule.table].push_back(&rule);
  }
  for (const std::string& table : order)
    if (hasTable(db, table, path)) checkTable(db, path, table, byTable[table]);
}

}  // namespace ipusim::traces
