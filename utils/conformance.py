#!/usr/bin/env python3
"""Compiles and runs the ONNX backend tests on Kiln's CPU or GPU path.

For each test (a model.onnx and test_data_set_*/input_*.pb, output_*.pb) it
runs `kiln-compile --target=T` (cpu by default; giving inputs of symbolic
shape the shape of the first data set's tensors with --input-shape) and
`kiln-run --device=D` on every data set (D: cpu for the CPU target, the
kernel emulator for a GPU target unless --device says cuda), and
classifies the test: passed, wrong result, compile error, run error. With
--markdown it writes the per-test table (docs/conformance.md is made so);
with --passing-list it writes the names of passing tests; with --check LIST
it runs only the tests named in LIST and fails if any of them does not pass
(the test suite runs it that way, so a regression fails CI).

  utils/conformance.py --bin build/bin [--data DIR] [--sets node,simple]
      [--target cpu|sm_90] [--device cpu|emulator|cuda]
      [--markdown docs/conformance.md] [--passing-list FILE] [--check FILE]
      [--compile-only] [--compile-flag=--max-spill-bytes=0 ...]

--compile-only stops after kiln-compile (a test "passes" when its module is
written: for a GPU target with ptxas at hand, every kernel assembled); each
--compile-flag is passed to kiln-compile, so --compile-only
--compile-flag=--max-spill-bytes=0 checks that no kernel spills registers.

With --section KEY (a GPU target implies --section DEVICE), --markdown FILE
gets the summary table in FILE's section between `<!-- KEY:begin -->` and
`<!-- KEY:end -->` (added if missing) and the per-test table goes to FILE
with `-KEY` before its extension; a run without a section rewrites FILE
and keeps its sections. --title names the run in the section.
"""

import argparse
import collections
import concurrent.futures
import datetime
import glob
import os
import re
import subprocess
import sys
import tempfile

# ONNX's backend tests compare with rtol=1e-3, atol=1e-7; Kiln uses the same
# rtol and an atol of 1e-5 for float32 sums whose exact value is near 0.
RTOL, ATOL = "1e-3", "1e-5"


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else "no message"


def read_proto(proto, path):
    with open(path, "rb") as fh:
        proto.ParseFromString(fh.read())
    return proto


def sequence_flag(name, seq):
    """--input-sequence for a SequenceProto's elements' shapes."""
    return "--input-sequence=%s:%s" % (
        name, ",".join("x".join(str(d) for d in t.dims) if t.dims else "scalar"
                       for t in seq.tensor_values))


def input_shapes(test_dir):
    """--input-shape flags giving each dynamic graph input the shape of the
    first data set's tensor (--input-sequence for a sequence input: its
    elements' shapes; for an optional input, --input-absent when it holds
    no value), as a user compiles for the shapes they run."""
    try:
        import onnx
    except ImportError:
        return []
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    names = [i for i in model.graph.input if i.name not in inits]
    flags = []
    ds = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not ds:
        return []
    for k, vi in enumerate(names):
        f = os.path.join(ds[0], "input_%d.pb" % k)
        typ = vi.type
        composite = typ.HasField("optional_type") or typ.HasField("sequence_type")
        if composite and not os.path.exists(f):
            continue
        if typ.HasField("optional_type"):
            # An optional input: absent or present as in the data, as a
            # user compiles for what they run.
            opt = read_proto(onnx.OptionalProto(), f)
            if opt.HasField("sequence_value"):
                flags.append(sequence_flag(vi.name, opt.sequence_value))
            elif opt.HasField("tensor_value"):
                dims = typ.optional_type.elem_type.tensor_type.shape.dim
                if not all(d.HasField("dim_value") for d in dims):
                    flags.append("--input-shape=%s:%s" % (
                        vi.name, "x".join(str(d) for d in opt.tensor_value.dims)))
            else:
                flags.append("--input-absent=%s" % vi.name)
            continue
        if typ.HasField("sequence_type"):
            # A sequence input: its elements' shapes, as a user compiles
            # for the sequences they run.
            flags.append(sequence_flag(vi.name, read_proto(onnx.SequenceProto(), f)))
            continue
        if not vi.type.HasField("tensor_type"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            continue
        f = os.path.join(ds[0], "input_%d.pb" % k)
        if not os.path.exists(f):
            continue
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        flags.append("--input-shape=%s:%s" % (vi.name, "x".join(str(d) for d in t.dims)))
    return flags


# Tests whose expected outputs no correct implementation reproduces, with
# the reason. A failure of one of these is reported as "not comparable"
# (with the reason and what happened), never hidden among the passes.
NOT_COMPARABLE = {
    "test_training_dropout": "the kept elements come from numpy's random generator",
    "test_training_dropout_default": "the kept elements come from numpy's random generator",
    "test_training_dropout_default_mask": "the kept elements come from numpy's random generator",
    "test_training_dropout_mask": "the kept elements come from numpy's random generator",
    "test_cast_FLOAT_to_BFLOAT16": "the data (onnx 1.12) truncates to bfloat16; the Cast spec "
                                   "and Kiln round to nearest even",
    "test_castlike_BFLOAT16_to_FLOAT": "the 'like' input's data has shape [1], the model [3,4]",
    "test_castlike_BFLOAT16_to_FLOAT_expanded": "the 'like' input's data has shape [1], the model [3,4]",
    "test_castlike_FLOAT_to_BFLOAT16": "the 'like' input's data has shape [1], the model [3,4]",
    "test_castlike_FLOAT_to_BFLOAT16_expanded": "the 'like' input's data has shape [1], the model [3,4]",
    "test_adam_multiple": "the outputs were computed with epsilon 1e-2, which the node lacks "
                          "(so it has the default 1e-6)",
}


DEFAULT_DATA = "/usr/share/libonnx-testdata/data"


def run_test(bin_dir, test_dir, timeout, target="cpu", device="cpu", flags=(),
             compile_only=False, kmod=None):
    status, reason = run_test_once(bin_dir, test_dir, timeout, target, device, flags,
                                   compile_only, kmod)
    why = NOT_COMPARABLE.get(os.path.basename(test_dir))
    if why and status in ("wrong result", "run error"):
        return "not comparable", "%s (%s: %s)" % (why, status, reason)
    return status, reason


def run_test_once(bin_dir, test_dir, timeout, target, device, flags, compile_only,
                  prebuilt=None):
    """Compiles and runs one test. With `prebuilt` (--kmod-dir), a
    --compile-only run writes the module there and a full run takes it from
    there instead of compiling."""
    model = os.path.join(test_dir, "model.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        kmod = prebuilt or os.path.join(tmp, "m.kmod")
        if prebuilt and not compile_only:
            if not os.path.exists(prebuilt):
                return "compile error", "no prebuilt module %s" % prebuilt
        else:
            if prebuilt:
                os.makedirs(os.path.dirname(prebuilt), exist_ok=True)
            try:
                p = subprocess.run([os.path.join(bin_dir, "kiln-compile"), model,
                                    "-o", kmod, "--target=" + target] + list(flags) +
                                   input_shapes(test_dir),
                                   capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "compile error", "compile timed out after %ds" % timeout
            if p.returncode != 0:
                if p.returncode < 0 or "Stack dump" in p.stderr or "LLVM ERROR" in p.stderr:
                    return "crash", "kiln-compile: " + first_error(p.stderr)
                return "compile error", first_error(p.stderr)
        if compile_only:
            return "passed", ""
        sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not sets:
            return "run error", "no test data"
        for ds in sets:
            ins = sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                         key=lambda f: int(re.findall(r"\d+", os.path.basename(f))[0]))
            outs = sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                          key=lambda f: int(re.findall(r"\d+", os.path.basename(f))[0]))
            cmd = [os.path.join(bin_dir, "kiln-run"), kmod, "--device", device,
                   "--rtol", RTOL, "--atol", ATOL]
            for f in ins:
                cmd += ["--input", f]
            for f in outs:
                cmd += ["--expected", f]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "run error", "run timed out after %ds" % timeout
            if r.returncode < 0:
                return "crash", "kiln-run died with signal %d" % -r.returncode
            if "MISMATCH" in r.stdout:
                line = [l for l in r.stdout.splitlines() if "MISMATCH" in l][0]
                return "wrong result", line.split("MISMATCH:", 1)[1].strip()[:200]
            if r.returncode != 0:
                return "run error", first_error(r.stderr)
    return "passed", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--sets", default="node,simple,pytorch-converted,pytorch-operator")
    ap.add_argument("--markdown")
    ap.add_argument("--passing-list")
    ap.add_argument("--check")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", help="run only the tests whose name matches this regex")
    ap.add_argument("--sample", type=int, default=1,
                    help="run every Nth test (in name order) of those selected")
    ap.add_argument("--sample-offset", type=int, default=0,
                    help="with --sample N: start at the Kth test (0 to N-1)")
    ap.add_argument("--skip-listed", action="append", default=[],
                    help="skip the tests this list (one SET/TEST per line, as --check "
                         "reads) names: another sweep covers them (repeatable)")
    ap.add_argument("--target", default="cpu", help="kiln-compile --target (cpu, sm_80, sm_90)")
    ap.add_argument("--device", help="kiln-run --device (default: cpu for the CPU target, "
                                     "emulator for a GPU target)")
    ap.add_argument("--compile-only", action="store_true",
                    help="only compile each test (passed: the module was written)")
    ap.add_argument("--compile-flag", action="append", default=[],
                    help="pass this flag to kiln-compile (repeatable)")
    ap.add_argument("--kmod-dir", help="with --compile-only, keep each test's module as "
                                       "DIR/SET/TEST.kmod; otherwise run those modules "
                                       "instead of compiling (cross-compiling for a machine "
                                       "without MLIR)")
    ap.add_argument("--section", help="write a section of --markdown (see above)")
    ap.add_argument("--title", help="what the run is, for its section's heading")
    args = ap.parse_args()
    gpu = args.target != "cpu"
    device = args.device or ("emulator" if gpu else "cpu")
    where = ("the CPU path" if not gpu else
             "the GPU path (%s) on the %s" % (args.target, "kernel emulator" if device == "emulator"
                                              else device))
    compile_cmd = "kiln-compile --target=%s%s" % (
        args.target, "".join(" " + f for f in args.compile_flag))
    if args.compile_only:
        where = compile_cmd + " (compiled only)"

    tests = []
    for s in args.sets.split(","):
        d = os.path.join(args.data, s)
        for t in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if os.path.exists(os.path.join(d, t, "model.onnx")):
                tests.append((s, t, os.path.join(d, t)))
    if args.check:
        wanted = set(l.strip() for l in open(args.check) if l.strip() and not l.startswith("#"))
        tests = [x for x in tests if "%s/%s" % (x[0], x[1]) in wanted]
        missing = wanted - set("%s/%s" % (x[0], x[1]) for x in tests)
        for m in sorted(missing):
            print("MISSING %s" % m)
    if args.filter:
        tests = [x for x in tests if re.search(args.filter, x[1])]
    skipped = set()
    for path in args.skip_listed:
        skipped |= set(l.strip() for l in open(path) if l.strip() and not l.startswith("#"))
    tests = [x for x in tests if "%s/%s" % (x[0], x[1]) not in skipped]
    tests = tests[args.sample_offset::max(args.sample, 1)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(run_test, args.bin, d, args.timeout, args.target, device,
                          args.compile_flag, args.compile_only,
                          os.path.join(args.kmod_dir, s, t + ".kmod") if args.kmod_dir
                          else None): (s, t)
                for s, t, d in tests}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()

    counts = collections.defaultdict(collections.Counter)
    for (s, t), (st, _) in results.items():
        counts[s][st] += 1
    for s in args.sets.split(","):
        c = counts[s]
        print("%-18s passed %4d  wrong %3d  compile error %4d  run error %3d  crash %d  "
              "not comparable %d  (of %d)" % (
                  s, c["passed"], c["wrong result"], c["compile error"], c["run error"],
                  c["crash"], c["not comparable"], sum(c.values())))
    failing = []
    for (s, t), (st, m) in sorted(results.items()):
        if st != "passed" and (args.check or args.filter or args.sample > 1
                               or st == "crash"):
            failing.append((s, t, st, m))
            print("FAIL %s/%s: %s: %s" % (s, t, st, m))

    if args.passing_list:
        with open(args.passing_list, "w") as f:
            f.write("# Tests that pass on %s; generated by utils/conformance.py.\n" % where)
            for (s, t), (st, _) in sorted(results.items()):
                if st == "passed":
                    f.write("%s/%s\n" % (s, t))
    if args.markdown:
        summary = ("| set | tests | passed | wrong result | compile error | run error | crash "
                   "| not comparable |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
        for s in args.sets.split(","):
            c = counts[s]
            summary += "| %s | %d | %d | %d | %d | %d | %d | %d |\n" % (
                s, sum(c.values()), c["passed"], c["wrong result"], c["compile error"],
                c["run error"], c["crash"], c["not comparable"])
        source = ("Debian's `libonnx-testdata`" if args.data == DEFAULT_DATA else
                  "`%s`" % os.path.relpath(args.data))
        intro = ("Generated by `utils/conformance.py` on %s: every ONNX backend test of "
                 "%s compiled with `kiln-compile --target=%s` "
                 "and run with `kiln-run --device=%s` on each of its data sets, outputs "
                 "compared elementwise with rtol=%s, atol=%s." % (
                     datetime.date.today(), source, args.target, device, RTOL, ATOL))
        if args.compile_only:
            intro = ("Generated by `utils/conformance.py --compile-only` on %s: every ONNX "
                     "backend test of %s compiled with `%s`; nothing was run "
                     "(\"passed\": the module was written)." % (
                         datetime.date.today(), source, compile_cmd))
        key = args.section or (device if gpu else None)
        old = open(args.markdown).read() if os.path.exists(args.markdown) else ""
        sections = re.findall(r"<!-- ([\w.-]+):begin -->.*?<!-- \1:end -->", old, re.S)
        kept = [re.search(r"<!-- %s:begin -->.*?<!-- %s:end -->" % (re.escape(k), re.escape(k)),
                          old, re.S).group(0) for k in sections]
        per_test = args.markdown
        if key:
            root, ext = os.path.splitext(args.markdown)
            per_test = "%s-%s%s" % (root, key, ext)
            title = args.title or where
            section = ("<!-- %s:begin -->\n## %s\n\n%s Per test: [%s](%s).\n\n%s<!-- %s:end -->" % (
                key, title[0].upper() + title[1:], intro, os.path.basename(per_test),
                os.path.basename(per_test), summary, key))
            mine = [k for k in kept if k.startswith("<!-- %s:begin -->" % key)]
            if mine:
                text = old.replace(mine[0], section)
            elif "\n## Every test" in old:
                i = old.index("\n## Every test")
                text = old[:i].rstrip("\n") + "\n\n" + section + "\n" + old[i:]
            else:
                text = old.rstrip("\n") + "\n\n" + section + "\n"
            with open(args.markdown, "w") as f:
                f.write(text)
            kept = []
        with open(per_test, "w") as f:
            f.write("# ONNX conformance on %s%s\n\n" % (
                where, " (%s)" % args.title if args.title and key else ""))
            f.write(intro + " \"Not comparable\": tests whose expected "
                    "outputs no correct implementation reproduces (random generators, data "
                    "that disagrees with its own model or with the current spec); the reason "
                    "column says why.\n\n")
            f.write(summary)
            for k in kept:
                f.write("\n" + k + "\n")
            f.write("\n## Every test\n\n| test | result | reason |\n|---|---|---|\n")
            for (s, t), (st, m) in sorted(results.items()):
                f.write("| %s/%s | %s | %s |\n" % (s, t, st, m.replace("|", "\\|")))
    return 1 if failing or (args.check and missing) else 0


if __name__ == "__main__":
    sys.exit(main())
