#!/usr/bin/env python3
"""bench/breakdown.py: where the milliseconds of each generation of an es
job go, from masterd's own records (no trace needed).

Inputs: the job's `r3qctl result JOB --json` (the generation reports:
elapsed = last result accepted, total = batch submitted -> last result) and
its `r3qctl report JOB --trace FILE` (every execution, start and end in
masterd's clock, relative to the job's start), optionally masterd's log
with `trace = journal` (a line per commit, with its microseconds).

A generation g runs from the last result of g-1 (t_end[g-1]) to its own
last result (t_end[g]); that period P splits exactly into
  step      t_submit[g] - t_end[g-1]: the ES's generation step in masterd
            (selection, the next batch, its journal rows);
and, averaged over the CPUs, of the window t_submit[g] .. t_end[g]:
  lb        the reference work of the generation's tasks over the CPUs
            (LB of the generation: what a perfect machine takes);
  dispatch  t_submit -> the CPU's first execution of the window starts
            (the journal commit before anything leaves masterd, the
            Assign's way out, the worker's queue and thread);
  overshoot accepted executions' time beyond their reference work (the
            worker's sleep or spin overshoot, its own overheads);
  waste     executions that did not count (a replica that lost its race,
            an interrupted copy), clipped to the window;
  gaps      idle between two executions of the CPU (its queue ran dry:
            a result's way back plus the next Assign's way out);
  tail      idle from the CPU's last execution to the generation's last
            accepted execution end (the others finish the last tasks);
  return    the last accepted execution's end -> masterd accepts it (the
            last result's way back, the same for every CPU).
P = step + lb + dispatch + overshoot + waste + gaps + tail + return.

usage: breakdown.py --run RUN.json --trace TRACE.json --work-ms MS
       [--log masterd.log] [--rtt-us US] [--label L] [--csv FILE]
       [--tag F1,F2,...]
Prints the table on stdout; with --csv, appends one CSV row per generation
and one "all" row (means over the generations) to FILE, each starting with
the --tag fields:
  TAGS...,gen,tasks,period_ms,step,lb,dispatch,overshoot,waste,gaps,tail,
  return,other,replicas,efficiency,vs_limit,rtt_us,commits,commit_ms,
  commit_max_ms, slow_commits (commits of 1 ms or more: WAL checkpoints or preemption)
"""
import argparse
import json
import re
import statistics
import sys

COLS = ("step", "lb", "dispatch", "overshoot", "waste", "gaps", "tail",
        "return")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--work-ms", type=float, required=True)
    ap.add_argument("--log")
    ap.add_argument("--rtt-us", type=float, default=0.0)
    ap.add_argument("--label", default="")
    ap.add_argument("--csv")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()

    with open(a.run) as f:
        run = json.load(f)
    with open(a.trace) as f:
        tr = json.load(f)
    gens = sorted(run["generations_done"], key=lambda g: g["generation"])
    speed = run.get("speed_sum") or 0.0
    # Executions by CPU (pid = worker, tid = slot), in ms since job start.
    cpus = {}
    for e in tr["traceEvents"]:
        if e.get("ph") != "X":
            continue
        s = e["ts"] / 1000.0
        d = e["dur"] / 1000.0
        ok = e.get("args", {}).get("outcome") == "done"
        cpus.setdefault((e["pid"], e["tid"]), []).append((s, s + d, ok))
    for v in cpus.values():
        v.sort()
    ncpu = len(cpus)
    if ncpu == 0 or not gens:
        sys.exit("breakdown: no executions or no generations")
    if speed <= 0:
        speed = float(ncpu)
    unit = speed / ncpu  # a CPU's mean speed

    # Commits from the journal trace: count and durations.
    commits = []
    if a.log:
        pat = re.compile(r"trace journal [0-9.]+ commit of \d+ rows in (\d+) us")
        with open(a.log, errors="replace") as f:
            for line in f:
                m = pat.search(line)
                if m:
                    commits.append(int(m.group(1)))

    rows = []
    prev_end = 0.0
    for g in gens:
        t_end = g["elapsed"] * 1000.0
        t_sub = t_end - g["total"] * 1000.0
        if t_sub < prev_end:
            t_sub = prev_end
        per = {c: 0.0 for c in COLS}
        per["step"] = t_sub - prev_end
        per["lb"] = g["tasks"] * a.work_ms / speed
        # The last accepted execution ending in the window.
        last_ok = t_sub
        for v in cpus.values():
            for s, e, ok in v:
                if ok and t_sub <= e <= t_end + 1e-6:
                    last_ok = max(last_ok, e)
        per["return"] = t_end - last_ok
        for v in cpus.values():
            inw = [(max(s, t_sub), min(e, t_end), s, e, ok)
                   for s, e, ok in v if e > t_sub and s < t_end]
            if not inw:
                per["tail"] += last_ok - t_sub
                continue
            per["dispatch"] += inw[0][0] - t_sub
            cur = inw[0][0]
            for cs, ce, s, e, ok in inw:
                if cs > cur:
                    per["gaps"] += cs - cur
                dur = ce - max(cs, cur)
                if dur < 0:
                    dur = 0.0
                if ok and ce >= e - 1e-9 and cs <= s + 1e-9:
                    nominal = a.work_ms / unit
                    per["overshoot"] += dur - nominal
                else:
                    per["waste"] += dur
                cur = max(cur, ce)
            # Accepted work counted as lb; what the CPU did beyond is above.
            per["tail"] += max(0.0, last_ok - cur)
            # An execution running past last_ok (a loser) is waste already.
        for c in ("dispatch", "overshoot", "waste", "gaps", "tail"):
            per[c] /= ncpu
        # Accepted executions of copies that straddle windows are rare;
        # whatever the identity misses is "other".
        period = t_end - prev_end
        per["other"] = period - sum(per[c] for c in COLS)
        rows.append((g["generation"], g["tasks"], period, per,
                     g.get("replicas", 0)))
        prev_end = t_end

    rtt = a.rtt_us / 1000.0
    hdr = ("%-5s %5s %9s %8s %8s %8s %9s %9s %8s %8s %8s %8s %8s %7s %7s" %
           ("gen", "tasks", "period", "lb", "step", "dispatch", "overshoot",
            "waste", "gaps", "tail", "return", "other", "repl", "eff",
            "vslimit"))
    print("%s: ms per generation, averaged over the %d CPUs" % (a.label, ncpu))
    print(hdr)
    tot = {c: 0.0 for c in COLS + ("other",)}
    tp = tl = 0.0
    out = []
    for gen, n, period, per, repl in rows:
        eff = per["lb"] / period if period > 0 else 0
        lim = per["lb"] / (per["lb"] + rtt) if rtt > 0 else 1.0
        print("%-5d %5d %9.3f %8.3f %8.3f %8.3f %9.3f %9.3f %8.3f %8.3f %8.3f %8.3f %8d %6.1f%% %6.1f%%" %
              (gen, n, period, per["lb"], per["step"], per["dispatch"],
               per["overshoot"], per["waste"], per["gaps"], per["tail"],
               per["return"], per["other"], repl, 100 * eff,
               100 * eff / lim))
        for c in tot:
            tot[c] += per[c]
        tp += period
        tl += per["lb"]
        out.append([str(gen), str(n), "%.4f" % period] +
                   ["%.4f" % per[c] for c in COLS + ("other",)] +
                   [str(repl), "%.4f" % eff, "%.4f" % (eff / lim),
                    "%.1f" % a.rtt_us, "", "", "", ""])
    ng = len(rows)
    eff = tl / tp if tp > 0 else 0
    lim = tl / (tl + ng * rtt) if rtt > 0 else 1.0
    print("%-5s %5s %9.3f %8.3f %8.3f %8.3f %9.3f %9.3f %8.3f %8.3f %8.3f %8.3f %8s %6.1f%% %6.1f%%" %
          ("mean", "", tp / ng, tot["lb"] / ng, tot["step"] / ng,
           tot["dispatch"] / ng, tot["overshoot"] / ng, tot["waste"] / ng,
           tot["gaps"] / ng, tot["tail"] / ng, tot["return"] / ng,
           tot["other"] / ng, "", 100 * eff, 100 * eff / lim))
    lost = tp - tl
    if lost > 0:
        print("lost %.3f ms a generation: " % (lost / ng) + ", ".join(
            "%s %.0f%%" % (c, 100 * tot[c] / lost)
            for c in ("step", "dispatch", "overshoot", "waste", "gaps",
                      "tail", "return", "other")))
    if rtt > 0:
        print("limit LB / (LB + G x RTT), RTT %.0f us: %.1f%%; this run: %.1f%% of it" %
              (a.rtt_us, 100 * lim, 100 * eff / lim))
    if commits:
        print("journal: %d commits (%.1f a generation), median %d us, p90 %d us, %.3f ms a generation in all" %
              (len(commits), len(commits) / ng, statistics.median(commits),
               sorted(commits)[int(0.9 * (len(commits) - 1))],
               sum(commits) / 1000.0 / ng))
        slow = [c for c in commits if c >= 1000]
        print("journal: %d commits of 1 ms or more (a WAL checkpoint with its fsyncs, or masterd preempted: in the event loop), %.3f ms in all, the longest %.3f ms" %
              (len(slow), sum(slow) / 1000.0, max(commits) / 1000.0))
    out.append(["all", str(sum(r[1] for r in rows)), "%.4f" % (tp / ng)] +
               ["%.4f" % (tot[c] / ng) for c in COLS + ("other",)] +
               [str(sum(r[4] for r in rows)), "%.4f" % eff,
                "%.4f" % (eff / lim), "%.1f" % a.rtt_us,
                "%.1f" % (len(commits) / ng) if commits else "",
                "%.4f" % (sum(commits) / 1000.0 / ng) if commits else "",
                "%.4f" % (max(commits) / 1000.0) if commits else "",
                str(sum(1 for c in commits if c >= 1000)) if commits else ""])
    if a.csv:
        tag = [a.tag] if a.tag else []
        with open(a.csv, "a") as f:
            for r in out:
                f.write(",".join(tag + r) + "\n")


if __name__ == "__main__":
    main()
