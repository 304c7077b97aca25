"""Kiln IR from Python, for notebooks and pass debugging: import an ONNX
model to kiln IR text, run any pass pipeline by the names kiln-opt knows
(`kiln-opt --help` lists them), and get the IR back.

    text = kiln.ir.import_onnx("model.onnx", input_shapes={"x": (1, 3, 8, 8)})
    fused = kiln.ir.run_pipeline(text, "kiln-infer-shapes,kiln-fuse-layers")
    lowered = kiln.ir.run_pipeline(fused, "kiln-to-linalg-pipeline")

Pass plugins load with `pass_plugins=[path, ...]`. Errors raise
kiln.CompileError with kiln-opt's diagnostics.
"""

import os

from . import CompileError, _ModelFile, _run_tool, _shape_flags, tool  # noqa: F401

__all__ = ["import_onnx", "run_pipeline"]


def _plugins(pass_plugins):
    return ["--load-pass-plugin=" + os.fspath(p) for p in pass_plugins or ()]


def import_onnx(model, input_shapes=None, elide_weights=True):
    """`model` (a path, ONNX bytes or an onnx.ModelProto) imported to kiln
    IR text; weights over 64 bytes are elided unless `elide_weights` is
    False."""
    with _ModelFile(model) as path:
        cmd = [tool("kiln-opt"), path] + _shape_flags(input_shapes)
        if not elide_weights:
            cmd.append("--mlir-elide-resource-strings-if-larger=0")
        return _run_tool(cmd).stdout.decode()


def run_pipeline(ir, pipeline, pass_plugins=None):
    """Runs `pipeline` (a pass list on the module, as inside
    --pass-pipeline='builtin.module(...)', or that whole form) on `ir`
    (MLIR text) and returns the result's text."""
    if not pipeline.startswith("builtin.module("):
        pipeline = "builtin.module(%s)" % pipeline
    cmd = ([tool("kiln-opt"), "-", "--pass-pipeline=" + pipeline,
            "--mlir-elide-resource-strings-if-larger=0"] + _plugins(pass_plugins))
    return _run_tool(cmd, stdin=ir.encode()).stdout.decode()
