#include "traces/internal/sqlite_statement.hpp"

#include <sqlite3.h>

#include <cstring>
#include <utility>

namespace ipusim::traces::internal {

void throwSqliteError(sqlite3* db, int rc, const std::string& file, const std::string& action) {
  // sqlite3_errmsg describes the most recent failure on the connection; when
  // there is no connection (open failed before one existed) use the code.
  std::string cause = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (cause.empty() || cause == "not an error") cause = sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (db && (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN)) {
    // The operating system's reason: "File too large", "No space left on device".
    if (const int systemError = sqlite3_system_errno(db); systemError != 0)
      cause += std::string(" (") + std::strerror(systemError) + ")";
  }
  if ((rc & 0xff) == SQLITE_CORRUPT) cause += " (the profile is corrupt or truncated)";
  if ((rc & 0xff) == SQLITE_NOTADB) cause += " (not an SQLite database)";
  throw ProfileError(file + ": " + action + ": " + cause);
}

void execSql(sqlite3* db, const std::string& sql, const std::string& file,
             const std::string& action) {
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) throwSqliteError(db, rc, file, action);
}

Statement::Statement(sqlite3* db, const std::string& sql, std::string file)
    : db_(db), file_(std::move(file)) {
  const int rc = sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) throwSqliteError(db, rc, file_, "cannot prepare \"" + sql + "\"");
}

Statement::~Statement() { finalize(); }

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), file_(std::move(other.file_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    finalize();
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    file_ = std::move(other.file_);
  }
  return *this;
}

void Statement::finalize() noexcept {
  if (stmt_) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

// Bind failures can only come from a wrong index or a closed statement: a
// programming error, but still reported as a ProfileError rather than ignored.
void Statement::bindText(int index, const std::string& value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind a text value");
}

void Statement::bindTextNoCopy(int index, const std::string& value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_STATIC);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind a text value");
}

void Statement::bindInt(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind an integer");
}

void Statement::bindOptionalInt(int index, std::int64_t value) {
  const int rc = value == -1 ? sqlite3_bind_null(stmt_, index)
                             : sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind an integer");
}

void Statement::bindDouble(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind a real value");
}

void Statement::bindBlob(int index, const std::string& bytes) {
  const int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throwSqliteError(db_, rc, file_, "cannot bind a blob");
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  throwSqliteError(db_, rc, file_, "cannot read the profile");
}

void Statement::execute(const char* action) {
  const int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    sqlite3_reset(stmt_);  // keeps the connection's error message
    throwSqliteError(db_, rc, file_, action);
  }
  sqlite3_reset(stmt_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::columnInt(int index) const { return sqlite3_column_int64(stmt_, index); }

std::int64_t Statement::columnOptionalInt(int index) const {
  return columnIsNull(index) ? -1 : sqlite3_column_int64(stmt_, index);
}

double Statement::columnDouble(int index) const { return sqlite3_column_double(stmt_, index); }

std::pair<const unsigned char*, std::size_t> Statement::columnBlob(int index) const {
  const auto* data = static_cast<const unsigned char*>(sqlite3_column_blob(stmt_, index));
  const int size = sqlite3_column_bytes(stmt_, index);
  return {data, data ? static_cast<std::size_t>(size) : 0};
}

std::string Statement::columnText(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  const int size = sqlite3_column_bytes(stmt_, index);
  return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size))
              : std::string();
}

bool Statement::columnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

}  // namespace ipusim::traces::internal
