"""Memory per tile by category, notebook style: a stacked bar per tile of
what lives there (weights, activations, gradients, ...), drawn with
matplotlib where it is installed, else summarised in text.

    python3 traces/python/examples/memory_per_tile.py report [memory.png]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ipusim_profile  # noqa: E402


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: memory_per_tile.py PROFILE_OR_REPORT_DIR [OUT.png]", file=sys.stderr)
        return 2
    out = argv[2] if len(argv) == 3 else "memory_per_tile.png"
    with ipusim_profile.open_profile(argv[1]) as profile:
        per_tile = profile.memory_per_tile()          # {tile: {category: bytes}}
        capacity = profile.tile_memory_bytes
        peaks = profile.tile_peaks()
    tiles = sorted(per_tile)
    categories = sorted({c for by_category in per_tile.values() for c in by_category})
    fullest = max(peaks, key=lambda p: p.peak_bytes) if peaks else None
    if fullest is not None:
        print(f"fullest tile: {fullest.tile} on IPU {fullest.ipu}, peak {fullest.peak_bytes} B"
              + (f" of {capacity} B" if capacity else ""))
    for category in categories:
        total = sum(per_tile[t].get(category, 0) for t in tiles)
        print(f"  {category:<16} {total:>12} B over {len(tiles)} tiles")
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib): no plot drawn")
        return 0
    fig, ax = plt.subplots(figsize=(12, 4))
    bottom = [0] * len(tiles)
    for category in categories:
        values = [per_tile[t].get(category, 0) / 1024 for t in tiles]
        ax.bar(tiles, values, bottom=bottom, width=1.0, label=category)
        bottom = [b + v for b, v in zip(bottom, values)]
    if capacity:
        ax.axhline(capacity / 1024, color="black", linewidth=0.8, label="tile memory")
    ax.set_xlabel("tile")
    ax.set_ylabel("KiB")
    ax.set_title("Memory per tile by category")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"plot written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
