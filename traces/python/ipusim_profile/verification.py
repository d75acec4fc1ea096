"""The checks of traces/SCHEMA.md "Verifying a profile", in its order, as traces/profile_verification.cpp
and traces/profile_reader.cpp make them: a profile the C++ readers refuse is refused here, with the same
words (tests/data/damaged_profiles/cases.json is the corpus both run)."""

import json
import os
import sqlite3
import stat
import struct
import urllib.parse

from .errors import ProfileError
from .rules import META_RULES, TILE_SLICES_VIEW, check_column_rules, check_meta_value, describe_value

# The newest schema this reader understands (traces/profile_rows.hpp kSchemaVersion).
SUPPORTED_SCHEMA_VERSION = 4

# The tables whose rows the writer counts into meta.row_counts (profile_verification.cpp kCountedTables), and
# those a profile written before them lacks.
COUNTED_TABLES = ("meta", "runs", "tracks", "slices", "programs", "phases", "tile_phase_cycles", "tile_memory",
                  "tile_memory_peak", "counters", "program_work", "tensors", "program_order", "tensor_lifetimes",
                  "slice_track_stats", "long_slices", "slice_strings", "slice_chunks", "slice_summary",
                  "counter_summary")
OPTIONAL_TABLES = ("slice_chunks", "slice_strings", "slice_summary", "counter_summary", "tile_memory_peak")

# counter_summary's blobs: column, struct format of one little-endian word (SCHEMA.md).
COUNTER_SUMMARY_BLOBS = (("bucket_values", "I"), ("first_ts", "q"), ("last_ts", "q"), ("value_min", "d"),
                         ("value_max", "d"), ("value_first", "d"), ("value_last", "d"))


def _rank_profiles_hint(directory):
    """An mpirun run's report directory holds a profile per rank (profile.rankK.pop) and no profile.pop:
    the hint names them ("" when there is none), as the C++ readers do."""
    try:
        names = os.listdir(directory)
    except OSError:
        return ""
    ranks = sorted(int(n[len("profile.rank"):-len(".pop")]) for n in names
                   if n.startswith("profile.rank") and n.endswith(".pop") and
                   0 < len(n) - len("profile.rank.pop") <= 9 and n[len("profile.rank"):-len(".pop")].isdigit() and
                   n[len("profile.rank"):-len(".pop")].isascii())
    if not ranks:
        return ""
    first, last = f"profile.rank{ranks[0]}.pop", f"profile.rank{ranks[-1]}.pop"
    held = "1 rank's profile" if len(ranks) == 1 else f"{len(ranks)} ranks' profiles"
    span = first if len(ranks) == 1 else f"{first} to {last}"
    return (f"; it holds {held} of an mpirun run ({span}): name one (its rank's IPUs), e.g. "
            f"{os.path.join(directory, first)}, or combine them with `ipusim combine {directory} -o FILE`")


def profile_file(path):
    """Check 0: the profile file of `path` (a file, or a report directory holding profile.pop), a regular
    file: a FIFO (whose open blocks forever), a device or a directory is refused by name before any open."""
    path = os.fspath(path)
    file = path
    if os.path.isdir(path):
        file = os.path.join(path, "profile.pop")
        if not os.path.lexists(file):
            raise ProfileError(f"{path}: report directory has no profile.pop{_rank_profiles_hint(path)}")
    elif not os.path.lexists(path):
        raise ProfileError(f"{path}: no such profile file")
    try:
        mode = os.stat(file).st_mode
    except OSError as e:
        raise ProfileError(f"{file}: cannot inspect it: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise ProfileError(f"{file}: is a directory, expected a profile file")
    if stat.S_ISFIFO(mode):
        raise ProfileError(f"{file}: is a FIFO, expected a regular profile file")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise ProfileError(f"{file}: is a device, expected a regular profile file")
    if not stat.S_ISREG(mode):
        raise ProfileError(f"{file}: is not a regular file, expected a profile file")
    return file


def connect(file):
    """Opens `file` read-only and immutable: no lock, journal, -wal or -shm file (SCHEMA.md check 0)."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(file), safe="/") + "?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as e:
        raise ProfileError(f"{file}: cannot open: {e}") from None
    db.row_factory = sqlite3.Row
    db.text_factory = lambda raw: raw.decode("utf-8", "replace")
    return db


def _is_utf8(raw):
    try:
        bytes(raw or b"").decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _schema(db, path):
    """Tables and meta, refusing what is no ipusim profile (ProfileReader::checkIsCompleteProfile)."""
    try:
        objects = [tuple(r) for r in db.execute("SELECT type, name FROM sqlite_master")]
    except sqlite3.DatabaseError as e:
        size = os.path.getsize(path)
        if size == 0:
            raise ProfileError(f"{path}: empty file, not an ipusim profile") from None
        raise ProfileError(f"{path}: not an SQLite database ({e})") from None
    tables = {name for kind, name in objects if kind == "table"}
    if "meta" not in tables:
        if os.path.getsize(path) == 0:
            raise ProfileError(f"{path}: empty file, not an ipusim profile")
        raise ProfileError(f"{path}: not an ipusim profile (the database has no meta table)")
    # Values as the C++ reader reads them (sqlite3_column_text: a number as SQLite writes it, a blob's bytes,
    # NULL as ''), the first row of a key (its lookup by key finds the first); whether each is valid UTF-8.
    meta, utf8 = {}, {}
    for key, text, raw in db.execute("SELECT key, CAST(value AS TEXT), CAST(value AS BLOB) FROM meta"):
        key = str(key)
        if key not in meta:
            meta[key] = "" if text is None else text
            utf8[key] = _is_utf8(raw)
    if "schema_version" not in meta:
        raise ProfileError(f"{path}: not an ipusim profile (meta has no schema_version)")
    version = meta["schema_version"]
    if not (version.isascii() and version.isdigit() and len(version) < 10 and int(version) >= 1):
        raise ProfileError(f"{path}: meta schema_version is '{version}'; expected a positive integer")
    if int(version) > SUPPORTED_SCHEMA_VERSION:
        raise ProfileError(f"{path}: schema version {version} is newer than this reader's "
                           f"{SUPPORTED_SCHEMA_VERSION}; use a newer ipusim_profile")
    for kind, name in objects:
        if kind == "trigger" or (kind == "view" and name != "tile_slices"):
            raise ProfileError(f"{path}: not an ipusim profile: it holds the {kind} '{name}' (a profile has "
                               "tables, indexes and the view tile_slices only)")
    # That view, when present, exactly as the writer makes it: another definition (a recursive query) would hang
    # or fool tile_phases(), which reads it.
    view = db.execute("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'tile_slices'").fetchone()
    if view is not None and view[0] != TILE_SLICES_VIEW:
        raise ProfileError(f"{path}: not an ipusim profile: its view tile_slices is not defined as the schema "
                           "defines it (profile_rules.json tile_slices_view)")
    if meta.get("complete") != "1":
        raise ProfileError(f"{path}: incomplete profile (meta has no complete=1): the run that wrote it did "
                           "not finish")
    for key in META_RULES:  # the meta keys the analyses read, against profile_rules.json (check 2)
        if key in meta:
            check_meta_value(path, key, meta[key], utf8[key])
    return tables, meta


def _check_length(db, path):
    """Check 1a: the file is as long as its header says (SQLite reads a missing end as zeros)."""
    expected = db.execute("PRAGMA page_size").fetchone()[0] * db.execute("PRAGMA page_count").fetchone()[0]
    actual = os.path.getsize(path)
    if actual != expected:
        raise ProfileError(f"{path}: corrupt or truncated profile (the file has {actual} bytes, its database "
                           f"header says {expected})")


def _quick_check(db, path):
    try:
        verdict = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise ProfileError(f"{path}: corrupt or truncated profile (SQLite quick_check failed: {e})") from None
    if verdict != "ok":
        raise ProfileError(f"{path}: corrupt or truncated profile (SQLite quick_check: {verdict})")


def _check_row_counts(db, path, tables, meta):
    """Check 3: meta.row_counts, when the writer recorded it (schema 4 writers always do): every table has
    that many rows."""
    text = meta.get("row_counts")
    if text is None:
        if int(meta["schema_version"]) >= SUPPORTED_SCHEMA_VERSION:
            raise ProfileError(f"{path}: damaged profile: meta has no row_counts (the row counts its writer "
                               "recorded)")
        return  # written before the writers recorded row counts
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    if not isinstance(expected, dict):
        raise ProfileError(f"{path}: damaged profile: meta row_counts is not a JSON object")
    for table in COUNTED_TABLES:
        if table not in tables:
            if table in OPTIONAL_TABLES or (table not in expected and int(meta["schema_version"]) < 4):
                continue  # a profile written before the table existed
            raise ProfileError(f"{path}: damaged profile: table {table} is missing")
        rows = expected.get(table)
        if not isinstance(rows, int) or isinstance(rows, bool):
            raise ProfileError(f"{path}: damaged profile: meta row_counts has no count for table {table}")
        actual = db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        if actual != rows:
            raise ProfileError(f"{path}: damaged profile: table {table} has {actual} rows, its writer recorded "
                               f"{rows}")


def decode_counter_summary(path, row):
    """The arrays of a counter_summary row, refusing one that does not hold what it says (check 4)."""
    what = f"{path}: damaged profile: counter_summary row of track {row['track_id']}"
    count, bucket_cycles, origin = row["bucket_count"], row["bucket_cycles"], row["origin_ts"]
    numbers = (count, bucket_cycles, origin, row["value_count"])
    if not all(isinstance(n, int) for n in numbers) or not (1 <= count <= 1 << 24) or bucket_cycles < 1 or \
            origin < 0 or row["value_count"] < 0:
        raise ProfileError(f"{what}: value_count {row['value_count']}, origin_ts {origin}, bucket_cycles "
                           f"{bucket_cycles} or bucket_count {count} out of range")
    arrays = {}
    for column, word in COUNTER_SUMMARY_BLOBS:
        blob = row[column]
        blob = bytes(blob) if isinstance(blob, (bytes, memoryview)) else b""
        size = struct.calcsize(word)
        if len(blob) != count * size:
            raise ProfileError(f"{what}: {column} has {len(blob)} bytes, expected {size} per bucket for "
                               f"{count} buckets")
        arrays[column] = struct.unpack(f"<{count}{word}", blob)
    for b, n in enumerate(arrays["bucket_values"]):
        start = origin + b * bucket_cycles
        first, last = arrays["first_ts"][b], arrays["last_ts"][b]
        if n and not (start <= first <= last < start + bucket_cycles):
            raise ProfileError(f"{what}: bucket {b} holds ts {first}..{last}, outside its cycles "
                               f"[{start}, {start + bucket_cycles})")
    if sum(arrays["bucket_values"]) != row["value_count"]:
        raise ProfileError(f"{what}: its buckets hold {sum(arrays['bucket_values'])} values, value_count says "
                           f"{row['value_count']}")
    return arrays


def _check_counter_summaries(db, path, tables):
    """Check 4: every counter_summary row is well formed and summarises as many values as counters holds."""
    if "counter_summary" not in tables:
        return
    for row in db.execute("SELECT * FROM counter_summary"):
        decode_counter_summary(path, row)
        actual = db.execute("SELECT count(*) FROM counters WHERE track_id = ?", (row["track_id"],)).fetchone()[0]
        if actual != row["value_count"]:
            raise ProfileError(f"{path}: damaged profile: counter_summary row of track {row['track_id']} "
                               f"summarises {row['value_count']} values, counters holds {actual}")


def _check_track_references(db, path, tables):
    """Check 5: every row of slices and counters has a track_id naming a track, one index seek per track."""
    for table in ("slices", "counters"):
        if table not in tables:
            continue  # a profile of an older schema version, written without it
        track = db.execute(f"SELECT min(track_id) FROM {table}").fetchone()[0]
        while track is not None:
            if not isinstance(track, int):  # as the C++ reader words it (a REAL would be read as another id)
                raise ProfileError(f"{path}: damaged profile: {table}.track_id is {describe_value(track)}; expected "
                                   "an integer (a track id)")
            if db.execute("SELECT count(*) FROM tracks WHERE id = ?", (track,)).fetchone()[0] == 0:
                raise ProfileError(f"{path}: damaged profile: table {table} has rows of track_id {track}, which "
                                   "names no track")
            track = db.execute(f"SELECT min(track_id) FROM {table} WHERE track_id > ?", (track,)).fetchone()[0]


def _check_entry_point_names(db, path, tables):
    """Check 6 (its end): every run of an entry point carries its name, and no two entry points share one."""
    if "runs" not in tables:
        return  # a hand-made profile without it (as check 5 skips a missing table)
    split = db.execute("SELECT entry_point, min(name), max(name) FROM runs GROUP BY entry_point "
                       "HAVING count(DISTINCT name) > 1 ORDER BY entry_point LIMIT 1").fetchone()
    if split is not None:
        raise ProfileError(f"{path}: damaged profile: the runs of entry_point {split[0]} are named "
                           f"{describe_value(split[1])} and {describe_value(split[2])}; expected one name per entry point")
    shared = db.execute("SELECT name, min(entry_point), max(entry_point) FROM runs GROUP BY name "
                        "HAVING count(DISTINCT entry_point) > 1 ORDER BY min(entry_point) LIMIT 1").fetchone()
    if shared is not None:
        raise ProfileError(f"{path}: damaged profile: runs of entry points {shared[1]} and {shared[2]} are both named "
                           f"{describe_value(shared[0])}; expected distinct names")


def _check_program_tree(db, path, tables):
    """Check 7: the programs' parent_id links form a tree: each names a program and none leads back to where it
    started. Programs are walked in id order, as traces/profile_verification.cpp walks them (the same row named)."""
    if "programs" not in tables:
        return  # a profile of an older schema version without it
    parent_of, ids = {}, []
    for program_id, parent in db.execute("SELECT id, parent_id FROM programs ORDER BY id"):
        ids.append(program_id)
        parent_of[program_id] = parent

    def refuse(program_id, expected):
        raise ProfileError(f"{path}: damaged profile: programs.parent_id is {parent_of[program_id]} in the row with "
                           f"id = {program_id}; expected {expected}")

    in_tree = set()
    for start in ids:
        if start in in_tree:
            continue
        walk, on_walk, at = [], set(), start
        while True:  # up from `start` to an entry point or a program known to be in the tree
            walk.append(at)
            on_walk.add(at)
            parent = parent_of[at]
            if parent is None or parent in in_tree:
                break
            if parent not in parent_of:
                refuse(at, f"NULL or the id of a program (no program has id {parent})")
            if parent in on_walk:  # the links lead from `parent` back to it
                loop = walk[walk.index(parent):]
                cycle = "".join(f"{p} -> " for p in loop[:8]) + ("... -> " if len(loop) > 8 else "")
                refuse(at, f"NULL or the id of a program that does not descend from it (the parent_id links "
                           f"{cycle}{parent} form a cycle)")
            at = parent
        in_tree.update(walk)


def _check_slice_index(db, path, tables):
    """Check 8: slice_track_stats and long_slices, which windowed queries rely on, agree with the slices
    (traces/profile_verification.cpp checkSliceIndex, the same queries)."""
    if "slice_track_stats" not in tables or "long_slices" not in tables:
        return  # a profile of an older schema version
    row = db.execute("SELECT st.track_id, st.slice_count, (SELECT count(*) FROM slices AS s WHERE s.track_id = "
                     "st.track_id) AS actual FROM slice_track_stats AS st WHERE st.slice_count != actual "
                     "ORDER BY st.track_id LIMIT 1").fetchone()
    if row:
        raise ProfileError(f"{path}: damaged profile: slice_track_stats.slice_count is {row[1]} in the row with "
                           f"track_id = {row[0]}; slices holds {row[2]} of that track")
    # The counts being right, they add up to the slices of every track with a stats row: fewer than the table holds
    # means a track without one (found then by the slower query, which names it).
    missing = db.execute("SELECT (SELECT count(*) FROM slices) - (SELECT total(slice_count) FROM slice_track_stats)"
                         ).fetchone()[0]
    if missing:
        row = db.execute("SELECT s.track_id FROM slices AS s WHERE NOT EXISTS (SELECT 1 FROM slice_track_stats AS st "
                         "WHERE st.track_id = s.track_id) ORDER BY s.id LIMIT 1").fetchone()
        if row:
            raise ProfileError(f"{path}: damaged profile: table slices has rows of track_id {row[0]}, which has no "
                               "row in slice_track_stats")
    row = db.execute("SELECT s.id, s.track_id, s.dur, st.look_back FROM slices AS s JOIN slice_track_stats AS st "
                     "ON st.track_id = s.track_id WHERE s.dur > st.look_back AND NOT EXISTS (SELECT 1 FROM "
                     "long_slices AS l WHERE l.track_id = s.track_id AND l.slice_id = s.id) "
                     "ORDER BY s.id LIMIT 1").fetchone()
    if row:
        raise ProfileError(f"{path}: damaged profile: slice_track_stats.look_back is {row[3]} in the row with "
                           f"track_id = {row[1]}, but slice {row[0]} of that track lasts {row[2]} cycles and is not "
                           "in long_slices (a windowed query would miss it)")


def verify(db, path):
    """Checks 0 (what is not a table) to 8 on an open profile; returns (tables, meta)."""
    tables, meta = _schema(db, path)
    _check_length(db, path)
    _quick_check(db, path)
    _check_row_counts(db, path, tables, meta)
    _check_counter_summaries(db, path, tables)
    _check_track_references(db, path, tables)
    check_column_rules(db, path, tables)
    _check_entry_point_names(db, path, tables)
    _check_program_tree(db, path, tables)
    _check_slice_index(db, path, tables)
    return tables, meta
