"""Half-open cycle intervals [begin, end), kept merged: the analyses measure
time as the length of a union of slices, so that nested or overlapping slices
are never counted twice (as profiler/analysis/interval_set.hpp does)."""


class IntervalSet:
    def __init__(self, intervals=()):
        self._items = []
        for begin, end in intervals:
            self.add(begin, end)

    def add(self, begin, end):
        if end > begin:
            self._items.append((begin, end))
            self._merged = False

    def intervals(self):
        """Sorted, disjoint, non-adjacent (begin, end) pairs."""
        if not getattr(self, "_merged", True):
            merged = []
            for begin, end in sorted(self._items):
                if merged and begin <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], end))
                else:
                    merged.append((begin, end))
            self._items = merged
            self._merged = True
        return list(self._items)

    def length(self):
        return sum(end - begin for begin, end in self.intervals())

    def intersect(self, other):
        a, b = self.intervals(), other.intervals()
        result, i, j = IntervalSet(), 0, 0
        while i < len(a) and j < len(b):
            begin, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            result.add(begin, end)
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return result

    def subtract(self, other):
        """This set minus `other`."""
        result = IntervalSet()
        cuts = other.intervals()
        for begin, end in self.intervals():
            at = begin
            for cut_begin, cut_end in cuts:
                if cut_end <= at or cut_begin >= end:
                    continue
                result.add(at, min(cut_begin, end))
                at = max(at, cut_end)
            result.add(at, end)
        return result

    def union(self, other):
        result = IntervalSet(self.intervals())
        for begin, end in other.intervals():
            result.add(begin, end)
        return result
