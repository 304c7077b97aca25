#!/usr/bin/env python3
"""Benchmarks Kiln against ONNX Runtime (CPU) on the peer models.

For each model (exported by bench/models/export.py) and batch size it:

1. compiles the model with `kiln-compile MODEL.onnx --input-shape=... -o
   X.kmod --report`, timing the compile and reading the memory plan's peak
   arena bytes from the report (a compile failure is recorded, not fatal);
2. writes fixed-seed inputs as .npy (normal floats for images; token ids in
   [0, vocab) and an all-ones attention_mask for BERT and GPT-2);
3. runs the model once in ONNX Runtime and saves its outputs as .npy, then
   runs `kiln-run X.kmod --input ... --expected ORT_OUTPUT.npy --rtol R
   --atol A` to check Kiln's outputs against them;
4. alternates timing rounds: `kiln-run --benchmark --threads T` (its p50)
   and the same kind of round of ONNX Runtime runs in a persistent worker
   process (intra_op_num_threads=T, inter_op_num_threads=1, default graph
   optimizations). For every round it measures the share of the CPU other
   processes took meanwhile (/proc/stat); a round under --quiet-threshold
   is "quiet". With --quiet-wait it waits for a quiet machine before each
   round and runs extra rounds (up to 3x --rounds, within --config-seconds)
   to get --rounds quiet ones. Each engine's latency is the median of its
   quiet rounds (of all rounds when none was quiet).

It prints a Markdown table and saves every number as JSON in the work dir;
with --write-docs it also writes docs/performance.md and its plot.
--from-json A.json,B.json rebuilds the report from earlier runs.

Memory: "Kiln arena" is the memory plan's peak arena (every intermediate
tensor of one run); "peak RSS" is the peak resident set of the process that
ran the model: kiln-run (the loaded module with its weights, the arena,
inputs and outputs) and the ONNX Runtime worker (Python, numpy and
onnxruntime themselves, plus the session, its weights and its arenas).
Compile peak RSS (JSON only) is kiln-compile's.

  python3 bench/run.py [--models resnet50,bert_base] [--batches 1,8]
      [--threads 2] [--iterations 10] [--warmup 3] [--rounds 3]
      [--round-seconds S] [--write-docs]

The model zoo: with --zoo DIR (a directory written by bench/zoo/zoo.py) it
does the same for every file of DIR/manifest.json that was exported (each at
the input shapes the manifest gives, every one pinned with --input-shape;
token ids within the vocabulary, attention masks all ones; --models and
--exporters select files; a _novi file identical to its twin is skipped).
Its reference outputs come from ONNX Runtime with basic graph optimizations
(--ort-reference-opt; the extended ones approximate, e.g. a DequantizeLinear'd
weight's MatMul on quantized activations), its timing from the default ones.
It prints one table (model, exporter, compile time, match, Kiln and ORT p50,
their ratio, peak RSS) with the geometric mean and the worst of the ratios,
and saves it as zoo.md beside results.json in the work dir (default
build/bench-zoo):

  python3 bench/run.py --zoo build/zoo-small [--models resnet18,bert]
      [--exporters torchscript,dynamo,onnx] [--no-novi] [--compile-timeout 300]
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shlex
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import export  # noqa: E402  (bench/models/export.py: model list and inputs)

GiB = 1 << 30
MiB = 1 << 20


# --------------------------------------------------------------------------
# CPU accounting: how busy the machine was with other work while timing.
# --------------------------------------------------------------------------

def cpu_seconds(who):
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def machine_busy_seconds():
    """CPU seconds the whole machine has spent busy (all cores), /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal ...
    busy = v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)
    return busy / os.sysconf("SC_CLK_TCK")


def others_share(busy0, wall, own_cpu):
    """Fraction of the machine's cores used by other processes over a span."""
    busy1 = machine_busy_seconds()
    if busy0 is None or busy1 is None or wall <= 0:
        return None
    return max(0.0, (busy1 - busy0 - own_cpu) / (os.cpu_count() * wall))


def wait_for_quiet(max_wait, threshold, log):
    """Waits (up to max_wait s) until other processes use under `threshold`
    of the machine's cores over a 2 s sample; returns the last sample."""
    t0 = time.perf_counter()
    while True:
        b0, c0, t = machine_busy_seconds(), cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
        time.sleep(2.0)
        share = others_share(b0, time.perf_counter() - t,
                             cpu_seconds(resource.RUSAGE_SELF) - c0)
        if share is None or share < threshold or time.perf_counter() - t0 > max_wait:
            if share is not None and share >= threshold:
                log("  machine still busy (others use %.0f%% of the cores); "
                    "timing anyway" % (100 * share))
            return share


# --------------------------------------------------------------------------
# ONNX Runtime worker: a separate process, so that its peak RSS is its own.
# Protocol: one JSON object a line on stdin, one JSON answer a line on stdout.
# --------------------------------------------------------------------------

ORT_LEVELS = {"all": "ORT_ENABLE_ALL", "extended": "ORT_ENABLE_EXTENDED",
              "basic": "ORT_ENABLE_BASIC", "disable": "ORT_DISABLE_ALL"}


def ort_worker(model, threads, inputs, level="all"):
    import onnxruntime as ort

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                            ORT_LEVELS[level])
    t = time.perf_counter()
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - t
    feed = {i.name: np.load(f) for i, f in zip(sess.get_inputs(), inputs)}

    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    reply({"ready": True, "load_s": load_s, "version": ort.__version__,
           "outputs": [o.name for o in sess.get_outputs()]})
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "outputs":
            t = time.perf_counter()
            outs = sess.run(None, feed)
            ms = (time.perf_counter() - t) * 1e3
            for o, path in zip(outs, cmd["paths"]):
                np.save(path, o)
            reply({"first_ms": ms,
                   "max_abs": [float(np.max(np.abs(o))) if o.size else 0.0
                               for o in outs]})
        elif cmd["cmd"] == "time":
            c0 = cpu_seconds(resource.RUSAGE_SELF)
            for _ in range(cmd["warmup"]):
                sess.run(None, feed)
            times = []
            for _ in range(cmd["iterations"]):
                t = time.perf_counter()
                sess.run(None, feed)
                times.append((time.perf_counter() - t) * 1e3)
            reply({"p50_ms": float(np.median(times)), "min_ms": min(times),
                   "cpu_s": cpu_seconds(resource.RUSAGE_SELF) - c0})
        elif cmd["cmd"] == "quit":
            break
    reply({"peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "base_rss": base_rss})


class OrtWorker:
    def __init__(self, model, threads, inputs, log, level="all"):
        self.log = open(log, "w")
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--ort-worker", model,
             str(threads), level] + inputs,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            text=True)
        self.hello = self._read()

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            self.p.wait()
            self.log.close()
            err = [l for l in open(self.log.name).read().splitlines() if l.strip()]
            raise RuntimeError("ONNX Runtime worker died: %s" %
                               (err[-1] if err else "exit %s" % self.p.returncode))
        return json.loads(line)

    def ask(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        return self._read()

    def close(self):
        try:
            ans = self.ask(cmd="quit")
        finally:
            self.p.stdin.close()
            self.p.wait()
            self.log.close()
        return ans


# --------------------------------------------------------------------------
# Subprocesses with their own peak RSS (wait4) and a time limit.
# --------------------------------------------------------------------------

class Proc:
    def __init__(self, rc, out, err, wall_s, peak_rss, timed_out, cpu_s=0.0):
        self.cpu_s = cpu_s
        self.rc, self.out, self.err = rc, out, err
        self.wall_s, self.peak_rss, self.timed_out = wall_s, peak_rss, timed_out


def run_proc(argv, log_prefix, timeout_s, mem_limit=None, env=None):
    def limit():
        if mem_limit:
            resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    with open(log_prefix + ".out", "w") as out, open(log_prefix + ".err", "w") as err:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, preexec_fn=limit,
                             env=env)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t > timeout_s:
                p.send_signal(signal.SIGKILL)
                timed_out = True
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t
        p.returncode = (os.waitstatus_to_exitcode(status))
    with open(log_prefix + ".out") as f:
        o = f.read()
    with open(log_prefix + ".err") as f:
        e = f.read()
    return Proc(p.returncode, o, e, wall, ru.ru_maxrss * 1024, timed_out,
                ru.ru_utime + ru.ru_stime)


def first_error(proc, what):
    """The first error line of a failed tool run, or why it stopped."""
    if proc.timed_out:
        return "%s: timed out after %.0f s" % (what, proc.wall_s)
    text = proc.err + "\n" + proc.out
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "mismatch" in l.lower():
            return l
    sig = ""
    if proc.rc < 0:
        sig = "killed by %s" % signal.Signals(-proc.rc).name
    if lines:
        return (sig + ": " if sig else "") + lines[0]
    return sig or "%s: exit status %d, no output" % (what, proc.rc)


# --------------------------------------------------------------------------
# The benchmark of one model at one batch size.
# --------------------------------------------------------------------------

def peer_specs(model, batch):
    """A peer model's inputs as zoo specs: [{name, dtype, shape[, low,
    high]}], integers in [low, high)."""
    specs = []
    for name, (dtype, dims) in export.input_specs(model).items():
        s = {"name": name, "dtype": dtype,
             "shape": [batch if d is None else d for d in dims]}
        if name == "attention_mask":
            s.update(low=1, high=2)
        elif dtype == "int64":
            s.update(low=0, high=export.vocab_size(model))
        specs.append(s)
    return specs


def make_inputs(model, batch, workdir, seed, specs=None, tag=None):
    """Writes fixed-seed inputs as .npy: normal floats, integers in the
    spec's [low, high) (a constant where that holds one value: attention
    masks); specs default to the peer model's (peer_specs)."""
    rng = np.random.default_rng(seed)
    files, shapes = [], []
    for s in specs or peer_specs(model, batch):
        name, dtype, shape = s["name"], np.dtype(s["dtype"]), s["shape"]
        if dtype.kind in "iub":
            lo, hi = s.get("low", 0), s.get("high", 2)
            if hi - lo == 1:
                x = np.full(shape, lo, dtype=dtype)
            else:
                x = rng.integers(lo, hi, size=shape).astype(dtype)
        else:
            x = rng.standard_normal(shape).astype(dtype)
        path = os.path.join(workdir, "%s.%s.npy" % (tag or "%s_b%d" % (model, batch),
                                                     name))
        np.save(path, x)
        files.append(path)
        shapes.append("--input-shape=%s:%s" % (name, "x".join(map(str, shape))))
    return files, shapes


def rel(path):
    """A path under the repository, relative to its root (as in the docs)."""
    if not os.path.isabs(path):
        return path
    p = os.path.relpath(path, ROOT)
    return path if p.startswith("..") else p


def cmdline(argv):
    return shlex.join(rel(x) for x in argv)


def bench_one(a, model, batch, log, zoo=None):
    """One model at one batch; zoo: a manifest entry of bench/zoo/zoo.py
    (its file in a.zoo, its inputs' shapes and ranges)."""
    r = {"model": model, "batch": batch, "threads": a.threads,
         "kiln_build": a.kiln_rev or ("commit " + git_rev()),
         "loadavg_start": os.getloadavg()[0]}
    if zoo:
        onnx_path = os.path.join(a.zoo, zoo["file"])
        tag = os.path.splitext(zoo["file"])[0]
        r.update(file=zoo["file"], exporter=zoo["exporter"],
                 variant=zoo.get("variant", ""))
    else:
        onnx_path = os.path.join(a.models_dir, model + ".onnx")
        tag = "%s_b%d" % (model, batch)
    wd = a.work_dir
    kmod = os.path.join(wd, tag + ".kmod")
    inputs, shape_args = make_inputs(model, batch, wd, a.seed,
                                     zoo["inputs"] if zoo else None, tag)

    # 1. Compile.
    compile_argv = [a.kiln_compile, onnx_path] + shape_args + ["-o", kmod, "--report"]
    r["compile_cmd"] = cmdline(compile_argv)
    meta = kmod + ".json"
    if a.reuse_kmod and os.path.exists(kmod) and os.path.exists(meta):
        r.update(json.load(open(meta)))
        log("  compile: reused %s" % rel(kmod))
    else:
        if os.path.exists(kmod):
            os.remove(kmod)
        log("  compile: %s" % r["compile_cmd"])
        c = run_proc(compile_argv, os.path.join(wd, tag + ".compile"),
                     a.compile_timeout, a.compile_mem_limit * GiB)
        r["compile_s"] = c.wall_s
        r["compile_rss"] = c.peak_rss
        if c.rc != 0:
            r["kiln_error"] = first_error(c, "kiln-compile")
            if not c.timed_out and (c.rc < 0 or "out of memory" in c.err.lower()
                                    or "bad_alloc" in c.err):
                r["kiln_error"] += " (address-space limit %g GiB)" % a.compile_mem_limit
            r["kiln_stage"] = "compile"
            log("  compile FAILED in %.1f s: %s" % (c.wall_s, r["kiln_error"]))
        else:
            m = re.search(r"arena \(peak\) (\d+) bytes", c.err)
            r["arena_bytes"] = int(m.group(1)) if m else None
            m = re.search(r"code: (\d+) bytes", c.err)
            r["code_bytes"] = int(m.group(1)) if m else None
            json.dump({k: r[k] for k in ("compile_s", "compile_rss", "arena_bytes",
                                         "code_bytes")}, open(meta, "w"))
            log("  compiled in %.1f s (peak RSS %.0f MiB), arena %.1f MiB" %
                (c.wall_s, c.peak_rss / MiB, (r["arena_bytes"] or 0) / MiB))

    # 2. ONNX Runtime: start the worker, save its outputs as the reference.
    try:
        ort_w = OrtWorker(onnx_path, a.threads, inputs,
                          os.path.join(wd, tag + ".ort.log"))
    except Exception as e:
        r["ort_error"] = str(e)
        log("  ORT FAILED: %s" % e)
        ort_w = None
    expected = []
    if ort_w:
        r["ort_load_s"] = ort_w.hello["load_s"]
        expected = [os.path.join(wd, "%s.ort.%s.npy" % (tag, n))
                    for n in ort_w.hello["outputs"]]
        ref_level = a.ort_reference_opt or "all"
        first = ort_w.ask(cmd="outputs", paths=expected if ref_level == "all" else
                          [p[:-4] + ".timed.npy" for p in expected])
        r["ort_first_ms"] = first["first_ms"]
        r["ort_max_abs"] = first["max_abs"]
        if ref_level != "all":
            # The reference outputs from a session at another optimization
            # level, in a process of its own (the timed one's RSS stays its own).
            try:
                ref = OrtWorker(onnx_path, a.threads, inputs,
                                os.path.join(wd, tag + ".ort-ref.log"), ref_level)
                r["ort_max_abs"] = ref.ask(cmd="outputs", paths=expected)["max_abs"]
                ref.close()
                r["ort_reference_opt"] = ref_level
            except Exception as e:
                r["ort_error"] = "reference session (%s): %s" % (ref_level, e)
                expected = []

    # 3. Check Kiln's outputs against ONNX Runtime's.
    kiln_ok = "kiln_error" not in r
    in_args = []
    for f in inputs:
        in_args += ["--input", f]
    run_base = [a.kiln_run, kmod] + in_args + ["--threads", str(a.threads)]
    if kiln_ok and expected:
        exp_args = []
        for f in expected:
            exp_args += ["--expected", f]
        argv = run_base + exp_args + ["--rtol", str(a.rtol), "--atol", str(a.atol)]
        r["check_cmd"] = cmdline(argv)
        k = run_proc(argv, os.path.join(wd, tag + ".check"), a.run_timeout)
        m = re.search(r"ran \S+ in ([0-9.]+) ms", k.out)
        r["kiln_first_ms"] = float(m.group(1)) if m else None
        lines = [l for l in k.out.splitlines() if l.startswith("output ")]
        r["check_lines"] = lines
        if k.rc == 0:
            # Elementwise rtol/atol can be vacuous for outputs much smaller
            # than atol (random-weight CNNs give logits ~1e-9), so each
            # output's largest error must also be within rtol of its range.
            errs = [float(x) for l in lines
                    for x in re.findall(r"max abs err ([0-9.e+-]+|nan|inf)", l)]
            r["max_abs_err"] = max(errs) if errs else None
            norm = [e / m if m else e for e, m in zip(errs, r["ort_max_abs"])]
            r["range_rel_err"] = max(norm) if norm else None
            r["match"] = "pass" if all(n <= a.rtol for n in norm) else "FAIL"
            if r["match"] == "FAIL":
                r["mismatch"] = ("largest error %.3g of the output range (max "
                                 "|ORT output| %s) exceeds rtol; kiln-run: %s" % (
                                     r["range_rel_err"], r["ort_max_abs"],
                                     "; ".join(lines)))
            log("  outputs vs ORT (%s): %s" % (r["match"], "; ".join(lines)))
        elif lines and any("MISMATCH" in l for l in lines) and r["kiln_first_ms"]:
            r["match"] = "FAIL"
            r["mismatch"] = next(l for l in lines if "MISMATCH" in l)
            log("  outputs MISMATCH: %s" % r["mismatch"])
        else:
            r["kiln_error"] = first_error(k, "kiln-run")
            r["kiln_stage"] = "run"
            r["kiln_error_cmd"] = r["check_cmd"]
            kiln_ok = False
            log("  kiln-run FAILED: %s" % r["kiln_error"])
    elif kiln_ok:
        r["match"] = "n/a (no ORT reference)"
    if "kiln_error" in r and r.get("kiln_stage") == "compile":
        r["kiln_error_cmd"] = r["compile_cmd"]

    # 4. Alternating timing rounds.
    def iters(first_ms):
        n = a.iterations
        if a.round_seconds and first_ms:
            n = min(n, max(a.min_iterations, int(a.round_seconds * 1e3 / first_ms)))
        return n

    k_iters = iters(r.get("kiln_first_ms"))
    o_iters = iters(r.get("ort_first_ms"))
    # Alternate Kiln and ORT rounds until each engine has --rounds rounds
    # during which other processes used under --quiet-threshold of the
    # cores (or 3x --rounds attempts); a round's numbers are kept with the
    # share of the CPU others took meanwhile.
    k_rounds, o_rounds, k_rss = [], [], 0

    def quiet(rounds):
        return [x for x in rounds if x[1] is not None and x[1] < a.quiet_threshold]

    t_rounds = time.perf_counter()
    for attempt in range(3 * a.rounds):
        k_more = kiln_ok and len(quiet(k_rounds)) < a.rounds
        o_more = ort_w is not None and len(quiet(o_rounds)) < a.rounds
        if attempt >= a.rounds and (not (k_more or o_more) or not a.quiet_wait or (
                a.config_seconds and
                time.perf_counter() - t_rounds > a.config_seconds)):
            break
        msg = []
        if kiln_ok and (k_more or attempt < a.rounds):
            if a.quiet_wait:
                wait_for_quiet(a.quiet_wait, a.quiet_threshold, log)
            argv = run_base + ["--benchmark", "--warmup", str(a.warmup),
                               "--iterations", str(k_iters)]
            b0 = machine_busy_seconds()
            k = run_proc(argv, os.path.join(wd, tag + ".bench"), a.run_timeout)
            sh = others_share(b0, k.wall_s, k.cpu_s)
            m = re.search(r"p50 ([0-9.]+) ms", k.out)
            if k.rc != 0 or not m:
                r["kiln_error"] = first_error(k, "kiln-run --benchmark")
                r["kiln_stage"] = "benchmark"
                r["kiln_error_cmd"] = cmdline(argv)
                kiln_ok = False
                log("  kiln-run --benchmark FAILED: %s" % r["kiln_error"])
            else:
                k_rounds.append((float(m.group(1)), sh))
                k_rss = max(k_rss, k.peak_rss)
                msg.append("Kiln p50 %.3f ms (others %s)" % (
                    k_rounds[-1][0], "-" if sh is None else "%.0f%%" % (100 * sh)))
        if ort_w and (o_more or attempt < a.rounds):
            if a.quiet_wait:
                wait_for_quiet(a.quiet_wait, a.quiet_threshold, log)
            b0, t = machine_busy_seconds(), time.perf_counter()
            ans = ort_w.ask(cmd="time", warmup=a.warmup, iterations=o_iters)
            sh = others_share(b0, time.perf_counter() - t, ans.get("cpu_s", 0.0))
            o_rounds.append((ans["p50_ms"], sh))
            msg.append("ORT p50 %.3f ms (others %s)" % (
                ans["p50_ms"], "-" if sh is None else "%.0f%%" % (100 * sh)))
        log("  round %d: %s" % (attempt + 1, ", ".join(msg)))

    def summarize(rounds, key):
        if not rounds:
            return
        q = quiet(rounds)
        use = q or rounds
        r[key + "_ms"] = float(np.median([x[0] for x in use]))
        r[key + "_rounds"] = rounds
        r[key + "_quiet_rounds"] = len(q)
        r[key + "_best_ms"] = min(x[0] for x in rounds)

    r["kiln_iterations"], r["ort_iterations"] = k_iters, o_iters
    if kiln_ok:
        summarize(k_rounds, "kiln")
        r["kiln_rss"] = k_rss
    if ort_w:
        summarize(o_rounds, "ort")
        bye = ort_w.close()
        r["ort_rss"] = bye["peak_rss"]
        r["ort_base_rss"] = bye["base_rss"]
    shares = [x[1] for x in k_rounds + o_rounds if x[1] is not None]
    r["others_cpu"] = max(shares) if shares else None
    if "kiln_ms" in r and "ort_ms" in r:
        r["ratio"] = r["kiln_ms"] / r["ort_ms"]
        # The fastest round of each engine: less sensitive to other load.
        r["ratio_best"] = r["kiln_best_ms"] / r["ort_best_ms"]
    r["loadavg_end"] = os.getloadavg()[0]
    return r


# --------------------------------------------------------------------------
# Reporting.
# --------------------------------------------------------------------------

def fmt(v, spec, scale=1.0):
    return "-" if v is None else spec % (v / scale)


def table(results):
    builds = {r.get("kiln_build") for r in results}
    several = len(builds) > 1
    head = ("| model | batch | Kiln p50 (ms) | ORT p50 (ms) | Kiln/ORT latency "
            "| Kiln samples/s | ORT samples/s | Kiln arena (MiB) "
            "| Kiln peak RSS (MiB) | ORT peak RSS (MiB) | Kiln/ORT RSS "
            "| Kiln compile (s) | outputs match ORT | quiet rounds Kiln/ORT |")
    if several:
        head += " Kiln build |"
    rows = [head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    for r in results:
        b = r["batch"]
        k, o = r.get("kiln_ms"), r.get("ort_ms")
        if "kiln_error" in r:
            stage = r.get("kiln_stage", "?")
            kiln_cell = "**fails (%s)**" % stage
            match = "-" if stage == "compile" else r.get("match", "-")
        else:
            kiln_cell = fmt(k, "%.2f")
            match = r.get("match", "-")
            if match == "pass" and r.get("range_rel_err") is not None:
                match = "pass (%.0e)" % r["range_rel_err"]
            if match.startswith("pass") and 0.0 in r.get("ort_max_abs", []):
                match += ", an output is all zeros"
        rss_ratio = (r["kiln_rss"] / r["ort_rss"]
                     if r.get("kiln_rss") and r.get("ort_rss") else None)
        rows.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], b, kiln_cell,
            fmt(o, "%.2f") if "ort_error" not in r else "fails",
            fmt(r.get("ratio"), "%.2f"),
            fmt(b * 1e3 / k if k else None, "%.1f"),
            fmt(b * 1e3 / o if o else None, "%.1f"),
            fmt(r.get("arena_bytes"), "%.1f", MiB),
            fmt(r.get("kiln_rss"), "%.0f", MiB),
            fmt(r.get("ort_rss"), "%.0f", MiB),
            fmt(rss_ratio, "%.2f"),
            fmt(r.get("compile_s"), "%.1f" if r.get("kiln_stage") != "compile"
                else "(fails after %.1f)"),
            match,
            "%s/%s" % (r.get("kiln_quiet_rounds", "-"), r.get("ort_quiet_rounds", "-")))
            + (" %s |" % (r.get("kiln_build") or "-") if several else ""))
    return "\n".join(rows)


def failures(results, show=lambda s: s):
    out = []
    for r in results:
        what = r.get("file") or "%s, batch %d" % (r["model"], r["batch"])
        if "kiln_error" in r:
            out.append("- **%s** (%s): `%s`\n\n  ```sh\n  %s\n  ```" % (
                what, r.get("kiln_stage"), show(r["kiln_error"]),
                show(r.get("kiln_error_cmd", r.get("compile_cmd")))))
        elif r.get("match") == "FAIL":
            out.append("- **%s** (wrong outputs): `%s`\n\n  ```sh\n  %s\n  ```" % (
                what, show(r["mismatch"]), show(r.get("check_cmd"))))
        if "ort_error" in r:
            out.append("- **%s** (ONNX Runtime): `%s`" % (what, r["ort_error"]))
    return "\n".join(out) if out else "None."


def zoo_table(results):
    """The --zoo report: one row a file, then the geometric mean and the
    worst of the Kiln/ORT latency ratios."""
    head = ("| model | exporter | compile (s) | match | Kiln p50 (ms) | ORT p50 (ms) "
            "| Kiln/ORT | Kiln peak RSS (MiB) | ORT peak RSS (MiB) |")
    rows = [head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    for r in results:
        exp = r.get("exporter", "-") + ("_" + r["variant"] if r.get("variant") else "")
        if r.get("kiln_stage") == "compile":
            match = "compile error: " + r["kiln_error"]
        elif "kiln_error" in r:
            match = "%s error: %s" % (r.get("kiln_stage"), r["kiln_error"])
        elif r.get("match") == "pass":
            match = "yes (%.1e)" % (r.get("max_abs_err") or 0.0)
        elif r.get("match") == "FAIL":
            match = "NO (max err %s, %s of range)" % (
                fmt(r.get("max_abs_err"), "%.2g"), fmt(r.get("range_rel_err"), "%.2g"))
            if r.get("max_abs_err") is None:
                match = "NO: " + r.get("mismatch", "")
        else:
            match = r.get("match") or ("ORT: " + r["ort_error"] if "ort_error" in r
                                       else "-")
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], exp,
            fmt(r.get("compile_s"), "%.1f"), match.replace("|", "/"),
            fmt(r.get("kiln_ms"), "%.3f"),
            fmt(r.get("ort_ms"), "%.3f") if "ort_error" not in r else "fails",
            fmt(r.get("ratio"), "%.2f"),
            fmt(r.get("kiln_rss"), "%.0f", MiB), fmt(r.get("ort_rss"), "%.0f", MiB)))
    ratios = [(r["ratio"], r.get("file", r["model"])) for r in results if r.get("ratio")]
    ok = sum(1 for r in results if r.get("match") == "pass")
    comp = sum(1 for r in results if r.get("compile_s") is not None
               and r.get("kiln_stage") != "compile")
    rows.append("")
    rows.append("%d files: %d compiled, %d match ONNX Runtime." % (len(results), comp, ok))
    if ratios:
        gm = float(np.exp(np.mean(np.log([x for x, _ in ratios]))))
        worst = max(ratios)
        rows.append("Kiln/ORT latency over %d timed files: geometric mean %.2f, "
                    "worst %.2f (%s)." % (len(ratios), gm, worst[0], worst[1]))
    return "\n".join(rows)


def run_zoo(a, p, log):
    """--zoo DIR: every exported file of DIR/manifest.json (bench/zoo/zoo.py)."""
    with open(os.path.join(a.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    models = set(a.models.split(",")) if a.models else None
    exporters = set(a.exporters.split(",")) if a.exporters else None
    todo, skipped = [], []
    for e in manifest["files"]:
        if models and e["model"] not in models:
            continue
        if exporters and e["exporter"] not in exporters:
            continue
        if e.get("variant") == "novi" and a.no_novi:
            continue
        if e.get("status") != "ok":
            skipped.append("%s: not exported (%s)" % (e["file"], e.get("error", "")))
        elif e.get("identical_to"):
            skipped.append("%s: identical to %s" % (e["file"], e["identical_to"]))
        else:
            todo.append(e)
    if models and not any(e["model"] in models for e in manifest["files"]):
        p.error("no model %s in %s" % (a.models, a.zoo))
    results = []
    json_path = os.path.join(a.work_dir, "results.json")
    t0 = time.perf_counter()
    for i, e in enumerate(todo):
        batch = e["inputs"][0]["shape"][0] if e["inputs"] and e["inputs"][0]["shape"] else 1
        log("%s (%d/%d)" % (e["file"], i + 1, len(todo)))
        try:
            r = bench_one(a, e["model"], batch, log, zoo=e)
        except Exception as ex:  # keep going with the other files
            r = {"model": e["model"], "batch": batch, "threads": a.threads,
                 "file": e["file"], "exporter": e["exporter"],
                 "variant": e.get("variant", ""),
                 "ort_error": "%s: %s" % (type(ex).__name__, ex)}
            log("  FAILED: %s" % r["ort_error"])
        results.append(r)
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1)
    total = time.perf_counter() - t0
    with open(json_path, "w") as f:
        json.dump({"results": results, "total_s": total, "argv": sys.argv[1:],
                   "skipped": skipped}, f, indent=1)
    report = zoo_table(results)
    if skipped:
        report += "\n\nNot run:\n" + "\n".join("- " + x for x in skipped)
    report += "\n\nKiln failures:\n" + failures(results)
    with open(os.path.join(a.work_dir, "zoo.md"), "w") as f:
        f.write("# Kiln on the model zoo (%s)\n\n%s\n" % (rel(a.zoo), report))
    print()
    print(report)
    print("\n%d files in %.0f s; numbers in %s" % (len(results), total, rel(json_path)))
    return 0


def machine():
    name = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d cores (os.cpu_count), %s" % (name, os.cpu_count(), platform.platform())


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        return rev or "unknown"
    except OSError:
        return "unknown"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    labels = ["%s\nbatch %d" % (r["model"], r["batch"]) for r in results]
    ratios = [r.get("ratio") for r in results]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(results) + 2), 4.5))
    xs = list(range(len(results)))
    got = [v for v in ratios if v] or [1.0]
    lo, hi = min(got + [1.0]) / 1.6, max(got + [1.0]) * 1.6
    for x, v in zip(xs, ratios):
        if v:
            # Bars grow from 1 (parity): up when Kiln is slower, down when faster.
            ax.bar(x, v - 1, bottom=1, color="#c0504d" if v > 1 else "#4f9a57")
            ax.annotate("%.2f" % v, (x, v), ha="center",
                        va="bottom" if v > 1 else "top", fontsize=8)
        else:
            ax.annotate("Kiln\nfails", (x, 1), ha="center", va="center",
                        fontsize=8, color="gray")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_ylabel("Kiln p50 / ONNX Runtime p50 (lower is better)")
    ax.set_title("Kiln vs ONNX Runtime CPU latency, %d threads" % results[0]["threads"])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_docs(a, results, total_s, run_argvs, redone=()):
    import onnxruntime
    png = os.path.splitext(a.docs)[0] + ".png"
    plot(results, png)
    # The docs name the tools as built (build/bin), whichever copies ran.
    def command(run_argv):
        argv, skip = [], False
        for x in run_argv:
            if skip:
                skip = False
            elif x in ("--kiln-compile", "--kiln-run"):
                skip = True
            elif x == "--write-docs" or x.startswith(("--kiln-compile=",
                                                       "--kiln-run=")):
                pass
            else:
                argv.append(x)
        return "python3 bench/run.py " + " ".join(shlex.quote(x) for x in argv)

    cmd = command(run_argvs[0]) + " --write-docs"
    if len(run_argvs) > 1:
        def work_dir(v):
            for i, x in enumerate(v):
                if x == "--work-dir" and i + 1 < len(v):
                    return rel(v[i + 1])
                if x.startswith("--work-dir="):
                    return rel(x.split("=", 1)[1])
            return "build/bench-run"

        cmd = "\n".join(
            [command(v) for v in run_argvs] +
            ["# the report merges the runs: a later run's row replaces an "
             "earlier one when it has more quiet rounds",
             "python3 bench/run.py --write-docs --from-json " + ",".join(
                 os.path.join(work_dir(v), "results.json") for v in run_argvs)])
    tools = {rel(a.kiln_compile): "build/bin/kiln-compile",
             rel(a.kiln_run): "build/bin/kiln-run", ROOT + "/": ""}

    def show(text):
        for k, v in tools.items():
            text = text.replace(k, v)
        # Runs merged with --from-json may have used other copies.
        return re.sub(r"(?<![\w/.-])/\S*/(kiln-compile|kiln-run)\b",
                      r"build/bin/\1", text)

    md = """# Performance against ONNX Runtime

Kiln against ONNX Runtime %(ort)s (CPU execution provider) on standard
models, as measured by `bench/run.py` on %(date)s with Kiln %(rev)s.

- **Machine:** %(machine)s.
- **Threads:** %(threads)d (Kiln: `kiln-run --threads %(threads)d`, i.e.
  `OMP_NUM_THREADS`; ONNX Runtime: `intra_op_num_threads=%(threads)d`,
  `inter_op_num_threads=1`, default graph optimizations).
- **Models:** exported by `bench/models/export.py` with PyTorch's
  TorchScript-based exporter at opset 18, random weights
  (`torch.manual_seed(0)`), symbolic batch; BERT and GPT-2 at sequence
  length 128 (GPT-2 as a prefill, no KV cache).
- **Timing:** after a check run, rounds alternate Kiln (`kiln-run
  --benchmark --warmup %(warmup)d --iterations N`, its p50) and ONNX
  Runtime (%(warmup)d warm-up runs and N timed runs of `session.run` in one
  process, their median). N is %(iters)s. Throughput is
  batch / latency.
- **Memory:** *Kiln arena* is the peak of the memory plan (every
  intermediate tensor of one run, from `kiln-compile --report`). *Peak RSS*
  is the peak resident set of the process that ran the model: `kiln-run`
  (module code and weights, arena, inputs, outputs) and the ONNX Runtime
  worker (Python, numpy and onnxruntime themselves, about %(ortbase)s MiB
  before the session is created, plus the session, its weights and arenas).
- **Outputs:** Kiln's outputs are checked against ONNX Runtime's on the same
  fixed-seed inputs with `kiln-run --expected`, elementwise
  `|kiln - ort| <= atol + rtol * |ort|` with rtol=%(rtol)g, atol=%(atol)g;
  and, because random-weight models can have outputs far below atol (the
  CNNs' logits are around 1e-9), each output's largest absolute error must
  also be at most rtol times its largest |ORT value|. The table gives that
  range-relative error in parentheses.
- **Load:** this machine is shared. For every round the script measures
  the share of the %(ncpu)d cores that other processes used meanwhile
  (`/proc/stat` busy time less the timed process's own CPU time); a round
  is *quiet* when that share is under %(thr).0f%%. %(quiet)s Each engine's
  latency is the median of its quiet rounds (of all its rounds when it had
  none); the last column counts them. Other load slows both engines, and
  ONNX Runtime's spinning thread pool much more than Kiln's OpenMP loops,
  so rows without quiet rounds are unreliable.
- **Compile:** wall time of `kiln-compile --report` (default `-O3`, one
  process).

Reproduce%(took)s:%(redone)s

```sh
pip install -r bench/requirements.txt
python3 bench/models/export.py            # writes build/bench-models/*.onnx
%(cmd)s
```

## Results

%(table)s

![Kiln / ONNX Runtime latency ratio](%(png)s)

## Kiln failures

Each with its first error line and the command that reproduces it (inputs
and ORT reference outputs are written by `bench/run.py` into
`%(workdir)s`).

%(failures)s
""" % {
        "ort": onnxruntime.__version__,
        "date": datetime.date.today().isoformat(),
        "rev": a.kiln_rev or ("at commit `%s`" % git_rev()),
        "machine": machine(),
        "threads": a.threads,
        "rounds": a.rounds,
        "warmup": a.warmup,
        "iters": ("%d" % a.iterations if not a.round_seconds else
                  "at most %d, fewer (at least %d) where a round would take "
                  "more than about %g s" % (a.iterations, a.min_iterations,
                                            a.round_seconds)),
        "ortbase": "%.0f" % (np.median([r["ort_base_rss"] for r in results
                                        if r.get("ort_base_rss")] or [0]) / MiB),
        "rtol": a.rtol, "atol": a.atol,
        "thr": 100 * a.quiet_threshold,
        "quiet": ("Before each round the script waited (up to %g s) for the "
                  "machine to be quiet, and ran up to %d rounds per engine to "
                  "get %d quiet ones%s." % (
                      a.quiet_wait, 3 * a.rounds, a.rounds,
                      " while a row's rounds took under %g s" % a.config_seconds
                      if a.config_seconds else "")
                  if a.quiet_wait else ""),
        "ncpu": os.cpu_count(),
        "took": (" (the whole run took %.0f s)" % total_s) if total_s else "",
        "cmd": cmd,
        "redone": ("\n\nThe rows %s come from the second command, "
                   "which measured them again when the machine was quieter." % ", ".join(
                       "%s batch %d" % k for k in redone)) if redone else "",
        "table": table(results),
        "png": os.path.basename(png),
        "workdir": rel(a.work_dir),
        "failures": failures(results, show),
    }
    with open(a.docs, "w") as f:
        f.write(md)
    print("wrote %s and %s" % (a.docs, png))


def set_defaults(a):
    """The defaults that depend on --zoo."""
    if a.work_dir is None:
        a.work_dir = os.path.join(ROOT, "build", "bench-zoo" if a.zoo else "bench-run")
    if a.compile_timeout is None:
        a.compile_timeout = 300 if a.zoo else 3600
    if a.ort_reference_opt is None and a.zoo:
        a.ort_reference_opt = "basic"
    return a


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ort-worker":
        ort_worker(sys.argv[2], int(sys.argv[3]), sys.argv[5:], sys.argv[4])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models",
                   help="comma-separated, from: " + ",".join(export.MODELS) +
                   " (default: all); with --zoo, zoo model names")
    p.add_argument("--zoo", metavar="DIR",
                   help="benchmark the files of a directory written by "
                   "bench/zoo/zoo.py (its manifest.json) instead")
    p.add_argument("--exporters",
                   help="with --zoo: only these exporters (torchscript,dynamo,onnx)")
    p.add_argument("--no-novi", action="store_true",
                   help="with --zoo: skip the _novi files")
    p.add_argument("--ort-reference-opt", choices=sorted(ORT_LEVELS),
                   help="ONNX Runtime's graph optimizations for the reference "
                   "outputs (default: basic with --zoo, else all, the timed "
                   "session's)")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iterations", type=int, default=10,
                   help="timed runs per round and engine")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed runs before each round")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating Kiln / ORT rounds")
    p.add_argument("--round-seconds", type=float, default=0,
                   help="cap the iterations so a round takes about this long "
                        "(from the first run's time); 0: no cap")
    p.add_argument("--min-iterations", type=int, default=3)
    p.add_argument("--quiet-wait", type=float, default=0,
                   help="before each round, wait up to this many seconds for "
                        "other processes to leave the CPU")
    p.add_argument("--config-seconds", type=float, default=0,
                   help="no extra rounds (beyond --rounds) for a model and "
                        "batch once its rounds took this long; 0: no limit")
    p.add_argument("--quiet-threshold", type=float, default=0.1,
                   help="share of the cores that counts as quiet")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--models-dir", default=os.path.join(ROOT, "build", "bench-models"))
    p.add_argument("--work-dir",
                   help="default build/bench-run (build/bench-zoo with --zoo)")
    p.add_argument("--kiln-compile", default=os.path.join(ROOT, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(ROOT, "build", "bin", "kiln-run"))
    p.add_argument("--compile-timeout", type=float,
                   help="seconds (default 3600; 300 with --zoo)")
    p.add_argument("--compile-mem-limit", type=float, default=16,
                   help="address-space limit of kiln-compile in GiB")
    p.add_argument("--run-timeout", type=float, default=1800)
    p.add_argument("--reuse-kmod", action="store_true",
                   help="reuse modules (and their compile numbers) from an "
                        "earlier run in the work dir")
    p.add_argument("--write-docs", action="store_true",
                   help="write docs/performance.md and its plot")
    p.add_argument("--docs", default=os.path.join(ROOT, "docs", "performance.md"))
    p.add_argument("--kiln-rev", help="how the docs name the Kiln build "
                   "measured (default: the checkout's HEAD commit)")
    p.add_argument("--from-json", metavar="RESULTS",
                   help="run nothing: print (and with --write-docs write) the "
                        "report of an earlier run's results.json")
    a = set_defaults(p.parse_args())
    if a.zoo:
        os.makedirs(a.work_dir, exist_ok=True)
        t0 = time.perf_counter()

        def log(msg):
            print("[%6.0f s] %s" % (time.perf_counter() - t0, msg), flush=True)
        return run_zoo(a, p, log)
    if a.from_json:
        # Several results.json, comma-separated: a later run's row replaces
        # an earlier run's row of the same model and batch when it has Kiln
        # numbers the earlier row lacks, or as many and more quiet rounds
        # (fewer disturbed by other load).
        def quality(r):
            q = [r.get("ort_quiet_rounds", 0)]
            if "kiln_error" not in r:
                q.append(r.get("kiln_quiet_rounds", 0))
            return ("kiln_ms" in r, min(q))

        # --kiln-rev A;B names the Kiln build of each file's rows that do not
        # name it themselves.
        revs = a.kiln_rev.split(";") if a.kiln_rev else []

        results, argvs, total, redone = [], [], 0.0, []
        for n, path in enumerate(a.from_json.split(",")):
            with open(path) as f:
                saved = json.load(f)
            if isinstance(saved, list):
                saved = {"results": saved}
            argvs.append(saved.get("argv", []))
            total = (total + saved["total_s"]) if total is not None and \
                saved.get("total_s") else None
            for r in saved["results"]:
                if revs and not r.get("kiln_build"):
                    r["kiln_build"] = revs[min(n, len(revs) - 1)]
                key = (r["model"], r["batch"])
                old = [i for i, x in enumerate(results)
                       if (x["model"], x["batch"]) == key]
                if old:
                    if quality(r) > quality(results[old[0]]):
                        results[old[0]] = r
                        redone.append(key)
                else:
                    results.append(r)
        print(table(results))
        print()
        print(failures(results))
        if a.write_docs:
            # The settings of the (first) run that made the results.
            builds = sorted({x.get("kiln_build") for x in results} - {None})
            r = set_defaults(p.parse_args(argvs[0] + ["--docs", a.docs]))
            r.kiln_rev = builds[0] if len(builds) == 1 else (
                "builds as named in the table's last column" if builds else None)
            write_docs(r, results, total, argvs, redone)
        return 0
    models = [m for m in (a.models or ",".join(export.MODELS)).split(",") if m]
    for m in models:
        if m not in export.MODELS:
            p.error("unknown model %s" % m)
    batches = [int(b) for b in a.batches.split(",") if b]
    os.makedirs(a.work_dir, exist_ok=True)
    missing = [m for m in models
               if not os.path.exists(os.path.join(a.models_dir, m + ".onnx"))]
    if missing:
        p.error("missing %s in %s: run bench/models/export.py first" %
                (",".join(missing), a.models_dir))

    t0 = time.perf_counter()
    results = []
    json_path = os.path.join(a.work_dir, "results.json")

    def log(msg):
        print("[%6.0f s] %s" % (time.perf_counter() - t0, msg), flush=True)

    for m in models:
        for b in batches:
            log("%s batch %d" % (m, b))
            try:
                r = bench_one(a, m, b, log)
            except Exception as e:  # keep going with the other models
                r = {"model": m, "batch": b, "threads": a.threads,
                     "ort_error": "%s: %s" % (type(e).__name__, e)}
                log("  FAILED: %s" % r["ort_error"])
            results.append(r)
            with open(json_path, "w") as f:
                json.dump(results, f, indent=1)
    total = time.perf_counter() - t0
    with open(json_path, "w") as f:
        json.dump({"results": results, "total_s": total,
                   "argv": sys.argv[1:]}, f, indent=1)
    print()
    print(table(results))
    print()
    print("Kiln failures:")
    print(failures(results))
    print("\n%d configurations in %.0f s; numbers in %s" % (len(results), total, rel(json_path)))
    if a.write_docs:
        write_docs(a, results, total, [sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
