"""Shared by the single-op model writers (attention.py, maxpool.py)."""
import onnx
from onnx import helper


def save_model(graph, path):
    """Saves `graph` as a checked opset-18 model that the ONNX Runtime in
    bench/requirements.txt reads (IR version 8)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, path)
