#!/usr/bin/env python3
"""The gradient all-reduce's stages as arithmetic, beside the simulated cycles.

Usage: pod_all_reduce_arithmetic.py PARAMS.txt KERAS_MODEL.json PHASES.tsv
  PARAMS.txt   `ipusim params --system S` (the target: IPUs, links, rates, latencies)
  KERAS_MODEL  the model (a Sequential of Flatten and Dense layers): the gradients' sizes
  PHASES.tsv   name<TAB>cycles of IPU 0's all-reduce exchanges in time order (the profile's)

Written from the staging the model documents (scheduler/multi_ipu/hierarchical_all_reduce.hpp,
model/README.md "Bytes between IPUs"), not from the simulator's code: every gradient tensor
of n floats is cut into P chunks [n c / P, n (c + 1) / P) (P the replicas of a POD), a chunk
into Q sub-chunks the same way (Q the PODs); rings within a POD follow the ladder (0, 2, 4,
..., 5, 3, 1), rings across PODs go 0, 1, ..., Q - 1.
  IPU-Link step: the slowest flow, ipuLink.latencyCycles + ceil(bytes / (links x link rate)),
    a rung's links between IPUs 2k, 2k + 1, a rail's otherwise.
  GW-Link step: the busiest gateway, gwLink.latencyCycles + ceil(its IPUs' bytes / (links x
    GW-Link rate)), links = all of them for 2 PODs, half for a loop of more.
The tiles' ports are not in the arithmetic (a chunk spreads over tens of tiles: a few hundred
bytes each, well under the link terms); so the simulated steps may only be longer.
"""
import json
import math
import sys


def read_params(path):
    params = {}
    for line in open(path):
        if line.startswith("  "):
            fields = line.split()
            params[fields[0]] = float(fields[1])
    return params


def gradient_sizes(model_path):
    layers = json.load(open(model_path))["config"]["layers"]
    sizes, width = [], None
    for layer in layers:
        config = layer["config"]
        if "batch_input_shape" in config and width is None:
            width = math.prod(config["batch_input_shape"][1:])
        if layer["class_name"] == "Dense":
            sizes += [width * config["units"], config["units"]]
            width = config["units"]
    return sizes


def piece(lo, hi, index, parts):
    n = hi - lo
    return lo + n * index // parts, lo + n * (index + 1) // parts


def ladder_ring(n):
    ring = list(range(0, n, 2))
    ring += list(range(n - 2 if n % 2 else n - 1, 0, -2))
    return ring if n > 2 else list(range(n))


def ceil_div(num, rate):
    exact = num / rate
    return round(exact) if abs(exact - round(exact)) < 1e-9 * max(1, exact) else math.ceil(exact)


def main():
    p = read_params(sys.argv[1])
    sizes = gradient_sizes(sys.argv[2])
    clock = p["clockHz"]
    ipus = int(p["ipuLink.numIpus"])
    per_pod = int(p["gwLink.ipusPerPod"]) or ipus
    per_pod = min(per_pod, ipus)
    pods = ipus // per_pod
    ring = ladder_ring(per_pod)
    link_rate = p["ipuLink.linkBytesPerSecond"] / clock

    def chunk_bytes(c):
        return sum(4 * (hi - lo) for n in sizes for lo, hi in [piece(0, n, c, per_pod)])

    def sub_bytes(c, j):
        total = 0
        for n in sizes:
            lo, hi = piece(0, n, c, per_pod)
            a, b = piece(lo, hi, j, pods)
            total += 4 * (b - a)
        return total

    def ipu_step(chunk_of_position):
        worst = 0
        for pos, ipu in enumerate(ring):
            to = ring[(pos + 1) % per_pod]
            links = p["ipuLink.linksPerRung"] if min(ipu, to) % 2 == 0 and abs(ipu - to) == 1 \
                else p["ipuLink.linksPerRail"]
            worst = max(worst, p["ipuLink.latencyCycles"] + ceil_div(chunk_bytes(chunk_of_position(pos)),
                                                                       links * link_rate))
        return worst

    expected = []
    prefix = "all_reduce/pod_" if pods > 1 else "all_reduce/"
    for s in range(per_pod - 1):
        expected.append((prefix + "reduce_scatter/%d" % s, ipu_step(lambda pos: (pos - s) % per_pod)))
    if pods > 1:
        gw_links = p["gwLink.linksPerGateway"] if pods == 2 else p["gwLink.linksPerGateway"] // 2
        gw_rate = gw_links * p["gwLink.linkBytesPerSecond"] / clock
        per_gateway = int(p["gwLink.ipusPerGateway"])

        def gw_step(sub_of_pod):
            worst = 0
            for q in range(pods):
                for machine in range(per_pod // per_gateway):
                    total = 0
                    for local in range(machine * per_gateway, (machine + 1) * per_gateway):
                        pos = ring.index(local)
                        total += sub_bytes((pos + 1) % per_pod, sub_of_pod(q))
                    worst = max(worst, p["gwLink.latencyCycles"] + ceil_div(total, gw_rate))
            return worst

        for s in range(pods - 1):
            expected.append(("all_reduce/gw_reduce_scatter/%d" % s, gw_step(lambda q: (q - s) % pods)))
        for s in range(pods - 1):
            expected.append(("all_reduce/gw_all_gather/%d" % s, gw_step(lambda q: (q + 1 - s) % pods)))
    for s in range(per_pod - 1):
        expected.append((prefix + "all_gather/%d" % s, ipu_step(lambda pos: (pos + 1 - s) % per_pod)))

    simulated = {}
    for line in open(sys.argv[3]):
        name, cycles = line.rstrip("\n").split("\t")
        simulated.setdefault(name, int(cycles))  # the first step's
    print("stage\tsteps\tarithmetic_cycles\tsimulated_cycles\tsimulated/arithmetic")
    stages = {}
    for name, cycles in expected:
        stage = name.rsplit("/", 1)[0]
        if name not in simulated:
            sys.exit("no simulated phase named " + name)
        steps, arithmetic, sim = stages.get(stage, (0, 0, 0))
        stages[stage] = (steps + 1, arithmetic + cycles, sim + simulated[name])
    total_a = total_s = 0
    for stage, (steps, arithmetic, sim) in stages.items():
        print("%s\t%d\t%d\t%d\t%.4f" % (stage, steps, arithmetic, sim, sim / arithmetic))
        total_a += arithmetic
        total_s += sim
    print("all exchanges\t%d\t%d\t%d\t%.4f" % (len(expected), total_a, total_s, total_s / total_a))
    print("gradient bytes per replica: %d (%d tensors)" % (4 * sum(sizes), len(sizes)))


if __name__ == "__main__":
    main()
