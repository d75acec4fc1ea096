#pragma once
// Internal to traces/: a thin RAII layer over the SQLite C API shared by the
// writer and the reader. Every failure becomes a ProfileError that names the
// profile file, what was being done and SQLite's own explanation.
#include "traces/profile_error.hpp"

#include <cstdint>
#include <string>
#include <utility>

struct sqlite3;
struct sqlite3_stmt;

namespace ipusim::traces::internal {

// Throws ProfileError("<file>: <action>: <sqlite message>").
[[noreturn]] void throwSqliteError(sqlite3* db, int rc, const std::string& file,
                                   const std::string& action);

// Runs one or more SQL statements without results; throws
// ProfileError("<file>: <action>: <cause>") on failure.
void execSql(sqlite3* db, const std::string& sql, const std::string& file,
             const std::string& action);

// A prepared statement. Optional integers follow the row structs' convention:
// -1 binds as SQL NULL and NULL reads back as -1.
class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, const std::string& sql, std::string file);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // SQLite copies the text: safe for temporaries.
  void bindText(int index, const std::string& value);
  // No copy (SQLITE_STATIC), for the hot insert paths: the string must outlive
  // the next step()/execute(), as the writer's row arguments do.
  void bindTextNoCopy(int index, const std::string& value);
  void bindTextNoCopy(int index, std::string&& value) = delete;
  void bindInt(int index, std::int64_t value);
  void bindOptionalInt(int index, std::int64_t value);
  void bindDouble(int index, double value);
  // SQLite copies the bytes.
  void bindBlob(int index, const std::string& bytes);

  // Advances to the next row; false when done. Throws on error.
  bool step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void execute(const char* action);
  void reset();

  std::int64_t columnInt(int index) const;
  std::int64_t columnOptionalInt(int index) const;
  double columnDouble(int index) const;
  std::string columnText(int index) const;
  bool columnIsNull(int index) const;
  // The bytes of a BLOB column, valid until the next step()/reset().
  std::pair<const unsigned char*, std::size_t> columnBlob(int index) const;

  explicit operator bool() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }  // for codecs of one column (traces/counter_value.hpp)

 private:
  void finalize() noexcept;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string file_;
};

}  // namespace ipusim::traces::internal
