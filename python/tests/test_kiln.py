"""The kiln Python package: compile, run (zero-copy, DLPack), errors,
threads, benchmark/profile and kiln.ir, against ONNX Runtime."""
import os
import threading

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln


def mlp(batch="batch"):
    """x [batch, 16] -> Relu(x W1 + b1) W2 + b2 -> y [batch, 8] (Gemm with
    transB as PyTorch writes nn.Linear), seeded weights."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("w1", (32, 16)), ("b1", (32,)), ("w2", (8, 32)), ("b2", (8,)))]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["a"], name="relu"),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["y"], name="fc2", transB=1)]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    onnx.save(mlp(), str(path))
    return str(path)


@pytest.fixture(scope="module")
def module(model_path):
    return kiln.compile(model_path, input_shapes={"x": (4, 16)})


def reference(model_path, x):
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def x4(seed=1):
    return np.random.default_rng(seed).standard_normal((4, 16)).astype(np.float32)


def test_compile_run_matches_onnxruntime(model_path, module):
    x = x4()
    y = kiln.Session(module).run({"x": x})["y"]
    np.testing.assert_allclose(y, reference(model_path, x), rtol=1e-5, atol=1e-5)
    assert module.inputs[0].name == "x" and module.inputs[0].shape == (4, 16)
    assert module.inputs[0].dtype == np.float32
    assert module.outputs[0].shape == (4, 8)
    assert module.target == "cpu-x86_64"


@pytest.mark.parametrize("form", ["bytes", "proto"])
def test_compile_from_bytes_and_proto(model_path, form):
    model = mlp()
    source = model.SerializeToString() if form == "bytes" else model
    m = kiln.compile(source, input_shapes={"x": (2, 16)})
    x = x4()[:2]
    np.testing.assert_allclose(kiln.Session(m).run([x])["y"], reference(model_path, x),
                               rtol=1e-5, atol=1e-5)


def test_report(module):
    r = module.report
    assert r["inputs"] == [{"name": "x", "dtype": "float32", "shape": [4, 16]}]
    assert r["outputs"][0]["shape"] == [4, 8]
    assert r["memory_plan"]["arena_bytes"] >= r["memory_plan"]["lower_bound_bytes"] > 0
    assert r["code_bytes"] > 0


def test_save_and_load(module, tmp_path):
    path = tmp_path / "m.kmod"
    module.save(path)
    again = kiln.load(path)
    x = x4()
    np.testing.assert_array_equal(kiln.Session(again).run({"x": x})["y"],
                                  kiln.Session(module).run({"x": x})["y"])
    bad = tmp_path / "bad.kmod"
    bad.write_bytes(b"not a module")
    with pytest.raises(kiln.KilnRuntimeError, match="not a Kiln module"):
        kiln.load(bad)


def test_zero_copy(module):
    info = module.inputs[0]
    x = x4()
    assert kiln._as_array(x, info) is x  # read in place
    strided = np.asfortranarray(x)
    copied = kiln._as_array(strided, info)
    assert copied is not strided and copied.flags.c_contiguous
    s = kiln.Session(module)
    np.testing.assert_array_equal(s.run({"x": strided})["y"], s.run({"x": x})["y"])
    # Outputs are the arrays the module wrote, owning their memory.
    y = s.run({"x": x})["y"]
    assert y.flags.owndata and y.flags.c_contiguous


class DLPackOnly:
    """A producer that offers only the DLPack protocol (no buffer or array
    interface), as tensors of other libraries do."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack(module):
    x = x4()
    view = kiln._as_array(DLPackOnly(x), module.inputs[0])
    assert np.shares_memory(view, x)  # read in place, not copied
    np.testing.assert_array_equal(kiln.Session(module).run({"x": DLPackOnly(x)})["y"],
                                  kiln.Session(module).run({"x": x})["y"])


def test_dlpack_from_torch(module):
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x4())
    view = kiln._as_array(t, module.inputs[0])
    assert np.shares_memory(view, t.numpy())
    np.testing.assert_array_equal(kiln.Session(module).run({"x": t})["y"],
                                  kiln.Session(module).run({"x": t.numpy()})["y"])


def test_compile_errors(tmp_path):
    bad = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((4, 2, 3, 3), np.float32), "w")]),
        opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(kiln.CompileError) as e:
        kiln.compile(bad, no_onnx_checks=True)
    assert "conv1" in e.value.diagnostics and "Conv" in e.value.diagnostics
    with pytest.raises(kiln.CompileError, match="--precision"):
        kiln.compile(mlp(), input_shapes={"x": (1, 16)}, precision="fp4")
    with pytest.raises(kiln.CompileError, match="needs static shapes .*--input-shape"):
        kiln.compile(mlp())
    with pytest.raises(TypeError):
        kiln.compile(42)


def test_run_errors(module):
    s = kiln.Session(module)
    with pytest.raises(kiln.KilnRuntimeError, match="float64"):
        s.run({"x": x4().astype(np.float64)})
    with pytest.raises(kiln.KilnRuntimeError, match="shape"):
        s.run({"x": np.zeros((3, 16), np.float32)})
    with pytest.raises(kiln.KilnRuntimeError, match="missing input x"):
        s.run({})
    with pytest.raises(kiln.KilnRuntimeError, match="no input z"):
        s.run({"x": x4(), "z": x4()})
    with pytest.raises(kiln.KilnRuntimeError, match="unknown device"):
        kiln.Session(module, device="tpu")


def test_threads(model_path, module):
    """One module shared by four threads, each with its own session, and
    four threads sharing one session (serialized): every result right."""
    xs = [x4(seed) for seed in range(8)]
    expected = [reference(model_path, x) for x in xs]
    shared = kiln.Session(module, threads=1)
    errors = []

    def work(i, session):
        try:
            for _ in range(20):
                y = session.run({"x": xs[i]})["y"]
                np.testing.assert_allclose(y, expected[i], rtol=1e-5, atol=1e-5)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, kiln.Session(module))) for i in range(4)]
    threads += [threading.Thread(target=work, args=(4 + i, shared)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_benchmark_and_profile(model_path):
    x = x4()
    m = kiln.compile(model_path, input_shapes={"x": (4, 16)}, profile=True)
    s = kiln.Session(m, threads=1)
    b = s.benchmark({"x": x}, warmup=2, iterations=10)
    assert b["iterations"] == 10 and 0 < b["min"] <= b["p50"] <= b["p99"]
    rows = s.profile({"x": x}, runs=3)
    names = [r["name"] for r in rows]
    assert any("fc1" in n for n in names) and any("fc2" in n for n in names)
    assert all(r["ms"] >= 0 for r in rows)
    np.testing.assert_allclose(s.run({"x": x})["y"], reference(model_path, x),
                               rtol=1e-5, atol=1e-5)


def test_options(model_path):
    x = x4()
    half = kiln.compile(model_path, input_shapes={"x": (4, 16)}, precision="fp16")
    np.testing.assert_allclose(kiln.Session(half).run({"x": x})["y"],
                               reference(model_path, x), rtol=2e-2, atol=2e-2)
    sparse = kiln.compile(model_path, input_shapes={"x": (4, 16)}, sparsity="on")
    assert sparse.report["sparsity"] == {"sparse": 0, "contractions": 2}


def test_emulator(model_path):
    x = x4()
    m = kiln.compile(model_path, target="sm_90", input_shapes={"x": (4, 16)})
    assert m.report["gpu"]["kernels"] >= 1
    s = kiln.Session(m, device="emulator")
    np.testing.assert_allclose(s.run({"x": x})["y"], reference(model_path, x),
                               rtol=1e-5, atol=1e-5)


def test_ir(model_path):
    text = kiln.ir.import_onnx(model_path, input_shapes={"x": (4, 16)}, elide_weights=False)
    assert "kiln.gemm" in text and "tensor<4x16xf32>" in text
    lowered = kiln.ir.run_pipeline(text, "kiln-to-linalg-pipeline")
    assert "linalg.generic" in lowered and "kiln.gemm" not in lowered
    with pytest.raises(kiln.CompileError, match="no-such-pass"):
        kiln.ir.run_pipeline(text, "no-such-pass")


def test_batch_range(model_path):
    """One module for batches 1..5 (specialized for 4): any batch runs and
    agrees with ONNX Runtime; a batch outside the range is refused."""
    m = kiln.compile(model_path, input_shapes={"x": ("1..5", 16)}, opt_batch=4)
    assert m.batch_range == (1, 5, 4)
    assert m.inputs[0].batched and m.outputs[0].batched
    s = kiln.Session(m)
    ref = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    for batch in (1, 3, 5):
        x = rng.standard_normal((batch, 16)).astype(np.float32)
        y = s.run({"x": x})["y"]
        assert y.shape == (batch, 8)
        np.testing.assert_allclose(y, ref.run(None, {"x": x})[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(kiln.KilnRuntimeError, match="outside the module's range 1..5"):
        s.run({"x": np.zeros((6, 16), np.float32)})


def test_length_range(tmp_path):
    """One module for sequence lengths 3..12 of a per-position projection
    followed by a Softmax over positions: any length runs and agrees with
    ONNX Runtime (the padded positions masked); a length outside the range
    is refused."""
    F = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="proj"),
         helper.make_node("Softmax", ["h"], ["y"], name="over_positions", axis=1)],
        "positions", [helper.make_tensor_value_info("x", F, [1, "seq", 4])],
        [helper.make_tensor_value_info("y", F, [1, "seq", 4])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "positions.onnx")
    onnx.save(model, path)
    m = kiln.compile(path, input_shapes={"x": (1, "3..12", 4)}, length_buckets=[6])
    assert m.length_range == (3, 12, 12)
    assert m.inputs[0].length_dims == (1,) and m.outputs[0].length_dims == (1,)
    s = kiln.Session(m)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for length in (3, 5, 6, 7, 12):
        x = rng.standard_normal((1, length, 4)).astype(np.float32)
        y = s.run({"x": x})["y"]
        assert y.shape == (1, length, 4)
        np.testing.assert_allclose(y, ref.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(kiln.KilnRuntimeError, match="outside the module's range 3..12"):
        s.run({"x": np.zeros((1, 13, 4), np.float32)})


def test_sequences_and_optionals(tmp_path):
    """A sequence input given as a list, a sequence output returned as one,
    an optional input compiled present or absent; against ONNX Runtime."""
    F = TensorProto.FLOAT
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, ["N"]))
    body = helper.make_graph(
        [helper.make_node("Sigmoid", ["e"], ["s"])], "body",
        [helper.make_tensor_value_info("e", F, ["N"])],
        [helper.make_tensor_value_info("s", F, ["N"])])
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    graph = helper.make_graph(
        [helper.make_node("SequenceMap", ["xs"], ["ys"], body=body),
         helper.make_node("ConcatFromSequence", ["xs"], ["cat"], axis=0),
         helper.make_node("OptionalHasElement", ["o"], ["has"])],
        "seq", [helper.make_value_info("xs", seq), helper.make_value_info("o", opt)],
        [helper.make_value_info("ys", seq),
         helper.make_tensor_value_info("cat", F, ["M"]),
         helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = str(tmp_path / "seq.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(n).astype(np.float32) for n in (3, 5)]
    o = rng.standard_normal(2).astype(np.float32)

    m = kiln.compile(path, input_sequences={"xs": [(3,), (5,)]})
    kinds = {c.name: (c.kind, c.output, c.length) for c in m.composites}
    assert kinds == {"xs": ("sequence", False, 2), "o": ("optional_tensor", False, 1),
                     "ys": ("sequence", True, 2)}
    assert [i.name for i in m.inputs] == ["xs[0]", "xs[1]", "o"]
    got = kiln.Session(m).run({"xs": xs, "o": o})
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"xs": xs, "o": o})
    assert isinstance(got["ys"], list) and len(got["ys"]) == 2
    for g, w in zip(got["ys"], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(got["cat"], want[1])
    assert bool(got["has"]) is True

    absent = kiln.compile(path, input_sequences={"xs": [(3,), (5,)]}, input_absent=["o"])
    assert bool(kiln.Session(absent).run({"xs": xs, "o": None})["has"]) is False
    with pytest.raises(kiln.KilnRuntimeError, match="compiled absent"):
        kiln.Session(absent).run({"xs": xs, "o": o})
    with pytest.raises(kiln.KilnRuntimeError, match="a sequence of 2 tensors in the module, got 1"):
        kiln.Session(m).run({"xs": xs[:1], "o": o})


def test_run_time_sequence_length_and_presence(tmp_path):
    """A sequence split by a run-time size comes back as long as the run
    made it, an optional present in one If branch only as its value or
    None."""
    F = TensorProto.FLOAT
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2, 5]))
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Optional", ["r"], ["a"])],
        "then", [], [helper.make_value_info("a", opt_t)])
    else_g = helper.make_graph(
        [helper.make_node("Optional", [], ["b"], type=helper.make_tensor_type_proto(F, [2, 5]))],
        "else", [], [helper.make_value_info("b", opt_t)])
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "s"], ["chunks"], axis=1),
         helper.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g)],
        "rt",
        [helper.make_tensor_value_info("x", F, [2, 5]),
         helper.make_tensor_value_info("s", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_value_info("chunks", helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(F, [2, None]))),
         helper.make_value_info("o", opt_t)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = str(tmp_path / "rt.onnx")
    onnx.save(model, path)
    m = kiln.compile(path)
    counts = {c.name: (c.kind, c.length, c.run_time_count) for c in m.composites}
    assert counts == {"chunks": ("sequence", 5, True), "o": ("optional_tensor", 1, True)}
    x = np.arange(10, dtype=np.float32).reshape(2, 5) - 4
    session = kiln.Session(m)
    for s, c in [(2, True), (5, False), (1, True)]:
        got = session.run({"x": x, "s": np.array(s, dtype=np.int64), "c": np.array(c)})
        want = [x[:, k:k + s] for k in range(0, 5, s)]
        assert len(got["chunks"]) == len(want)
        for g, w in zip(got["chunks"], want):
            np.testing.assert_array_equal(g, w)
        if c:
            np.testing.assert_array_equal(got["o"], np.maximum(x, 0))
        else:
            assert got["o"] is None
