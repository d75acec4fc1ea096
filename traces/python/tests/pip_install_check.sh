#!/usr/bin/env bash
# `pip install traces/python` works with the given python (Debian's python3 in
# CI, with its pip, venv and setuptools): installs a copy of the package into
# a fresh venv (--system-site-packages, no index, no build isolation: nothing
# is downloaded), then imports it from there and reads a profile.
# Usage: pip_install_check.sh PYTHON SOURCE_DIR WORK_DIR PROFILE
set -euo pipefail
python="$1" source="$2" work="$3" profile="$4"
rm -rf "$work" && mkdir -p "$work"
cp -r "$source" "$work/src"                # pip builds in the tree: keep the repository clean
rm -rf "$work/src/tests" "$work/src/examples"
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-build-isolation "$work/src"
cd "$work"
"$work/venv/bin/python" - "$profile" <<'PY'
import sys
import ipusim_profile
assert "site-packages" in ipusim_profile.__file__, ipusim_profile.__file__
with ipusim_profile.open_profile(sys.argv[1]) as p:
    ops = p.operations()
    print(f"installed at {ipusim_profile.__file__}: {len(p.runs())} runs, {len(ops.rows)} operations")
PY
