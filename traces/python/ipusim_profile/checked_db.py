"""The connection a Profile reads through: an SQLite error while reading (a damaged page that quick_check did not
reach, a column a damaged table lacks) is a ProfileError naming the file, as the C++ reader reports it, never a
Python traceback."""

import sqlite3

from .errors import ProfileError


def refusal(path, error):
    """The ProfileError of an SQLite error met while reading `path`."""
    return ProfileError(f"{path}: cannot read the profile: {error}")


class CheckedCursor:
    def __init__(self, cursor, path):
        self._cursor, self._path = cursor, path

    def __iter__(self):
        while True:
            try:
                row = next(self._cursor)
            except StopIteration:
                return
            except sqlite3.Error as e:
                raise refusal(self._path, e) from None
            yield row

    def fetchone(self):
        try:
            return self._cursor.fetchone()
        except sqlite3.Error as e:
            raise refusal(self._path, e) from None

    def fetchall(self):
        return list(self)


class CheckedConnection:
    def __init__(self, db, path):
        self._db, self._path = db, path

    def execute(self, sql, parameters=()):
        try:
            return CheckedCursor(self._db.execute(sql, parameters), self._path)
        except sqlite3.Error as e:
            raise refusal(self._path, e) from None

    def close(self):
        self._db.close()
