#!/usr/bin/env python3
"""Builds and exports a zoo of ONNX models with random weights (no downloads).

Every model is built from code or from a configuration (torchvision and timm
with weights=None / pretrained=False, transformers and diffusers from config
objects, ultralytics from its bundled YAML), with `torch.manual_seed(0)`,
and exported by two exporters:

  torchscript  torch.onnx.export(..., dynamo=False, opset_version=17)
  dynamo       torch.onnx.export(..., dynamo=True, external_data=True)
               (the exporter's default opset; weights in NAME.onnx.data)

A few models are written directly with onnx.helper (exporter "onnx"): a CNN
and an MLP whose Conv/Gemm/MatMul weights are computed in the graph
(ConstantOfShape, Transpose/Reshape/Cast of initializers, DequantizeLinear of
int8 initializers), each beside a "_stored" twin holding the same weights as
plain initializers.

For every exported file a third variant NAME_EXPORTER_novi.onnx holds the same
graph with every value_info removed (subgraphs too), so that a compiler must
infer every intermediate type itself (a dynamo _novi file reads the weights
of its twin's .data file).

Each model has two configurations: `small` (tiny widths/depths, small inputs
such as 1x3x64x64 or 16 tokens; for a fast test suite) and `full` (the real
architecture at its usual input size). Inputs have static shapes.

Files: OUT/NAME[_EXPORTER][_novi].onnx and OUT/manifest.json, which gives for
every file its model, exporter, size, variant, inputs (name, dtype, shape and,
for integer inputs, the value range [low, high): token ids below the vocab
size, attention masks [1, 2) i.e. all ones), outputs, external data files, the
export status (with the error when it failed) and a check of ONNX Runtime's
outputs against PyTorch's on random inputs (`ort_check`, ORT with basic graph
optimizations: its extended ones approximate; --no-check skips it). A failed
export is recorded and the run goes on; a summary table ends the run. Existing files are kept (not re-exported) unless --force.

  python3 bench/zoo/zoo.py OUT_DIR [--models a,b] [--size small|full]
      [--exporters torchscript,dynamo] [--force] [--list] [--no-check]
      [--threads N]

`bench/run.py --zoo OUT_DIR` compiles and benchmarks the files against ONNX
Runtime. Needs bench/requirements.txt (torch, torchvision, transformers, timm,
ultralytics, segmentation-models-pytorch, diffusers, onnx, onnxruntime).
"""

import os

# No hub access, ever: every model is built from code or a config.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_VERBOSE", "False")
os.environ.setdefault("TORCH_HOME", os.path.join("/nonexistent", "torch-home"))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

TORCHSCRIPT_OPSET = 17
COMPUTED_OPSET = 17
EXPORTERS = ["torchscript", "dynamo"]
SIZES = ["small", "full"]
MANIFEST = "manifest.json"


# --------------------------------------------------------------------------
# Registry.
# --------------------------------------------------------------------------

class Config:
    """One size of a model: the builder's keyword arguments and the inputs,
    {name: (dtype, shape)} in the order the module's forward takes them, with
    value ranges [low, high) for the integer inputs ({name: (low, high)})."""

    def __init__(self, kwargs, inputs, ranges=None):
        self.kwargs = kwargs
        self.inputs = inputs
        self.ranges = ranges or {}


class Model:
    """name; group (where it comes from); builder(**config.kwargs) returns an
    eval torch.nn.Module (or, for kind "onnx", an onnx.ModelProto); outputs:
    the output names; small and full: Config."""

    def __init__(self, name, group, builder, outputs, small, full, kind="torch",
                 twin=None):
        self.name, self.group, self.builder = name, group, builder
        self.outputs, self.small, self.full = outputs, small, full
        # kind "onnx": twin names the model that must give the same outputs
        # (the computed-weights CNN's stored twin), ORT's reference for it.
        self.kind, self.twin = kind, twin

    def config(self, size):
        return self.small if size == "small" else self.full

    def build(self, size):
        """The model of that size: an eval torch.nn.Module (random weights
        from torch.manual_seed(0)), or an onnx.ModelProto for kind "onnx"."""
        if self.kind == "onnx":
            return self.builder(**self.config(size).kwargs)
        import torch
        torch.manual_seed(0)
        with contextlib.redirect_stdout(io.StringIO()):
            return self.builder(**self.config(size).kwargs).eval()


REGISTRY = {}


def register(*args, **kw):
    m = Model(*args, **kw)
    assert m.name not in REGISTRY, m.name
    REGISTRY[m.name] = m
    return m


def image(n, c=3, h=224, w=None, name="input"):
    return {name: ("float32", [n, c, h, w or h])}


def tokens(seq, vocab, names=("input_ids", "attention_mask"), types=0):
    """Token inputs: ids in [0, vocab), an all-ones mask, token types."""
    inputs, ranges = {}, {}
    for n in names:
        inputs[n] = ("int64", [1, seq])
        ranges[n] = {"input_ids": (0, vocab), "attention_mask": (1, 2),
                     "token_type_ids": (0, max(types, 1))}[n]
    return inputs, ranges


# --------------------------------------------------------------------------
# Builders.
# --------------------------------------------------------------------------

def wrap(module, fn):
    """A module whose forward is fn(module, *inputs) (for models whose own
    forward returns dicts, tuples with None, or takes keyword arguments)."""
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, *args):
            return fn(self.m, *args)

    return Wrapper()


def tv(name, **kw):
    import torchvision
    return getattr(torchvision.models, name)(weights=None, **kw)


def b_resnet(name, layers=None, **kw):
    """torchvision ResNet family; small: one block per stage."""
    if layers is None:
        return tv(name, **kw)
    from torchvision.models.resnet import ResNet, BasicBlock, Bottleneck
    block = BasicBlock if name in ("resnet18", "resnet34") else Bottleneck
    extra = {"resnext50_32x4d": dict(groups=32, width_per_group=4),
             "wide_resnet50_2": dict(width_per_group=128)}.get(name, {})
    return ResNet(block, layers, **extra, **kw)


def b_densenet(**kw):
    if not kw:
        return tv("densenet121")
    import torchvision
    return torchvision.models.DenseNet(**kw)


def b_vgg(name, shrink=None, **kw):
    """VGG; small: channels / shrink, a global average pool and a narrow
    classifier (the 25088x4096 one is 400 MB)."""
    if not shrink:
        return tv(name, **kw)
    import torch
    from torchvision.models import vgg
    bn = name.endswith("_bn")
    cfg = vgg.cfgs[{"vgg11": "A", "vgg13": "B", "vgg16": "D", "vgg19": "E"}[
        name.replace("_bn", "")]]
    cfg = [c if c == "M" else c // shrink for c in cfg]
    m = vgg.VGG(vgg.make_layers(cfg, batch_norm=bn), init_weights=True, **kw)
    c = cfg[-2]
    m.avgpool = torch.nn.AdaptiveAvgPool2d(1)
    m.classifier = torch.nn.Sequential(
        torch.nn.Linear(c, 256), torch.nn.ReLU(True), torch.nn.Dropout(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(True), torch.nn.Dropout(),
        torch.nn.Linear(256, kw.get("num_classes", 1000)))
    return m


def b_alexnet(small=False, **kw):
    m = tv("alexnet", **kw)
    if small:
        import torch
        m.avgpool = torch.nn.AdaptiveAvgPool2d(1)
        m.classifier = torch.nn.Sequential(
            torch.nn.Dropout(), torch.nn.Linear(256, 256), torch.nn.ReLU(True),
            torch.nn.Dropout(), torch.nn.Linear(256, 256), torch.nn.ReLU(True),
            torch.nn.Linear(256, kw.get("num_classes", 1000)))
    return m


def b_efficientnet_b0(width_mult=None, depth_mult=None, **kw):
    if width_mult is None:
        return tv("efficientnet_b0", **kw)
    from torchvision.models import efficientnet as e
    setting, last = e._efficientnet_conf("efficientnet_b0", width_mult=width_mult,
                                         depth_mult=depth_mult)
    return e.EfficientNet(setting, 0.2, last_channel=last, **kw)


def b_convnext(stages=None, **kw):
    if stages is None:
        return tv("convnext_tiny", **kw)
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig
    return ConvNeXt([CNBlockConfig(*s) for s in stages], **kw)


def b_swin(**kw):
    if not kw.get("embed_dim"):
        return tv("swin_t", **kw)
    import torchvision
    return torchvision.models.SwinTransformer(patch_size=[4, 4],
                                              stochastic_depth_prob=0.0, **kw)


def b_vit(**kw):
    import torch
    import torchvision
    # The fused multi-head-attention fast path of eval-mode
    # nn.TransformerEncoderLayer has no ONNX export.
    torch.backends.mha.set_fastpath_enabled(False)
    m = (torchvision.models.VisionTransformer(**kw) if kw.get("hidden_dim")
         else tv("vit_b_16", **kw))
    # torchvision zero-initializes the classifier: every logit would be 0.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


def b_maxvit(**kw):
    if not kw.get("block_channels"):
        return tv("maxvit_t", **kw)
    import torchvision
    return torchvision.models.MaxVit(**kw)


def b_mnasnet(alpha=None, **kw):
    if alpha is None:
        return tv("mnasnet1_0", **kw)
    import torchvision
    return torchvision.models.MNASNet(alpha, **kw)


def b_yolo(cfg):
    """Ultralytics detection model built from its bundled YAML (no weights);
    the Detect head in export mode (one tensor [1, 4 + classes, anchors])."""
    from ultralytics.nn.tasks import DetectionModel
    with contextlib.redirect_stdout(io.StringIO()):
        m = DetectionModel(cfg, nc=80, verbose=False)
    for mod in m.modules():
        if hasattr(mod, "export") and hasattr(mod, "stride") and hasattr(mod, "nc"):
            mod.export = True
            mod.format = "onnx"
            mod.dynamic = False
    return wrap(m, lambda m, x: m(x))


def b_ssdlite(**kw):
    """torchvision SSDLite320-MobileNetV3: backbone + head (the anchor
    decoding and NMS are not tensor-in/tensor-out)."""
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large
    m = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, **kw)

    def fwd(m, x):
        feats = list(m.backbone(x).values())
        h = m.head(feats)
        return h["bbox_regression"], h["cls_logits"]
    return wrap(m, fwd)


def b_fcn(small=False, **kw):
    from torchvision.models import segmentation as seg
    if small:
        from torchvision.models._utils import IntermediateLayerGetter
        from torchvision.models.resnet import ResNet, Bottleneck
        bb = ResNet(Bottleneck, [1, 1, 1, 1],
                    replace_stride_with_dilation=[False, True, True])
        bb = IntermediateLayerGetter(bb, {"layer4": "out"})
        m = seg.fcn.FCN(bb, seg.fcn.FCNHead(2048, kw.get("num_classes", 21)))
    else:
        m = seg.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False, **kw)
    return wrap(m, lambda m, x: m(x)["out"])


def b_tvseg(name, **kw):
    from torchvision.models import segmentation as seg
    m = getattr(seg, name)(weights=None, weights_backbone=None, **kw)
    return wrap(m, lambda m, x: m(x)["out"])


def b_smp_unet(**kw):
    import segmentation_models_pytorch as smp
    return smp.Unet(encoder_weights=None, **kw)


def b_timm(name, **kw):
    import timm
    return timm.create_model(name, pretrained=False, **kw)


# OCR ----------------------------------------------------------------------

def b_crnn(ch=(64, 128, 256, 512), hidden=256, nclass=37):
    """CRNN: conv stack to height 1, 2-layer bidirectional LSTM, linear CTC
    head with log-softmax. Input [1, 1, 32, W]; output [W/4 - 1, 1, nclass]."""
    import torch
    nn = torch.nn

    def cbr(i, o, k=3, p=1, bn=False):
        return [nn.Conv2d(i, o, k, 1, p)] + ([nn.BatchNorm2d(o)] if bn else []) + [
            nn.ReLU(True)]

    class CRNN(nn.Module):
        def __init__(self):
            super().__init__()
            c0, c1, c2, c3 = ch
            self.cnn = nn.Sequential(
                *cbr(1, c0), nn.MaxPool2d(2, 2),
                *cbr(c0, c1), nn.MaxPool2d(2, 2),
                *cbr(c1, c2, bn=True), *cbr(c2, c2), nn.MaxPool2d((2, 1), (2, 1)),
                *cbr(c2, c3, bn=True), *cbr(c3, c3), nn.MaxPool2d((2, 1), (2, 1)),
                *cbr(c3, c3, k=2, p=0, bn=True))
            self.rnn = nn.LSTM(c3, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, nclass)

        def forward(self, x):
            f = self.cnn(x)                      # [b, c, 1, w]
            f = f.squeeze(2).permute(2, 0, 1)    # [w, b, c]
            y, _ = self.rnn(f)
            return self.fc(y).log_softmax(2)

    return CRNN()


def b_dbnet(small=False, inner=256):
    """DB-style text detector: ResNet-18 features, FPN (1x1 laterals,
    nearest upsampling, 3x3 smoothing, concat at 1/4), and a probability head
    of Conv 3x3 + two ConvTranspose 2x2 stride 2 to full resolution."""
    import torch
    import torchvision
    nn = torch.nn
    from torchvision.models.resnet import ResNet, BasicBlock
    r = (ResNet(BasicBlock, [1, 1, 1, 1]) if small
         else torchvision.models.resnet18(weights=None))

    class DBNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool)
            self.layers = nn.ModuleList([r.layer1, r.layer2, r.layer3, r.layer4])
            self.lat = nn.ModuleList([nn.Conv2d(c, inner, 1, bias=False)
                                      for c in (64, 128, 256, 512)])
            self.smooth = nn.ModuleList([nn.Conv2d(inner, inner // 4, 3, padding=1,
                                                   bias=False) for _ in range(4)])
            q = inner // 4
            self.head = nn.Sequential(
                nn.Conv2d(inner, q, 3, padding=1, bias=False), nn.BatchNorm2d(q),
                nn.ReLU(True), nn.ConvTranspose2d(q, q, 2, 2), nn.BatchNorm2d(q),
                nn.ReLU(True), nn.ConvTranspose2d(q, 1, 2, 2), nn.Sigmoid())

        def forward(self, x):
            x = self.stem(x)
            cs = []
            for layer in self.layers:
                x = layer(x)
                cs.append(x)
            ps = [lat(c) for lat, c in zip(self.lat, cs)]
            for i in (2, 1, 0):
                ps[i] = ps[i] + nn.functional.interpolate(ps[i + 1], scale_factor=2.0,
                                                          mode="nearest")
            outs = []
            for i, (sm, p) in enumerate(zip(self.smooth, ps)):
                o = sm(p)
                if i:
                    o = nn.functional.interpolate(o, scale_factor=float(2 ** i),
                                                  mode="nearest")
                outs.append(o)
            return self.head(torch.cat(outs[::-1], 1))

    return DBNet()


# Audio --------------------------------------------------------------------

def b_vad(rnn="gru", mels=40, ch=64, hidden=64):
    """Voice-activity model: two Conv1d (the second stride 2) over mel
    frames, a 2-layer GRU or LSTM, a linear + sigmoid per frame. The GRU one
    takes and returns its state (as streaming VAD models do)."""
    import torch
    nn = torch.nn

    class VAD(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv1d(mels, ch, 3, padding=1), nn.BatchNorm1d(ch), nn.ReLU(True),
                nn.Conv1d(ch, ch, 3, stride=2, padding=1), nn.ReLU(True))
            cls = nn.GRU if rnn == "gru" else nn.LSTM
            self.rnn = cls(ch, hidden, num_layers=2, batch_first=True)
            self.fc = nn.Linear(hidden, 1)

        def forward(self, x, *state):
            f = self.conv(x).transpose(1, 2)      # [b, t, ch]
            if state:
                y, h = self.rnn(f, state[0])
                return torch.sigmoid(self.fc(y)), h
            y, _ = self.rnn(f)
            return torch.sigmoid(self.fc(y))

    return VAD()


def b_wav2vec2(**cfg):
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    m = Wav2Vec2Model(Wav2Vec2Config(**cfg))
    return wrap(m, lambda m, x: m(x, return_dict=False)[0])


def b_whisper_encoder(**cfg):
    from transformers import WhisperConfig, WhisperModel
    enc = WhisperModel(WhisperConfig(**cfg)).get_encoder()
    return wrap(enc, lambda m, x: m(x, return_dict=False)[0])


# Transformers -------------------------------------------------------------

def b_bert(**cfg):
    from transformers import BertConfig, BertModel
    m = BertModel(BertConfig(**cfg))
    return wrap(m, lambda m, ids, mask, tt: m(input_ids=ids, attention_mask=mask,
                                              token_type_ids=tt, return_dict=False)[:2])


def b_distilbert(**cfg):
    from transformers import DistilBertConfig, DistilBertModel
    m = DistilBertModel(DistilBertConfig(**cfg))
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          return_dict=False)[0])


def b_roberta(**cfg):
    from transformers import RobertaConfig, RobertaModel
    m = RobertaModel(RobertaConfig(**cfg))
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          return_dict=False)[:2])


def b_gpt2(**cfg):
    from transformers import GPT2Config, GPT2LMHeadModel
    m = GPT2LMHeadModel(GPT2Config(**cfg))
    # With a mask given, transformers skips its packed-sequence detection
    # (torch.diff, which has no ONNX export).
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          use_cache=False, return_dict=False)[0])


def b_t5_encoder(**cfg):
    from transformers import T5Config, T5EncoderModel
    m = T5EncoderModel(T5Config(**cfg))
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          return_dict=False)[0])


def b_clip_text(**cfg):
    from transformers import CLIPTextConfig, CLIPTextModel
    m = CLIPTextModel(CLIPTextConfig(**cfg))
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          return_dict=False)[:2])


def b_clip_vision(**cfg):
    from transformers import CLIPVisionConfig, CLIPVisionModel
    m = CLIPVisionModel(CLIPVisionConfig(**cfg))
    return wrap(m, lambda m, x: m(pixel_values=x, return_dict=False)[:2])


def b_llama(**cfg):
    from transformers import LlamaConfig, LlamaForCausalLM
    m = LlamaForCausalLM(LlamaConfig(**cfg))
    return wrap(m, lambda m, ids, mask: m(input_ids=ids, attention_mask=mask,
                                          use_cache=False, return_dict=False)[0])


def b_unet2d(**cfg):
    from diffusers import UNet2DModel
    m = UNet2DModel(**cfg)
    return wrap(m, lambda m, x, t: m(x, t, return_dict=False)[0])


def b_unet2d_cond(**cfg):
    from diffusers import UNet2DConditionModel
    m = UNet2DConditionModel(**cfg)
    return wrap(m, lambda m, x, t, e: m(x, t, encoder_hidden_states=e,
                                        return_dict=False)[0])


# Computed weights (onnx.helper) ----------------------------------------------

def _computed(kind, stored, size):
    """A CNN or an MLP whose weights are computed in the graph, or (stored)
    the same weights as plain initializers. Returns an onnx.ModelProto."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto

    rng = np.random.default_rng(1 if kind == "cnn" else 2)
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_" + op, **attrs))
        return outs[0]

    def weight(name, value, how):
        """value: the float32 weight; how: the way the graph computes it."""
        value = np.asarray(value, np.float32)
        if how.startswith("cast"):  # what a float16 copy gives back
            value = value.astype(np.float16).astype(np.float32)
        if stored:
            return init(name, value)
        if how == "transpose":      # stored transposed, Transpose back
            perm = list(range(value.ndim))[::-1]
            src = init(name + "_t", np.ascontiguousarray(np.transpose(value, perm)))
            inv = list(np.argsort(perm))
            return node("Transpose", [src], [name], perm=inv)
        if how == "reshape":        # stored flat, Reshape
            src = init(name + "_flat", value.reshape(-1))
            shp = init(name + "_shape", np.array(value.shape, np.int64))
            return node("Reshape", [src, shp], [name])
        if how == "cast":           # stored float16, Cast to float
            src = init(name + "_f16", value.astype(np.float16))
            return node("Cast", [src], [name], to=TensorProto.FLOAT)
        if how == "cast_transpose":
            src = init(name + "_f16t", np.ascontiguousarray(value.T.astype(np.float16)))
            c = node("Cast", [src], [name + "_f32t"], to=TensorProto.FLOAT)
            return node("Transpose", [c], [name], perm=[1, 0])
        if how == "constant_of_shape":
            assert np.all(value == value.flat[0])
            shp = init(name + "_shape", np.array(value.shape, np.int64))
            return node("ConstantOfShape", [shp], [name],
                        value=numpy_helper.from_array(value.flat[:1].copy()))
        if how == "constant":       # a Constant node, as TorchScript writes
            return node("Constant", [], [name],
                        value=numpy_helper.from_array(value, name + "_value"))
        if how.startswith("dequant"):  # "dequant:AXIS" per channel, "dequant" per tensor
            axis = int(how.split(":")[1]) if ":" in how else None
            q = init(name + "_q", QUANT[name][0])
            s = init(name + "_scale", QUANT[name][1])
            z = init(name + "_zp", QUANT[name][2])
            attrs = {"axis": axis} if axis is not None else {}
            return node("DequantizeLinear", [q, s, z], [name], **attrs)
        raise ValueError(how)

    QUANT = {}

    def quantized(name, shape, axis, dtype=np.int8):
        """Random int8 (or int32) weights and per-channel (axis) or per-tensor
        scales; returns the float weight DequantizeLinear gives."""
        info = np.iinfo(np.int8)
        q = rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
        if axis is None:
            s = np.array(0.01, np.float32)
            z = np.array(0, dtype)
            f = (q.astype(np.int64) - z).astype(np.float32) * s
        else:
            n = shape[axis]
            s = (rng.uniform(0.002, 0.02, size=n)).astype(np.float32)
            z = rng.integers(-3, 4, size=n).astype(dtype)
            bshape = [1] * len(shape)
            bshape[axis] = n
            f = (q.astype(np.int64) - z.reshape(bshape)).astype(np.float32) * s.reshape(bshape)
        QUANT[name] = (q, s, z)
        return f

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    if kind == "cnn":
        hw = 16 if size == "small" else 224
        c1, c2 = (16, 32) if size == "small" else (32, 64)
        inputs = {"input": ("float32", [1, 3, hw, hw])}
        x = "input"
        w1 = weight("w1", normal([c1, 3, 3, 3], 0.3), "transpose")
        b1 = weight("b1", np.full([c1], 0.05, np.float32), "constant_of_shape")
        x = node("Conv", [x, w1, b1], ["conv1"], pads=[1, 1, 1, 1])
        x = node("Relu", [x], ["relu1"])
        w2 = weight("w2", quantized("w2", [c2, c1, 3, 3], 0), "dequant:0")
        b2 = weight("b2", normal([c2], 0.1), "cast")
        x = node("Conv", [x, w2, b2], ["conv2"], pads=[1, 1, 1, 1], strides=[2, 2])
        x = node("Relu", [x], ["relu2"])
        w3 = weight("w3", normal([c2, 1, 3, 3], 0.3), "reshape")
        b3 = weight("b3", quantized("b3", [c2], None, np.int32), "dequant")
        x = node("Conv", [x, w3, b3], ["conv3"], pads=[1, 1, 1, 1], group=c2)
        x = node("Relu", [x], ["relu3"])
        x = node("MaxPool", [x], ["pool"], kernel_shape=[2, 2], strides=[2, 2])
        w4 = weight("w4", normal([c2, c2, 1, 1], 0.2), "constant")
        x = node("Conv", [x, w4], ["conv4"])
        x = node("GlobalAveragePool", [x], ["gap"])
        x = node("Flatten", [x], ["flat"], axis=1)
        wf = weight("wfc", normal([10, c2], 0.3), "cast_transpose")
        bf = weight("bfc", np.zeros([10], np.float32), "constant_of_shape")
        node("Gemm", [x, wf, bf], ["logits"], transB=1)
        out_shape = [1, 10]
    else:
        d, h = (64, 128) if size == "small" else (512, 2048)
        inputs = {"input": ("float32", [1, d])}
        w1 = weight("w1", normal([d, h], d ** -0.5), "transpose")
        b1 = weight("b1", np.full([h], 0.01, np.float32), "constant_of_shape")
        x = node("MatMul", ["input", w1], ["mm1"])
        x = node("Add", [x, b1], ["add1"])
        x = node("Relu", [x], ["relu1"])
        w2 = weight("w2", quantized("w2", [h, h], 1), "dequant:1")
        b2 = weight("b2", normal([h], 0.1), "cast")
        x = node("MatMul", [x, w2], ["mm2"])
        x = node("Add", [x, b2], ["add2"])
        x = node("Tanh", [x], ["tanh"])
        w3 = weight("w3", normal([h, h], h ** -0.5), "reshape")
        x = node("MatMul", [x, w3], ["mm3"])
        x = node("Relu", [x], ["relu3"])
        w4 = weight("w4", normal([10, h], h ** -0.5), "cast")
        b4 = weight("b4", normal([10], 0.1), "constant")
        node("Gemm", [x, w4, b4], ["logits"], transB=1)
        out_shape = [1, 10]

    g = helper.make_graph(
        nodes, "%s_%s" % (kind, "stored" if stored else "computed"),
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, (_, s) in inputs.items()],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, out_shape)],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", COMPUTED_OPSET)],
                          producer_name="bench/zoo/zoo.py")
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    return m


# --------------------------------------------------------------------------
# The models.
# --------------------------------------------------------------------------

def _register_all():
    S64 = image(1, h=64)
    F224 = image(1, h=224)
    cls10 = {"num_classes": 10}

    def vision(name, builder, small_kw=None, full_kw=None, small_in=S64,
               full_in=F224, group="torchvision", outputs=("logits",)):
        register(name, group, builder, list(outputs),
                 Config(dict(small_kw if small_kw is not None else cls10), small_in),
                 Config(dict(full_kw or {}), full_in))

    # torchvision classification.
    for n in ("resnet18", "resnet50", "resnext50_32x4d", "wide_resnet50_2"):
        vision(n, lambda n=n, **kw: b_resnet(n, **kw),
               dict(layers=[1, 1, 1, 1], num_classes=10))
    vision("densenet121", b_densenet,
           dict(growth_rate=16, block_config=(2, 2, 2, 2), num_init_features=32,
                bn_size=2, num_classes=10))
    for n in ("vgg16", "vgg19", "vgg16_bn"):
        vision(n, lambda n=n, **kw: b_vgg(n, **kw), dict(shrink=4, num_classes=10))
    vision("inception_v3", lambda **kw: tv("inception_v3", aux_logits=False,
                                           init_weights=True, **kw),
           cls10, small_in=image(1, h=96), full_in=image(1, h=299))
    vision("googlenet", lambda **kw: tv("googlenet", aux_logits=False,
                                        init_weights=True, **kw), cls10)
    vision("squeezenet1_1", lambda **kw: tv("squeezenet1_1", **kw), cls10)
    vision("shufflenet_v2_x1_0", lambda **kw: tv("shufflenet_v2_x1_0", **kw), cls10)
    vision("mobilenet_v2", lambda **kw: tv("mobilenet_v2", **kw),
           dict(width_mult=0.5, num_classes=10))
    vision("mobilenet_v3_small", lambda **kw: tv("mobilenet_v3_small", **kw),
           dict(width_mult=0.5, num_classes=10))
    vision("mobilenet_v3_large", lambda **kw: tv("mobilenet_v3_large", **kw),
           dict(width_mult=0.5, num_classes=10))
    vision("mnasnet1_0", b_mnasnet, dict(alpha=0.5, num_classes=10))
    vision("efficientnet_b0", b_efficientnet_b0,
           dict(width_mult=0.5, depth_mult=0.5, num_classes=10))
    vision("efficientnet_v2_s", lambda **kw: tv("efficientnet_v2_s", **kw), cls10)
    vision("regnet_y_400mf", lambda **kw: tv("regnet_y_400mf", **kw), cls10)
    vision("convnext_tiny", b_convnext,
           dict(stages=[(32, 64, 1), (64, 128, 1), (128, 256, 2), (256, None, 1)],
                num_classes=10))
    vision("swin_t", b_swin,
           dict(embed_dim=32, depths=[2, 2, 2, 2], num_heads=[2, 4, 8, 16],
                window_size=[4, 4], num_classes=10))
    vision("vit_b_16", b_vit,
           dict(image_size=64, patch_size=16, num_layers=2, num_heads=4,
                hidden_dim=64, mlp_dim=128, num_classes=10))
    vision("maxvit_t", b_maxvit,
           dict(input_size=(64, 64), stem_channels=16, partition_size=2,
                block_channels=[32, 64, 128, 256], block_layers=[1, 1, 1, 1],
                head_dim=16, stochastic_depth_prob=0.0, num_classes=10))
    vision("alexnet", b_alexnet, dict(small=True, num_classes=10))

    # timm.
    for n in ("cspdarknet53", "ghostnet_100", "repvgg_a0"):
        vision(n, lambda n=n, **kw: b_timm(n, **kw), cls10, group="timm")
    vision("efficientformer_l1", lambda **kw: b_timm("efficientformer_l1", **kw),
           # Its attention biases are for a 7x7 last stage: 224x224 inputs.
           dict(depths=(1, 1, 2, 2), embed_dims=(16, 32, 64, 128), num_vit=1,
                num_classes=10), small_in=image(1, h=224), group="timm")

    # Detection and segmentation.
    for n, yaml in (("yolov8n", "yolov8n.yaml"), ("yolo11n", "yolo11n.yaml")):
        register(n, "ultralytics", lambda yaml=yaml: b_yolo(yaml), ["output0"],
                 Config({}, image(1, h=128, name="images")),
                 Config({}, image(1, h=640, name="images")))
    register("ssdlite320_mobilenet_v3_large", "torchvision", b_ssdlite,
             ["bbox_regression", "cls_logits"],
             Config(dict(num_classes=10), image(1, h=160)), Config({}, image(1, h=320)))
    register("fcn_resnet50", "torchvision", b_fcn, ["out"],
             Config(dict(small=True), S64), Config({}, image(1, h=512)))
    register("deeplabv3_mobilenet_v3_large", "torchvision",
             lambda **kw: b_tvseg("deeplabv3_mobilenet_v3_large", **kw), ["out"],
             Config(dict(num_classes=4, aux_loss=False), image(1, h=128)),
             Config(dict(aux_loss=False), image(1, h=512)))
    register("lraspp_mobilenet_v3_large", "torchvision",
             lambda **kw: b_tvseg("lraspp_mobilenet_v3_large", **kw), ["out"],
             Config(dict(num_classes=4), image(1, h=128)), Config({}, image(1, h=512)))
    register("smp_unet", "segmentation_models_pytorch", b_smp_unet, ["mask"],
             Config(dict(encoder_name="resnet18", decoder_channels=(64, 32, 16, 8, 4),
                         classes=2), S64),
             Config(dict(encoder_name="resnet34", classes=1), image(1, h=256)))

    # OCR.
    register("crnn", "ocr", b_crnn, ["log_probs"],
             Config(dict(ch=(16, 32, 64, 64), hidden=32), image(1, c=1, h=32, w=64)),
             Config({}, image(1, c=1, h=32, w=320)))
    register("dbnet", "ocr", b_dbnet, ["prob_map"],
             Config(dict(small=True, inner=64), S64), Config({}, image(1, h=640)))

    # Audio.
    register("vad_gru", "audio", lambda **kw: b_vad("gru", **kw), ["speech_prob", "hn"],
             Config(dict(mels=40, ch=32, hidden=32),
                    {"input": ("float32", [1, 40, 32]), "h0": ("float32", [2, 1, 32])}),
             Config(dict(mels=64, ch=128, hidden=128),
                    {"input": ("float32", [1, 64, 500]),
                     "h0": ("float32", [2, 1, 128])}))
    register("vad_lstm", "audio", lambda **kw: b_vad("lstm", **kw), ["speech_prob"],
             Config(dict(mels=40, ch=32, hidden=32), {"input": ("float32", [1, 40, 32])}),
             Config(dict(mels=64, ch=128, hidden=128),
                    {"input": ("float32", [1, 64, 500])}))
    register("wav2vec2", "transformers", b_wav2vec2, ["last_hidden_state"],
             Config(dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, conv_dim=(32,) * 7,
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                         vocab_size=32),
                    {"input_values": ("float32", [1, 4000])}),
             Config({}, {"input_values": ("float32", [1, 16000])}))
    register("whisper_encoder", "transformers", b_whisper_encoder, ["last_hidden_state"],
             Config(dict(vocab_size=1000, num_mel_bins=80, d_model=64, encoder_layers=2,
                         encoder_attention_heads=4, decoder_layers=1,
                         decoder_attention_heads=4, encoder_ffn_dim=128,
                         decoder_ffn_dim=128, max_source_positions=50,
                         max_target_positions=32, pad_token_id=0, bos_token_id=0,
                         eos_token_id=0, decoder_start_token_id=1),
                    {"input_features": ("float32", [1, 80, 100])}),
             # whisper-tiny
             Config(dict(d_model=384, encoder_layers=4, encoder_attention_heads=6,
                         decoder_layers=4, decoder_attention_heads=6,
                         encoder_ffn_dim=1536, decoder_ffn_dim=1536),
                    {"input_features": ("float32", [1, 80, 3000])}))

    # Transformers from configs.
    tiny = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=128)
    si, sr = tokens(16, 1000, ("input_ids", "attention_mask", "token_type_ids"), 2)
    fi, fr = tokens(128, 30522, ("input_ids", "attention_mask", "token_type_ids"), 2)
    register("bert", "transformers", b_bert, ["last_hidden_state", "pooler_output"],
             Config(dict(tiny, vocab_size=1000, max_position_embeddings=64), si, sr),
             Config({}, fi, fr))
    register("distilbert", "transformers", b_distilbert, ["last_hidden_state"],
             Config(dict(vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                         max_position_embeddings=64), *tokens(16, 1000)),
             Config({}, *tokens(128, 30522)))
    register("roberta", "transformers", b_roberta, ["last_hidden_state", "pooler_output"],
             Config(dict(tiny, vocab_size=1000, max_position_embeddings=66,
                         type_vocab_size=1), *tokens(16, 1000)),
             Config(dict(vocab_size=50265, max_position_embeddings=514,
                         type_vocab_size=1), *tokens(128, 50265)))
    register("gpt2", "transformers", b_gpt2, ["logits"],
             Config(dict(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=64),
                    *tokens(16, 1000)),
             Config({}, *tokens(128, 50257)))
    register("t5_encoder", "transformers", b_t5_encoder, ["last_hidden_state"],
             Config(dict(vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                         num_heads=4, relative_attention_num_buckets=8),
                    *tokens(16, 1000)),
             Config({}, *tokens(128, 32128)))   # T5Config() is t5-small
    register("clip_text", "transformers", b_clip_text,
             ["last_hidden_state", "pooler_output"],
             Config(dict(tiny, vocab_size=1000, max_position_embeddings=16),
                    *tokens(16, 1000)),
             Config({}, *tokens(77, 49408)))
    register("clip_vision", "transformers", b_clip_vision,
             ["last_hidden_state", "pooler_output"],
             Config(dict(tiny, image_size=64, patch_size=16),
                    image(1, h=64, name="pixel_values")),
             Config({}, image(1, h=224, name="pixel_values")))  # ViT-B/32
    register("llama", "transformers", b_llama, ["logits"],
             Config(dict(tiny, vocab_size=1000, num_key_value_heads=2,
                         max_position_embeddings=128), *tokens(16, 1000)),
             # SmolLM-135M's shape
             Config(dict(vocab_size=49152, hidden_size=576, intermediate_size=1536,
                         num_hidden_layers=30, num_attention_heads=9,
                         num_key_value_heads=3, max_position_embeddings=2048,
                         tie_word_embeddings=True), *tokens(128, 49152)))
    register("unet2d", "diffusers", b_unet2d, ["out_sample"],
             Config(dict(sample_size=32, in_channels=3, out_channels=3,
                         block_out_channels=(32, 64), layers_per_block=1,
                         down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                         up_block_types=("AttnUpBlock2D", "UpBlock2D"),
                         norm_num_groups=8),
                    {"sample": ("float32", [1, 3, 32, 32]), "timestep": ("int64", [1])},
                    {"timestep": (0, 1000)}),
             # google/ddpm-cifar10-32's shape
             Config(dict(sample_size=32, in_channels=3, out_channels=3,
                         block_out_channels=(128, 256, 256, 256), layers_per_block=2,
                         down_block_types=("DownBlock2D", "AttnDownBlock2D",
                                           "DownBlock2D", "DownBlock2D"),
                         up_block_types=("UpBlock2D", "UpBlock2D", "AttnUpBlock2D",
                                         "UpBlock2D")),
                    {"sample": ("float32", [1, 3, 32, 32]), "timestep": ("int64", [1])},
                    {"timestep": (0, 1000)}))
    register("unet2d_cond", "diffusers", b_unet2d_cond, ["out_sample"],
             Config(dict(sample_size=16, in_channels=4, out_channels=4,
                         block_out_channels=(32, 64), layers_per_block=1,
                         down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                         up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
                         cross_attention_dim=32, attention_head_dim=8,
                         norm_num_groups=8),
                    {"sample": ("float32", [1, 4, 16, 16]), "timestep": ("int64", [1]),
                     "encoder_hidden_states": ("float32", [1, 8, 32])},
                    {"timestep": (0, 1000)}),
             # Stable Diffusion 1.x's UNet (860M parameters)
             Config(dict(sample_size=64, cross_attention_dim=768),
                    {"sample": ("float32", [1, 4, 64, 64]), "timestep": ("int64", [1]),
                     "encoder_hidden_states": ("float32", [1, 77, 768])},
                    {"timestep": (0, 1000)}))

    # Computed weights, written with onnx.helper.
    for kind in ("cnn", "mlp"):
        for stored in (False, True):
            name = "%s_%s" % (kind, "stored" if stored else "computed")
            shape_s = [1, 3, 16, 16] if kind == "cnn" else [1, 64]
            shape_f = [1, 3, 224, 224] if kind == "cnn" else [1, 512]
            register(name, "onnx", lambda size, k=kind, s=stored: _computed(k, s, size),
                     ["logits"],
                     Config(dict(size="small"), {"input": ("float32", shape_s)}),
                     Config(dict(size="full"), {"input": ("float32", shape_f)}),
                     kind="onnx", twin="%s_%s" % (kind, "computed" if stored else "stored"))


_register_all()


# --------------------------------------------------------------------------
# Export.
# --------------------------------------------------------------------------

def make_feed(model, size, seed=0):
    """Random inputs: standard normal floats, integers in their range."""
    rng = np.random.default_rng(seed)
    cfg = model.config(size)
    feed = {}
    for name, (dtype, shape) in cfg.inputs.items():
        if dtype.startswith("int"):
            lo, hi = cfg.ranges.get(name, (0, 2))
            feed[name] = rng.integers(lo, hi, size=shape).astype(dtype)
        else:
            feed[name] = rng.standard_normal(shape).astype(dtype)
    return feed


def strip_value_info(graph):
    """Removes every value_info of a graph and of its subgraphs."""
    del graph.value_info[:]
    for n in graph.node:
        for a in n.attribute:
            if a.HasField("g"):
                strip_value_info(a.g)
            for g in a.graphs:
                strip_value_info(g)


def data_files(model):
    """The external data files that an onnx.ModelProto's tensors name."""
    files = set()
    for t in _all_tensors(model.graph):
        if t.data_location == 1:  # EXTERNAL
            for e in t.external_data:
                if e.key == "location":
                    files.add(e.value)
    return sorted(files)


def describe(path):
    """Inputs (name, dtype, shape), outputs, opset and external data of a
    written ONNX file, read back from it."""
    import onnx
    from onnx import helper
    m = onnx.load(path, load_external_data=False)
    init = {t.name for t in m.graph.initializer}

    def vi(v):
        t = v.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in t.shape.dim]
        return {"name": v.name, "dtype": helper.tensor_dtype_to_np_dtype(t.elem_type).name,
                "shape": dims}

    return {"inputs": [vi(v) for v in m.graph.input if v.name not in init],
            "outputs": [vi(v)["name"] for v in m.graph.output],
            "opset": next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
                          None),
            "value_info": len(m.graph.value_info),
            "nodes": len(m.graph.node),
            "external_data": data_files(m)}


def ort_run(model, feed):
    """ONNX Runtime's outputs for a file path or serialized model; the feed's
    arrays go to the graph inputs in order."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    # Basic optimizations only: the extended ones include approximations
    # (a DequantizeLinear'd int8 weight's MatMul runs with the activations
    # quantized too: 1% of the output range on mlp_computed).
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    s = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    return s.run(None, {n: v for n, v in zip(names, feed.values())})


def ort_check(path, feed, want):
    """Runs the file in ONNX Runtime and compares with the reference outputs
    (`want`, a list of arrays: PyTorch's, or for the hand-written models
    those of their twin in ONNX Runtime); returns a dict for the manifest."""
    try:
        got = ort_run(path, feed)
    except Exception as e:
        return {"status": "error", "error": "%s: %s" % (type(e).__name__,
                                                        str(e).splitlines()[0][:300])}
    if want is None:
        return {"status": "ran"}
    if len(got) != len(want):
        return {"status": "mismatch", "error": "%d outputs, PyTorch gave %d" % (
            len(got), len(want))}
    errs, rels = [], []
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return {"status": "mismatch", "error": "output shape %s, PyTorch %s" % (
                list(g.shape), list(w.shape))}
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        e = float(np.max(np.abs(g64 - w64))) if g.size else 0.0
        errs.append(e)
        rng = float(np.max(np.abs(w64))) if w.size else 0.0
        rels.append(e / rng if rng else e)
    ok = all(r <= 1e-3 for r in rels)
    return {"status": "ok" if ok else "mismatch", "max_abs_err": max(errs),
            "range_rel_err": max(rels)}


def torch_outputs(module, feed):
    import torch
    args = tuple(torch.from_numpy(v) for v in feed.values())
    with torch.no_grad():
        out = module(*args)
    if isinstance(out, torch.Tensor):
        out = (out,)
    flat = []

    def walk(o):
        if isinstance(o, torch.Tensor):
            flat.append(o.detach().numpy())
        elif isinstance(o, (list, tuple)):
            for x in o:
                walk(x)
        elif isinstance(o, dict):
            for x in o.values():
                walk(x)
    walk(out)
    return args, flat


def short(e):
    """One line for an exception: its type and the first meaningful line."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    # The exporters wrap the real error: keep the most specific line.
    for l in lines:
        if any(k in l for k in ("Error", "error", "Unsupported", "unsupported",
                                "not supported", "Failed", "failed")):
            return ("%s: %s" % (type(e).__name__, l))[:400]
    return ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:400]


def export_torch(module, args, path, exporter, in_names, out_names):
    import torch
    tmp = path + ".tmp.onnx"
    for p in (tmp, tmp + ".data"):
        if os.path.exists(p):
            os.remove(p)
    sink = io.StringIO()
    with torch.no_grad(), contextlib.redirect_stdout(sink):
        if exporter == "torchscript":
            torch.onnx.export(module, args, tmp, dynamo=False,
                              opset_version=TORCHSCRIPT_OPSET, input_names=in_names,
                              output_names=out_names, do_constant_folding=True)
        else:
            torch.onnx.export(module, args, tmp, dynamo=True, external_data=True,
                              input_names=in_names, output_names=out_names)
    # The dynamo exporter names its data file after the model file: rewrite
    # the locations to the final name.
    if os.path.exists(tmp + ".data"):
        import onnx
        m = onnx.load(tmp, load_external_data=False)
        final = os.path.basename(path) + ".data"
        for t in _all_tensors(m.graph):
            if t.data_location == 1:
                for e in t.external_data:
                    if e.key == "location":
                        e.value = final
        os.replace(tmp + ".data", path + ".data")
        onnx.save(m, tmp)
    os.replace(tmp, path)


def _all_tensors(graph):
    for t in graph.initializer:
        yield t
    for n in graph.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            if a.HasField("g"):
                yield from _all_tensors(a.g)
            for g in a.graphs:
                yield from _all_tensors(g)


def write_novi(path, novi_path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    before = m.SerializeToString()
    strip_value_info(m.graph)
    tmp = novi_path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    if m.SerializeToString() == before:
        # Nothing to strip (TorchScript writes no value_info for static
        # shapes): a hard link to the same bytes where the file system can.
        try:
            os.link(path, tmp)
        except OSError:
            onnx.save(m, tmp)
    else:
        onnx.save(m, tmp)  # external tensors keep naming the twin's .data
    os.replace(tmp, novi_path)


def file_name(model, exporter, novi):
    base = model.name if model.kind == "onnx" else "%s_%s" % (model.name, exporter)
    return base + ("_novi" if novi else "") + ".onnx"


def entry(model, exporter, size, novi, path):
    cfg = model.config(size)
    e = {"file": os.path.basename(path), "model": model.name, "group": model.group,
         "exporter": exporter, "variant": "novi" if novi else "", "size": size,
         "inputs": [{"name": n, "dtype": d, "shape": list(s),
                     **({"low": cfg.ranges[n][0], "high": cfg.ranges[n][1]}
                        if n in cfg.ranges else {})}
                    for n, (d, s) in cfg.inputs.items()],
         "outputs": list(model.outputs)}
    return e


def finish_entry(e, path, model, size):
    """Reads the written file back: the inputs as the file names them (in
    graph order, with the ranges of the registry by position)."""
    d = describe(path)
    spec = e["inputs"]
    by_name = {s["name"]: s for s in spec}
    ins = []
    for i, v in enumerate(d["inputs"]):
        s = by_name.get(v["name"]) or (spec[i] if i < len(spec) else {})
        x = dict(v)
        if any(isinstance(x, str) or x is None for x in v["shape"]) and s.get("shape"):
            x["shape"] = s["shape"]   # symbolic dims: the registry's sizes
        for k in ("low", "high"):
            if k in s:
                x[k] = s[k]
        ins.append(x)
    e["inputs"] = ins
    e["outputs"] = d["outputs"]
    e["opset"] = d["opset"]
    e["nodes"] = d["nodes"]
    e["value_info"] = d["value_info"]
    e["external_data"] = d["external_data"]
    e["bytes"] = os.path.getsize(path) + sum(
        os.path.getsize(os.path.join(os.path.dirname(path), f))
        for f in d["external_data"] if os.path.exists(os.path.join(os.path.dirname(path), f)))
    return e


def export_model(model, size, exporters, out, force, check, old, log):
    """Exports one model with each exporter (and its _novi twin); returns
    the manifest entries."""
    import torch
    entries = []
    cfg = model.config(size)
    jobs = ["onnx"] if model.kind == "onnx" else exporters

    def fresh(path, exporter, novi):
        """An existing file from an earlier run of the same size."""
        if force or not os.path.exists(path):
            return None
        prev = old.get(os.path.basename(path))
        if prev and prev.get("size") != size:
            return None
        if prev and prev.get("status") == "ok":
            return prev
        e = entry(model, exporter, size, novi, path)
        e["status"] = "ok"
        e["note"] = "kept from an earlier run"
        return finish_entry(e, path, model, size)

    module, args, want, feed = None, None, None, make_feed(model, size)
    build_error = None
    for exporter in jobs:
        path = os.path.join(out, file_name(model, exporter, False))
        novi_path = os.path.join(out, file_name(model, exporter, True))
        kept = fresh(path, exporter, False)
        if kept:
            entries.append(kept)
            log("%-36s kept" % os.path.basename(path))
            kept_novi = fresh(novi_path, exporter, True)
            if kept_novi:
                entries.append(kept_novi)
                continue
        e = entry(model, exporter, size, False, path)
        t = time.perf_counter()
        if not kept:
            try:
                if model.kind == "onnx":
                    import onnx
                    m = model.build(size)
                    onnx.save(m, path + ".tmp")
                    os.replace(path + ".tmp", path)
                    if check and model.twin:
                        twin = REGISTRY[model.twin]
                        want = ort_run(twin.build(size).SerializeToString(), feed)
                else:
                    if build_error:
                        raise RuntimeError(build_error)
                    if module is None:
                        try:
                            module = model.build(size)
                            args, want = torch_outputs(module, feed)
                        except Exception as ex:
                            build_error = "build: " + short(ex)
                            raise RuntimeError(build_error)
                    export_torch(module, args, path, exporter, list(cfg.inputs),
                                 model.outputs)
                e["status"] = "ok"
                e["export_s"] = round(time.perf_counter() - t, 2)
                finish_entry(e, path, model, size)
                if check:
                    e["ort_check"] = ort_check(path, feed, want)
            except Exception as ex:  # record it and go on
                e["status"] = "failed"
                e["error"] = str(ex) if build_error else short(ex)
                e["export_s"] = round(time.perf_counter() - t, 2)
                e["traceback"] = traceback.format_exc()[-3000:]
                for p in (path, path + ".data", novi_path):
                    if os.path.exists(p):
                        os.remove(p)
            entries.append(e)
            log("%-36s %s %s%s" % (
                os.path.basename(path), e["status"],
                "in %.1f s" % e["export_s"],
                (": " + e["error"]) if e["status"] != "ok" else
                (", ORT vs %s: %s" % ("PyTorch" if model.kind == "torch" else
                                       model.twin, _fmt_check(e.get("ort_check")))
                 if check else "")))
        # The same graph without value_info.
        n = entry(model, exporter, size, True, novi_path)
        if not os.path.exists(path):
            n["status"] = "failed"
            n["error"] = "no %s file to strip" % exporter
        else:
            try:
                write_novi(path, novi_path)
                n["status"] = "ok"
                finish_entry(n, novi_path, model, size)
                if finish_entry(dict(e), path, model, size)["value_info"] == 0:
                    # The exporter wrote no value_info: both files hold the
                    # same graph.
                    n["identical_to"] = os.path.basename(path)
            except Exception as ex:
                n["status"] = "failed"
                n["error"] = short(ex)
        entries.append(n)
    return entries


def _fmt_check(c):
    if not c:
        return "-"
    if c["status"] in ("ok", "mismatch") and "range_rel_err" in c:
        return "%s (max err %.2g, %.2g of range)" % (c["status"], c["max_abs_err"],
                                                      c["range_rel_err"])
    return "%s%s" % (c["status"], (": " + c["error"]) if c.get("error") else "")


def load_manifest(out):
    p = os.path.join(out, MANIFEST)
    if not os.path.exists(p):
        return {}
    try:
        with open(p) as f:
            return {e["file"]: e for e in json.load(f).get("files", [])}
    except (OSError, ValueError, KeyError):
        return {}


def save_manifest(out, entries, size):
    # Keep entries of other models from earlier runs.
    old = load_manifest(out)
    for e in entries:
        old[e["file"]] = e
    files = sorted(old.values(), key=lambda e: (e["model"], e["exporter"], e["variant"]))
    tmp = os.path.join(out, MANIFEST + ".tmp")
    with open(tmp, "w") as f:
        json.dump({"generator": "bench/zoo/zoo.py", "size": size, "files": files},
                  f, indent=1)
    os.replace(tmp, os.path.join(out, MANIFEST))


def summary(entries):
    rows = {}
    for e in entries:
        if e["variant"]:
            continue
        rows.setdefault(e["model"], {})[e["exporter"]] = e
    exps = [x for x in EXPORTERS + ["onnx"] if any(x in r for r in rows.values())]
    lines = ["| model | " + " | ".join(exps) + " |",
             "|---|" + "---|" * len(exps)]
    for m, r in rows.items():
        cells = []
        for x in exps:
            e = r.get(x)
            if not e:
                cells.append("")
            elif e["status"] == "ok":
                c = e.get("ort_check")
                cells.append("ok" + ("" if not c or c["status"] == "ok" else
                                     " (ORT: %s)" % _fmt_check(c)))
            else:
                cells.append("FAILED: " + e.get("error", ""))
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", help="output directory")
    ap.add_argument("--models", help="comma-separated subset (default: all; see --list)")
    ap.add_argument("--size", choices=SIZES, default="small")
    ap.add_argument("--exporters", default=",".join(EXPORTERS),
                    help="comma-separated from: " + ",".join(EXPORTERS))
    ap.add_argument("--force", action="store_true", help="re-export existing files")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip the check of ONNX Runtime against PyTorch")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch.set_num_threads (default: torch's own)")
    a = ap.parse_args()

    if a.list:
        for m in REGISTRY.values():
            def fmt(c):
                return ", ".join("%s %s[%s]" % (n, d, "x".join(map(str, s)))
                                 for n, (d, s) in c.inputs.items())
            print("%-30s %-28s small: %s; full: %s -> %s" % (
                m.name, m.group, fmt(m.small), fmt(m.full), ",".join(m.outputs)))
        print("%d models" % len(REGISTRY))
        return 0
    if not a.out:
        ap.error("OUT_DIR is required")
    names = [m for m in a.models.split(",") if m] if a.models else list(REGISTRY)
    unknown = [m for m in names if m not in REGISTRY]
    if unknown:
        ap.error("unknown model(s): %s (see --list)" % ",".join(unknown))
    exporters = [x for x in a.exporters.split(",") if x]
    bad = [x for x in exporters if x not in EXPORTERS]
    if bad:
        ap.error("unknown exporter(s): %s" % ",".join(bad))

    import torch
    if a.threads:
        torch.set_num_threads(a.threads)
    import warnings
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)

    os.makedirs(a.out, exist_ok=True)
    old = load_manifest(a.out)
    t0 = time.perf_counter()

    def log(msg):
        print("[%5.0f s] %s" % (time.perf_counter() - t0, msg), flush=True)

    all_entries = []
    for name in names:
        model = REGISTRY[name]
        try:
            es = export_model(model, a.size, exporters, a.out, a.force, a.check, old, log)
        except Exception as ex:  # a bug in the builder itself
            es = [dict(entry(model, x, a.size, False,
                             os.path.join(a.out, file_name(model, x, False))),
                       status="failed", error=short(ex))
                  for x in (["onnx"] if model.kind == "onnx" else exporters)]
            log("%s: FAILED: %s" % (name, short(ex)))
        all_entries += es
        save_manifest(a.out, es, a.size)

    print()
    print(summary(all_entries))
    ok = sum(e["status"] == "ok" for e in all_entries)
    print("\n%d of %d files written or kept in %.0f s; manifest %s" % (
        ok, len(all_entries), time.perf_counter() - t0, os.path.join(a.out, MANIFEST)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
