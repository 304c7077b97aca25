"""Kiln from Python: compile ONNX models and run them.

    import kiln, numpy as np
    m = kiln.compile("model.onnx", input_shapes={"input": (1, 3, 224, 224)})
    out = kiln.Session(m).run({"input": np.zeros((1, 3, 224, 224), np.float32)})

`compile` runs the kiln-compile shipped in this package (every
kiln-compile option is a keyword argument); `Session` runs a module with
the C++ runtime in this process, reading numpy arrays (or anything with
DLPack, such as torch CPU tensors) in place and writing outputs straight
into the arrays it returns. `kiln.ir` imports models to kiln IR and runs
pass pipelines for notebooks and pass debugging.

Thread safety: a `Module` is immutable and may be shared by any number of
threads and sessions. A `Session` runs one call at a time (it owns the
arena of intermediate tensors); calls from several threads on one session
are serialized by a lock, so for parallel runs give each thread its own
session. Runs release the GIL.
"""

import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections import namedtuple

import numpy as np

from . import _kiln
from ._kiln import KilnRuntimeError

__all__ = ["compile", "load", "Module", "Session", "TensorInfo", "CompileError",
           "KilnRuntimeError", "ir", "tool"]

# `batched`: dim 0 is a batch range's batch (`shape` holds its maximum);
# `length_dims`: the dims that are a length range's length (at its maximum).
TensorInfo = namedtuple("TensorInfo", "name dtype shape max_extent batched length_dims",
                        defaults=(False, ()))

# ONNX TensorProto data types as numpy dtypes (bfloat16 as its uint16 bits,
# the float8 formats 17-20 as their uint8 bits, (u)int4 and (u)int2 one value
# per byte).
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
           6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
           12: np.uint32, 13: np.uint64, 16: np.uint16, 17: np.uint8, 18: np.uint8,
           19: np.uint8, 20: np.uint8, 21: np.uint8, 22: np.int8, 23: np.uint8,
           25: np.uint8, 26: np.int8}
# (u)int4 and (u)int2: bits and signedness; the code leaves a byte's high
# bits unspecified, so outputs are read from the low bits.
_SUB_BYTE = {21: (4, False), 22: (4, True), 23: (4, False), 25: (2, False),
             26: (2, True)}


class CompileError(Exception):
    """kiln-compile (or kiln-opt) failed; `diagnostics` is its full error
    output (node, op, opset and reason), `command` what was run."""

    def __init__(self, diagnostics, command):
        super().__init__(diagnostics.strip() or "failed: " + " ".join(command))
        self.diagnostics = diagnostics
        self.command = command


def tool(name):
    """The path of a Kiln tool (kiln-compile, kiln-opt, kiln-run): the one
    shipped in this package, else $KILN_BIN_DIR's, else on PATH."""
    for d in (os.path.join(os.path.dirname(__file__), "bin"), os.environ.get("KILN_BIN_DIR")):
        if d and os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError("%s is not in the kiln package, $KILN_BIN_DIR or PATH" % name)
    return found


def _run_tool(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True)
    if p.returncode:
        raise CompileError(p.stderr.decode(errors="replace"), cmd)
    return p


class _ModelFile:
    """`model` (a path, ONNX bytes, or an onnx.ModelProto) as a file path."""

    def __init__(self, model):
        self.tmp = None
        if isinstance(model, (str, os.PathLike)):
            self.path = os.fspath(model)
            return
        if not isinstance(model, (bytes, bytearray)):
            if not hasattr(model, "SerializeToString"):
                raise TypeError("model must be a path, bytes or an onnx.ModelProto, not %s"
                                % type(model).__name__)
            model = model.SerializeToString()
        self.tmp = tempfile.TemporaryDirectory(prefix="kiln-")
        self.path = os.path.join(self.tmp.name, "model.onnx")
        with open(self.path, "wb") as f:
            f.write(model)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self.tmp:
            self.tmp.cleanup()


def _sequence_flags(input_sequences):
    # {"xs": [(5,), (3,)]}: each element's shape; [] for an empty sequence.
    return ["--input-sequence=%s:%s" % (
        name, ",".join("x".join(str(int(d)) for d in shape) for shape in shapes))
        for name, shapes in (input_sequences or {}).items()]


def _shape_flags(input_shapes):
    flags = []
    for name, shape in (input_shapes or {}).items():
        # A batch range is given as a string: ("1..32", 3, 224, 224).
        dims = "x".join(d if isinstance(d, str) else str(int(d)) for d in shape)
        flags.append("--input-shape=%s:%s" % (name, dims))
    return flags


def _option_flags(options):
    flags = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append(flag + "=false")
        elif value is None:
            continue
        elif isinstance(value, (list, tuple)):
            if key in ("load_pass_plugin", "load_dialect_plugin", "pipeline_after"):
                flags += ["%s=%s" % (flag, os.fspath(v)) for v in value]
            else:
                flags.append("%s=%s" % (flag, ",".join(str(v) for v in value)))
        else:
            flags.append("%s=%s" % (flag, os.fspath(value) if isinstance(value, os.PathLike)
                                    else value))
    return flags


def _parse_report(text):
    """kiln-compile --report's text as a dict."""
    report = {"text": text, "inputs": [], "outputs": [], "kernels": []}
    for line in text.splitlines():
        m = re.match(r"\s+(input|output)\s+(\S+): (\w+) \[([^\]]*)\]", line)
        if m:
            # A batch range's dim reads "1..32": its maximum, as the module has it.
            shape = [int(d.split("..")[-1]) for d in m.group(4).split("x") if d]
            report[m.group(1) + "s"].append(
                {"name": m.group(2), "dtype": m.group(3), "shape": shape})
            continue
        m = re.match(r"\s+memory plan: (\d+) intermediate buffers; arena \(peak\) (\d+) bytes.*"
                     r"without planning (\d+) bytes.*lower bound (\d+) bytes", line)
        if m:
            report["memory_plan"] = dict(zip(
                ("buffers", "arena_bytes", "unplanned_bytes", "lower_bound_bytes"),
                map(int, m.groups())))
            continue
        m = re.match(r"\s+code: (\d+) bytes", line)
        if m:
            report["code_bytes"] = int(m.group(1))
            continue
        m = re.match(r"\s+gpu: (\d+) kernels, (\d+) launches, (\d+) bytes of weights", line)
        if m:
            report["gpu"] = dict(zip(("kernels", "launches", "weight_bytes"), map(int, m.groups())))
            continue
        m = re.match(r"\s+kernel (\S+): (-?\d+) registers, (\d+) spill bytes", line)
        if m:
            report["kernels"].append({"name": m.group(1), "registers": int(m.group(2)),
                                      "spill_bytes": int(m.group(3))})
            continue
        m = re.match(r"\s+kernel (\S+): not assembled", line)
        if m:
            report["kernels"].append({"name": m.group(1)})
            continue
        m = re.match(r"\s+sparsity: (\d+) of (\d+) contractions run 2:4 sparse", line)
        if m:
            report["sparsity"] = {"sparse": int(m.group(1)), "contractions": int(m.group(2))}
    return report


_KINDS = {0: "sequence", 1: "optional_tensor", 2: "optional_sequence"}
Composite = namedtuple(
    "Composite", "name output dtype first length kind absent run_time_count")


def _expand_composites(module, inputs):
    """A dict of inputs by graph name with sequences as lists (and
    optionals as a value or None), as the module's tensors by name."""
    out = dict(inputs)
    for c in module.composites:
        if c.output or c.name not in out:
            continue
        value = out.pop(c.name)
        if c.absent:
            if value is not None:
                raise KilnRuntimeError("input '%s' was compiled absent "
                                       "(input_absent); pass None" % c.name)
            continue
        if value is None:
            raise KilnRuntimeError("input '%s' was compiled holding a value" % c.name)
        if c.kind == "optional_tensor":
            out[c.name] = value
            continue
        value = list(value)
        if len(value) != c.length:
            raise KilnRuntimeError(
                "input '%s' is a sequence of %d tensors in the module, got %d; "
                "compile for its length with input_sequences" % (
                    c.name, c.length, len(value)))
        for i, v in enumerate(value):
            out["%s[%d]" % (c.name, i)] = v
    return out


class Module:
    """A compiled module (a .kmod image): its signature, its report when
    compiled here, `save(path)`."""

    def __init__(self, data, report=None):
        self._bytes = bytes(data)
        self._module = _kiln.Module.from_bytes(self._bytes)
        self.report = report or {}

    @staticmethod
    def _info(rows):
        return [TensorInfo(n, np.dtype(_DTYPES.get(d, np.uint8)), tuple(s), e, b, tuple(l))
                for n, d, s, e, b, l in rows]

    @property
    def inputs(self):
        return self._info(self._module.inputs)

    @property
    def outputs(self):
        return self._info(self._module.outputs)

    @property
    def composites(self):
        """The graph's sequence and optional inputs and outputs, compiled
        for what they hold: a Composite each (kind "sequence",
        "optional_tensor" or "optional_sequence"; `length` tensors from
        `first` in `inputs` or `outputs`, named NAME[i] for a sequence).
        An output with `run_time_count` has at most `length` tensors; the
        output after them, NAME.length or NAME.present, says how many a run
        gave (an optional: 1 present, 0 absent)."""
        return [Composite(n, o, np.dtype(_DTYPES.get(d, np.uint8)), f, l, _KINDS[k], a, r)
                for n, o, d, f, l, k, a, r in self._module.composites]

    @property
    def graph_name(self):
        return self._module.graph_name

    @property
    def target(self):
        return self._module.target

    @property
    def arena_bytes(self):
        return self._module.arena_bytes

    @property
    def batch_range(self):
        """(min, max, opt) for a module compiled for a batch range
        (input_shapes={"x": ("1..32", 3, 224, 224)}), else None."""
        if not self._module.max_batch:
            return None
        return (self._module.min_batch, self._module.max_batch, self._module.opt_batch)

    @property
    def length_range(self):
        """(min, max, opt) for a module compiled for a length range
        (input_shapes={"ids": (1, "16..128")}), else None."""
        if not self._module.max_length:
            return None
        return (self._module.min_length, self._module.max_length, self._module.opt_length)

    def to_bytes(self):
        return self._bytes

    def save(self, path):
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "wb") as f:
            f.write(self._bytes)
        os.replace(tmp, path)

    def __repr__(self):
        return "kiln.Module(%r, target=%r, inputs=%s, outputs=%s)" % (
            self.graph_name, self.target,
            [(i.name, i.dtype.name, i.shape) for i in self.inputs],
            [(o.name, o.dtype.name, o.shape) for o in self.outputs])


def load(path):
    """A module from a .kmod file (a bad file raises KilnRuntimeError)."""
    with open(path, "rb") as f:
        return Module(f.read())


def compile(model, target="cpu", input_shapes=None, input_sequences=None, **options):
    """Compiles `model` (a path, ONNX bytes, or an onnx.ModelProto) for
    `target` (cpu, sm_80, sm_90, ...) with kiln-compile. `input_shapes`
    gives symbolic dims ({"input": (1, 3, 224, 224)}), `input_sequences`
    a sequence input's elements' shapes ({"xs": [(5,), (3,)]}),
    input_absent=["opt"] optional inputs compiled without a value; every other keyword
    is a kiln-compile option with `_` for `-`: precision="fp16",
    sparsity="on", calibration_data="dir", keep_precision=["node"],
    fuse_layers=False, profile=True, ... Returns a Module whose `report`
    holds kiln-compile --report's signature, memory plan and kernels.
    Raises CompileError with kiln-compile's diagnostics."""
    options.setdefault("report", True)
    with _ModelFile(model) as path, tempfile.TemporaryDirectory(prefix="kiln-") as tmp:
        out = os.path.join(tmp, "model.kmod")
        cmd = ([tool("kiln-compile"), path, "-o", out, "--target=" + target]
               + _shape_flags(input_shapes) + _sequence_flags(input_sequences)
               + _option_flags(options))
        p = _run_tool(cmd)
        with open(out, "rb") as f:
            data = f.read()
    return Module(data, _parse_report(p.stderr.decode(errors="replace")))


def _shape_at(info, batch, length):
    shape = list(info.shape)
    if info.batched and batch:
        shape[0] = batch
    if length:
        for d in info.length_dims:
            shape[d] = length
    return tuple(shape)


def _as_array(value, info, batch=0, length=0):
    """`value` as a C-contiguous numpy array of `info`'s dtype and shape,
    the caller's buffer itself when it already is one (numpy arrays, and
    DLPack producers such as torch CPU tensors, are viewed, not copied)."""
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__dlpack__"):
            value = np.from_dlpack(value)
        else:
            value = np.asarray(value)
    if value.dtype != info.dtype:
        raise KilnRuntimeError("input '%s' is %s; the module takes %s" % (
            info.name, value.dtype.name, info.dtype.name))
    want = _shape_at(info, batch, length)
    if tuple(value.shape) != want:
        raise KilnRuntimeError("input '%s' has shape %s; the module takes %s" % (
            info.name, tuple(value.shape), want))
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return value


class Session:
    """Runs a Module on `device` ("cpu", "cuda", "emulator", or "default":
    the module's own), its parallel loops on `threads` threads (None: the
    OpenMP default, every core). Raises KilnRuntimeError when the device
    cannot be set up (no CUDA device, code missing for it)."""

    def __init__(self, module, device="default", threads=None):
        if not isinstance(module, Module):
            raise TypeError("Session takes a kiln.Module (kiln.compile or kiln.load)")
        self.module = module
        self.threads = threads or 0
        self._session = _kiln.Session(module._module, device)
        self._lock = threading.Lock()

    @property
    def device(self):
        return self._session.device

    def _buffers(self, inputs):
        infos = self.module.inputs
        if isinstance(inputs, dict):
            inputs = _expand_composites(self.module, inputs)
            unknown = set(inputs) - {i.name for i in infos}
            if unknown:
                raise KilnRuntimeError("the module has no input %s; its inputs are %s" % (
                    ", ".join(sorted(unknown)), [i.name for i in infos]))
            missing = [i.name for i in infos if i.name not in inputs]
            if missing:
                raise KilnRuntimeError("missing input %s" % ", ".join(missing))
            values = [inputs[i.name] for i in infos]
        else:
            values = list(inputs)
            if len(values) != len(infos):
                raise KilnRuntimeError("the module takes %d inputs, got %d" % (
                    len(infos), len(values)))
        # A batch-range module runs the batch its batched inputs have.
        batch = 0
        rng = self.module.batch_range
        if rng:
            for v, i in zip(values, infos):
                if i.batched and np.ndim(v) >= 1:
                    batch = int(np.shape(v)[0])
                    break
            if not rng[0] <= batch <= rng[1]:
                raise KilnRuntimeError("batch %d is outside the module's range %d..%d" % (
                    batch, rng[0], rng[1]))
        # A length-range module runs the length its inputs have.
        length = 0
        lrng = self.module.length_range
        if lrng:
            for v, i in zip(values, infos):
                if i.length_dims and np.ndim(v) == len(i.shape):
                    length = int(np.shape(v)[i.length_dims[0]])
                    break
            if not lrng[0] <= length <= lrng[1]:
                raise KilnRuntimeError("length %d is outside the module's range %d..%d" % (
                    length, lrng[0], lrng[1]))
        ins = [_as_array(v, i, batch, length) for v, i in zip(values, infos)]
        outs = []
        for o in self.module.outputs:
            shape = tuple(o.max_extent if d < 0 else d for d in _shape_at(o, batch, length))
            outs.append(np.empty(shape, o.dtype))
        self._batch = batch
        self._length = length
        return ins, outs

    def _run(self, ins, outs):
        self._session.run_raw(ins, outs, self.threads, self._batch, self._length)

    def _results(self, outs):
        result = {}
        codes = [row[1] for row in self.module._module.outputs]
        for k, (o, a) in enumerate(zip(self.module.outputs, outs)):
            if codes[k] in _SUB_BYTE:
                bits, signed = _SUB_BYTE[codes[k]]
                v = a.view(np.uint8) & ((1 << bits) - 1)
                if signed:
                    v = v.astype(np.int16)
                    v[v >= 1 << (bits - 1)] -= 1 << bits
                a = v.astype(o.dtype)
            if o.max_extent:
                # A data-dependent extent: packed at the buffer's start.
                shape = tuple(self._session.output_shape(k))
                a = a.reshape(-1)[:int(np.prod(shape))].reshape(shape)
            result[o.name] = a
        # Sequence outputs as lists, by the graph's name; those of a run-time
        # length as long as the run made them, optionals present at run time
        # as their value or None.
        for c in self.module.composites:
            if not c.output or (c.kind != "sequence" and not c.run_time_count):
                continue
            count = c.length
            if c.run_time_count:
                count = int(result.pop(c.name + (".length" if c.kind == "sequence"
                                                 else ".present")))
            if c.kind == "optional_tensor":
                value = result.pop(c.name)
                result[c.name] = value if count else None
                continue
            elements = [result.pop("%s[%d]" % (c.name, i)) for i in range(c.length)]
            if c.kind == "sequence":
                result[c.name] = elements[:count]
            else:
                result[c.name] = elements if count else None
        return result

    def run(self, inputs):
        """Runs on `inputs` (a dict by input name, or a list in the module's
        input order) and returns a dict of numpy arrays by output name. In
        the dict, a sequence input is a list of arrays and an optional one
        an array or None; a sequence output comes back as a list. Inputs that are
        C-contiguous arrays of the right dtype are read in place."""
        ins, outs = self._buffers(inputs)
        with self._lock:
            self._run(ins, outs)
            return self._results(outs)

    def benchmark(self, inputs, warmup=10, iterations=100):
        """Times `iterations` runs after `warmup`: a dict of the latencies
        in ms (p50, p90, p99, mean, min) and runs per second."""
        ins, outs = self._buffers(inputs)
        times = []
        with self._lock:
            for _ in range(warmup):
                self._run(ins, outs)
            for _ in range(iterations):
                t0 = time.perf_counter()
                self._run(ins, outs)
                times.append(1e3 * (time.perf_counter() - t0))
        times.sort()

        def pct(p):
            return times[min(len(times) - 1, int(p / 100.0 * len(times)))]
        return {"iterations": iterations, "p50": statistics.median(times), "p90": pct(90),
                "p99": pct(99), "mean": statistics.fmean(times), "min": times[0],
                "runs_per_s": 1e3 / statistics.fmean(times)}

    def profile(self, inputs, runs=1):
        """Profiles `runs` runs: per kernel launch (GPU devices) or marked
        computation (CPU modules compiled with profile=True), in order,
        a dict of its name, start and time in ms (the median over the
        runs), and the FLOPs and bytes the compiler counted (None when
        unknown)."""
        ins, outs = self._buffers(inputs)
        per_run = []
        with self._lock:
            self._session.set_profiling(True)
            try:
                for _ in range(runs):
                    self._run(ins, outs)
                    per_run.append(self._session.last_profile())
            finally:
                self._session.set_profiling(False)
        rows = []
        for i, (name, start, ms, flops, nbytes) in enumerate(per_run[-1]):
            rows.append({"name": name, "start_ms": start,
                         "ms": statistics.median(r[i][2] for r in per_run),
                         "flops": flops if flops >= 0 else None,
                         "bytes": nbytes if nbytes >= 0 else None})
        return rows


from . import ir  # noqa: E402
