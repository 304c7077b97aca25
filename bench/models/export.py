#!/usr/bin/env python3
"""Exports the peer-benchmark models to ONNX with PyTorch.

Every model is exported with `torch.onnx.export` (the TorchScript-based
exporter, `dynamo=False`) at opset 18, with random weights from
`torch.manual_seed(0)` (no pretrained weights are downloaded) and a symbolic
batch dim named "batch"; every other dim is static. The models:

| name          | source                                             | inputs                                   |
|---------------|----------------------------------------------------|------------------------------------------|
| resnet50      | torchvision resnet50 (v1.5), weights=None          | input f32 [batch,3,224,224]              |
| mobilenet_v2  | torchvision mobilenet_v2, weights=None             | input f32 [batch,3,224,224]              |
| vit_b_16      | torchvision vit_b_16, weights=None                 | input f32 [batch,3,224,224]              |
| bert_base     | transformers BertModel(BertConfig()), seq 128      | input_ids, attention_mask i64 [batch,128] |
| bert_1layer   | the same with num_hidden_layers=1                  | input_ids, attention_mask i64 [batch,128] |
| gpt2          | transformers GPT2Model(GPT2Config()), prefill of   | input_ids, attention_mask i64 [batch,128] |
|               | 128 tokens, use_cache=False                        |                                          |

Outputs: `logits` for the vision models; `last_hidden_state` and
`pooler_output` for BERT; `last_hidden_state` for GPT-2. Models are written
as OUT/NAME.onnx (weights inline, every model is under 2 GB) and skipped when
already there unless --force. With --dynamic-seq, BERT and GPT-2 get a
symbolic sequence dim ("seq") too, for length ranges (kiln-compile
--input-shape=input_ids:1..8x16..128), written as NAME_dynseq.onnx. Needs
bench/requirements.txt.

  python3 bench/models/export.py [OUT] [--models resnet50,gpt2] [--force] [--seq N]
      [--dynamic-seq]
"""

import argparse
import os
import sys
import time

OPSET = 18
SEQ = 128
DYNAMIC_SEQ = False
MODELS = ["resnet50", "mobilenet_v2", "vit_b_16", "bert_base", "bert_1layer", "gpt2"]
VISION = ["resnet50", "mobilenet_v2", "vit_b_16"]

# Per model: input names, and the (input, output) dims that are symbolic.
VISION_INPUTS = {"input": ("float32", [None, 3, 224, 224])}
BERT_INPUTS = {"input_ids": ("int64", [None, SEQ]),
               "attention_mask": ("int64", [None, SEQ])}
GPT2_INPUTS = BERT_INPUTS


def input_specs(name):
    """The model's inputs: {name: (dtype, dims with None for the batch)}.
    bench/run.py imports this so both agree on names and shapes."""
    if name in ("resnet50", "mobilenet_v2", "vit_b_16"):
        return VISION_INPUTS
    if name in ("bert_base", "bert_1layer"):
        return BERT_INPUTS
    if name == "gpt2":
        return GPT2_INPUTS
    raise KeyError(name)


def exported_path(models_dir, name):
    """The path of model NAME as this script writes it into MODELS_DIR;
    exits with a message when it has not been exported."""
    path = os.path.join(models_dir, name + ".onnx")
    if not os.path.exists(path):
        sys.exit("missing %s: run bench/models/export.py first" % path)
    return path


def vocab_size(name):
    """Token ids must lie in [0, vocab_size) for the text models."""
    return {"bert_base": 30522, "bert_1layer": 30522, "gpt2": 50257}.get(name)


def build(name):
    """Returns (module, example args, input names, output names)."""
    import torch

    if name in ("resnet50", "mobilenet_v2", "vit_b_16"):
        import torchvision

        # The fused multi-head-attention fast path of eval-mode
        # nn.TransformerEncoderLayer (ViT) has no ONNX export.
        torch.backends.mha.set_fastpath_enabled(False)
        model = getattr(torchvision.models, name)(weights=None)
        if name == "vit_b_16":
            # torchvision zero-initializes ViT's classifier, which would make
            # every logit 0 and any output check vacuous.
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        return model, (torch.randn(1, 3, 224, 224),), ["input"], ["logits"]

    if name in ("bert_base", "bert_1layer"):
        from transformers import BertConfig, BertModel

        config = BertConfig()
        if name == "bert_1layer":
            config.num_hidden_layers = 1
        bert = BertModel(config)

        class Bert(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):
                out = self.m(input_ids=input_ids, attention_mask=attention_mask,
                             return_dict=False)
                return out[0], out[1]

        ids = torch.randint(0, config.vocab_size, (1, SEQ), dtype=torch.int64)
        mask = torch.ones(1, SEQ, dtype=torch.int64)
        return (Bert(bert), (ids, mask), ["input_ids", "attention_mask"],
                ["last_hidden_state", "pooler_output"])

    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model

        config = GPT2Config()
        gpt = GPT2Model(config)

        class Gpt2(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):
                # With a mask given, transformers skips its packed-sequence
                # detection (torch.diff, which has no ONNX export).
                return self.m(input_ids=input_ids, attention_mask=attention_mask,
                              use_cache=False, return_dict=False)[0]

        ids = torch.randint(0, config.vocab_size, (1, SEQ), dtype=torch.int64)
        mask = torch.ones(1, SEQ, dtype=torch.int64)
        return (Gpt2(gpt), (ids, mask), ["input_ids", "attention_mask"],
                ["last_hidden_state"])

    raise KeyError(name)


def export(name, path):
    import torch

    torch.manual_seed(0)
    model, args, inputs, outputs = build(name)
    model.eval()
    dynamic_axes = {n: {0: "batch"} for n in inputs + outputs}
    if DYNAMIC_SEQ and name not in VISION:
        for n in inputs + ["last_hidden_state"]:
            dynamic_axes[n][1] = "seq"
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, args, tmp, dynamo=False, opset_version=OPSET,
                          input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    os.replace(tmp, path)


def main():
    global SEQ, DYNAMIC_SEQ
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="build/bench-models",
                    help="output directory (default build/bench-models)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of: " + ",".join(MODELS))
    ap.add_argument("--force", action="store_true",
                    help="re-export models that already exist")
    ap.add_argument("--seq", type=int, default=128,
                    help="sequence length of BERT and GPT-2 (default 128; "
                    "another length is written as NAME_seqN.onnx)")
    ap.add_argument("--dynamic-seq", action="store_true",
                    help="BERT and GPT-2 with a symbolic sequence dim too "
                    "(written as NAME_dynseq.onnx)")
    a = ap.parse_args()
    SEQ = a.seq
    DYNAMIC_SEQ = a.dynamic_seq
    names = [m for m in a.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        ap.error("unknown model(s): %s" % ",".join(unknown))
    os.makedirs(a.out, exist_ok=True)
    failed = []
    for name in names:
        suffix = "_seq%d" % SEQ if SEQ != 128 and name not in VISION else ""
        if DYNAMIC_SEQ and name not in VISION:
            suffix = "_dynseq"
        path = os.path.join(a.out, name + suffix + ".onnx")
        if os.path.exists(path) and not a.force:
            print("%s: exists, skipped" % path)
            continue
        t = time.perf_counter()
        try:
            export(name, path)
        except Exception as e:  # report and go on with the other models
            print("%s: export FAILED: %s: %s" % (name, type(e).__name__, e),
                  file=sys.stderr)
            failed.append(name)
            continue
        print("%s: %.1f MB in %.1f s" % (path, os.path.getsize(path) / 1e6,
                                         time.perf_counter() - t))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
