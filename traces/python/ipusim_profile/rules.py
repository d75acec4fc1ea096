"""The bounds every reader applies to a profile's values: profile_rules.json, the one list the C++
readers compile in (traces/profile_rules.hpp). check_column_rules is check 6 of SCHEMA.md "Verifying a
profile"; check_meta_value checks a meta key the analyses read. Messages are the C++ readers' words."""

import json
import math
import os
import re

from .errors import ProfileError

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile_rules.json"), encoding="utf-8") as _f:
    _RULES = json.load(_f)

COLUMN_RULES = _RULES["columns"]
TILE_SLICES_VIEW = _RULES["tile_slices_view"]
META_RULES = {rule["key"]: rule for rule in _RULES["meta"]}
for _rule in META_RULES.values():
    if _rule["kind"] == "json_object" and _rule["value_type"] != "string":
        raise ValueError(f"profile_rules.json: meta {_rule['key']}: value_type {_rule['value_type']!r}, this reader "
                         "knows 'string' only")
ROW_KEYS = _RULES["row_keys"]
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INTEGER = re.compile(r"[0-9]+\Z")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def _quoted(name):
    return '"' + name + '"'


def _condition(rule):
    c = _quoted(rule["column"])
    if rule.get("kind") == "counter_value":
        sql = f"(typeof({c}) IN ('real', 'integer') OR (typeof({c}) = 'text' AND {c} = 'NaN'))"
    else:
        sql = f"(typeof({c}) = 'integer'"
        if rule["min"] != _INT64_MIN:
            sql += f" AND {c} >= {rule['min']}"
        if rule["max"] != _INT64_MAX:
            sql += f" AND {c} <= {rule['max']}"
        if rule.get("min_column"):
            sql += f" AND {c} >= {_quoted(rule['min_column'])}"
        sql += ")"
    return f"({c} IS NULL OR {sql})" if rule.get("nullable") else sql


def describe_value(value):
    """A value as a message shows it (traces/profile_rules_check.cpp describeValue)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool) or isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return "%.17g" % value
    if isinstance(value, (bytes, memoryview)):
        return f"a blob of {len(bytes(value))} bytes"
    text = str(value)
    return "text '" + (text[:40] + "..." if len(text) > 40 else text) + "'"


def describe_expectation(rule, min_column_value=0):
    if rule.get("kind") == "counter_value":
        return "a number or 'NaN'"
    text = "NULL or an integer" if rule.get("nullable") else "an integer"
    if rule.get("min_column"):
        text += f" from {rule['min_column']} ({min_column_value}) to {rule['max']}"
    elif rule["min"] != _INT64_MIN or rule["max"] != _INT64_MAX:
        text += f" from {rule['min']} to {rule['max']}"
    return text


def _satisfies(rule, value, minimum):
    if value is None:
        return bool(rule.get("nullable"))
    if rule.get("kind") == "counter_value":
        return isinstance(value, (int, float)) or value == "NaN"
    if not isinstance(value, int):
        return False
    if not rule["min"] <= value <= rule["max"]:
        return False
    return not rule.get("min_column") or (isinstance(minimum, int) and value >= minimum)


def _require_columns(db, path, table, columns):
    """Every column the scan names exists: SQLite reads a double-quoted name that names no column as a string
    literal, which the rules would report as a text value (traces/profile_rules_check.cpp requireColumns)."""
    present = {r[0] for r in db.execute("SELECT name FROM pragma_table_info(?)", (table,))}
    for column in columns:
        if column != "rowid" and column not in present:
            raise ProfileError(f"{path}: damaged profile: table {table} has no column {column}")


def _check_table(db, path, table, rules):
    keys = ROW_KEYS.get(table, ["rowid"])
    named = list(keys)
    for r in rules:
        named.append(r["column"])
        if r.get("min_column"):
            named.append(r["min_column"])
    _require_columns(db, path, table, named)
    columns = list(keys) + [r["column"] for r in rules]
    for r in rules:
        if r.get("min_column") and r["min_column"] not in columns[len(keys):]:
            columns.append(r["min_column"])
    at = {}
    for i, name in enumerate(columns[len(keys):]):
        at.setdefault(name, len(keys) + i)
    where = " AND ".join(_condition(r) for r in rules)
    row = db.execute(f"SELECT {', '.join(_quoted(c) for c in columns)} FROM {_quoted(table)} "
                     f"WHERE NOT ({where}) LIMIT 1").fetchone()
    if row is None:
        return
    row = tuple(row)
    row_key = ", ".join(f"{k} = {describe_value(row[i])}" for i, k in enumerate(keys))
    for r in rules:
        value = row[at[r["column"]]]
        minimum = row[at[r["min_column"]]] if r.get("min_column") else None
        if not _satisfies(r, value, minimum):
            raise ProfileError(f"{path}: damaged profile: {table}.{r['column']} is {describe_value(value)} in the "
                               f"row with {row_key}; expected {describe_expectation(r, minimum)}")
    raise ProfileError(f"{path}: damaged profile: table {table} has a row breaking a rule of profile_rules.json: "
                       f"{row_key}")


def check_column_rules(db, path, tables):
    """Check 6: every value of every rule's column, one scan per table; tables the profile lacks are skipped."""
    by_table = {}
    for rule in COLUMN_RULES:
        by_table.setdefault(rule["table"], []).append(rule)
    for table, rules in by_table.items():
        if table in tables:
            _check_table(db, path, table, rules)


def _bound(value):
    return "%.17g" % value


def describe_meta_expectation(rule):
    if rule["kind"] == "json_object":
        quoted = [f'"{v}"' for v in rule.get("one_of", [])]
        values = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else "".join(quoted) or "strings"
        text = f"a JSON object whose values are {values}"
    elif rule["kind"] == "text":
        quoted = [f"'{v}'" for v in rule["one_of"]]
        text = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else "".join(quoted)
    elif rule["kind"] == "integer":
        text = f"an integer from {int(rule['min'])} to {int(rule['max'])}"
    else:
        text = f"a number from {_bound(rule['min'])} to {_bound(rule['max'])}"
    return f"{text} ({rule['note']})" if rule.get("note") else text


def _shortened(text):
    return text[:40] + "..." if len(text) > 40 else text


def describe_json_value(value):
    """A JSON member's value as messages show it (traces/profile_rules.cpp describeJsonValue): a scalar as JSON,
    a container by its kind."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return _shortened(json.dumps(value, ensure_ascii=False))


# Python's json module reads more than JSON, and more than nlohmann::json (the C++ readers') reads: the hooks
# below refuse what nlohmann::json refuses, so that both readers accept the same texts.
def _refuse_constant(name):
    raise ValueError(f"{name} is no JSON")  # NaN, Infinity, -Infinity


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} overflows a double")
    return value


def _json_int(text):
    """An integer as nlohmann::json holds it: in 64 bits (signed, or unsigned when positive), else a double."""
    value = int(text)
    return value if -(1 << 63) <= value < 1 << 64 else _finite_float(text)


def _is_unicode(text):
    """False for a lone surrogate (a JSON escape \\ud800 alone), which nlohmann::json refuses."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class _Members(dict):
    """A JSON object's members, with the first name it gives twice (`twice`; None when each is given once)."""

    def __init__(self, pairs):
        super().__init__(pairs)  # (the last of a name given twice, as json.loads and nlohmann::json keep)
        seen = set()
        self.twice = next((name for name, _ in pairs if name in seen or seen.add(name)), None)


def _parse_json_object(text):
    """`text` as a dict when it is a JSON object nlohmann::json reads, else None."""
    try:
        parsed = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_json_int,
                            object_pairs_hook=_Members)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's parser goes
        return None
    if not isinstance(parsed, dict):
        return None
    for name, value in parsed.items():  # one level: what the rule reads
        if not _is_unicode(name) or (isinstance(value, str) and not _is_unicode(value)):
            return None
    return parsed


def _check_json_object(path, key, rule, text, utf8):
    """A json_object rule: `text` is a JSON object whose every value is a string (one of one_of when given)."""
    parsed = _parse_json_object(text) if utf8 else None
    if parsed is None:
        raise ProfileError(f"{path}: meta '{key}' is '{_shortened(text)}', expected {describe_meta_expectation(rule)}")
    if parsed.twice is not None:  # a stream's direction given both ways was read as the second
        raise ProfileError(f"{path}: meta '{key}' gives '{_shortened(parsed.twice)}' twice, "
                           f"expected {describe_meta_expectation(rule)}, each key once")
    allowed = rule.get("one_of")
    for name, value in sorted(parsed.items()):  # in key order, as nlohmann::json's std::map keeps members
        if not isinstance(value, str) or (allowed and value not in allowed):
            raise ProfileError(f"{path}: meta '{key}' gives '{_shortened(name)}' the value {describe_json_value(value)}, "
                               f"expected {describe_meta_expectation(rule)}")
    return parsed


def check_meta_value(path, key, text, utf8=True):
    """The meta value `text` of `key` checked against its rule (check 2): a number (int for an integer rule), or
    the object of a json_object rule, or the text of a text rule (one of its one_of); ProfileError naming the file, the key, the value and what was expected.
    utf8: whether the stored text was valid UTF-8 (a JSON text must be: nlohmann::json refuses it otherwise)."""
    rule = META_RULES[key]
    if rule["kind"] == "json_object":
        return _check_json_object(path, key, rule, text, utf8)
    if rule["kind"] == "text":  # the text itself one of one_of
        if not utf8 or text not in rule["one_of"]:
            raise ProfileError(f"{path}: meta '{key}' is '{_shortened(text)}', expected {describe_meta_expectation(rule)}")
        return text
    value = None
    if rule["kind"] == "integer":
        if _INTEGER.match(text):
            value = int(text)
    elif _NUMBER.match(text):
        value = float(text)
    if value is None or (isinstance(value, float) and not math.isfinite(value)) or \
            not rule["min"] <= value <= rule["max"]:
        raise ProfileError(f"{path}: meta '{key}' is '{_shortened(text)}', expected {describe_meta_expectation(rule)}")
    return value
