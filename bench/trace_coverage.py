#!/usr/bin/env python3
"""How much of each traced training step the compiled program's kernels and library calls
cover (issue 19: "its per-kernel times add up to the measured step time within 10%").

Usage: JX_PROFILE=DIR build/examples/train_cnn --limit 2560 --epochs 1
       bench/trace_coverage.py DIR/*.trace.json
Reads a Chrome trace-event file written by jx::profiler; for every "step" range
(StepTraceAnnotation, which examples/common/training.h opens around each train step) it sums
the "kernel" and "library" events of the same thread inside it, and prints the coverage of
the first steps, and the median over all steps but the first (which compiles).
"""
import json
import statistics
import sys

events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
spans = [e for e in events if e.get("ph") == "X"]
steps = [e for e in spans if e.get("cat") == "step"]
work = [e for e in spans if e.get("cat") in ("kernel", "library")]
if not steps:
    sys.exit("no step events: was the trace written by a program with StepTraceAnnotation?")
cover = []
for s in steps:
    t0, t1 = s["ts"], s["ts"] + s["dur"]
    inside = sum(w["dur"] for w in work if w["tid"] == s["tid"] and w["ts"] >= t0 and w["ts"] + w["dur"] <= t1)
    cover.append((s["dur"], inside / s["dur"] if s["dur"] else 0.0))
for i, (dur, c) in enumerate(cover[:4]):
    print(f"step {i}: {dur / 1000:.1f} ms, kernels and library calls {100 * c:.2f}%")
rest = [c for _, c in cover[1:]] or [cover[0][1]]
print(f"{len(cover)} steps; median coverage after the first: {100 * statistics.median(rest):.2f}%")
