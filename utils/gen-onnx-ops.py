#!/usr/bin/env python3
"""Generates Kiln's ODS op definitions and the importer's op table from the
operator schemas of the installed `onnx` package: every operator of the
default domain, and the optimizers of the `ai.onnx.preview.training` domain.

Only the structure of each schema is used (inputs, outputs, attributes, their
kinds and defaults, and the version history); no text of the ONNX
specification is copied.  Outputs:

  include/kiln/Dialect/Kiln/IR/KilnOnnxOps.td   one ODS op per ONNX operator
  lib/Import/OnnxOpTable.inc                    per-operator import metadata

Run it from the repository root after upgrading `onnx`:
  python3 utils/gen-onnx-ops.py
"""

import argparse
import os
import re
import sys

import onnx
import onnx.defs as defs

AttrType = defs.OpSchema.AttrType
Option = defs.OpSchema.FormalParameterOption

# Ops whose semantics changed at a version without a visible change of
# signature; nodes from before that version need an upgrader in the importer.
SEMANTIC_BREAKS = {
    "Softmax": 13,
    "LogSoftmax": 13,
    "Hardmax": 13,
    # PRelu-6 applies a 1-D slope along the channel axis.
    "PRelu": 7,
    # RoiAlign-10 has no coordinate_transformation_mode and behaves as
    # output_half_pixel, which is not the later default.
    "RoiAlign": 16,
}

# The preview training domain, and its operators that kiln imports (their
# names do not clash with operators of the default domain).
TRAINING_DOMAIN = "ai.onnx.preview.training"
TRAINING_OPS = {"Adagrad", "Adam", "Momentum"}

# Ops handled by hand-written ODS (KilnOps.td), not generated here.
HAND_WRITTEN = {"Constant"}

# Result-type inference.  "same": every result has the type of operand 0;
# "broadcast": multidirectional broadcast of all operands, element type of
# operand 0; "compare": broadcast with an i1 result; "custom": implemented in
# lib/Dialect/Kiln/IR/KilnShapeInference.cpp.  Ops not listed keep the types
# that the importer finds in the model.
SHAPE_RULES = {}
for name in """Relu LeakyRelu Sigmoid Tanh Erf Gelu HardSigmoid HardSwish Softplus
    Softsign Elu Selu Celu ThresholdedRelu Mish Sqrt Exp Log Neg Abs Reciprocal
    Floor Ceil Round Sign Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh
    Not BitwiseNot Identity Softmax LogSoftmax Hardmax LRN Shrink Clip
    MeanVarianceNormalization InstanceNormalization LpNormalization
    CumSum CumProd RotaryEmbedding Swish GroupNormalization RMSNormalization
    ReverseSequence Scatter""".split():
    SHAPE_RULES[name] = "same"
for name in """Add Sub Mul Div Pow Mod BitShift BitwiseAnd BitwiseOr BitwiseXor
    Sum Mean Min Max PRelu""".split():
    SHAPE_RULES[name] = "broadcast"
for name in "Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor".split():
    SHAPE_RULES[name] = "compare"
for name in """IsNaN IsInf Where Cast CastLike MatMul Gemm Conv ConvTranspose
    BatchNormalization MaxPool AveragePool LpPool GlobalAveragePool
    GlobalMaxPool GlobalLpPool Reshape Flatten Transpose Concat Split Slice
    Gather GatherElements Squeeze Unsqueeze Expand Tile Pad Shape Size
    ConstantOfShape Range LayerNormalization ReduceMean ReduceSum ReduceMax
    ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp
    ReduceSumSquare ArgMax ArgMin Dropout QuantizeLinear DequantizeLinear
    DepthToSpace SpaceToDepth EyeLike Trilu OneHot TopK Resize
    ScatterElements ScatterND GatherND CenterCropPad AffineGrid BitCast
    DeformConv RNN GRU LSTM DynamicQuantizeLinear Einsum MatMulInteger
    QLinearMatMul ConvInteger QLinearConv GridSample RoiAlign""".split():
    SHAPE_RULES[name] = "custom"

# Ops with constant folders (lib/Dialect/Kiln/IR/KilnFolders.cpp).
FOLDERS = set("""Add Sub Mul Div Neg Identity Cast Shape Size Reshape Squeeze
    Unsqueeze Flatten Concat Gather Equal Where ConstantOfShape Slice
    Range Mod Sqrt Not And Or Xor Less Greater LessOrEqual GreaterOrEqual
    Min Max""".split())

# Ops with side effects (random number generation).
IMPURE = set("""RandomNormal RandomNormalLike RandomUniform RandomUniformLike
    Bernoulli Multinomial""".split())

# Attribute kinds overridden by Kiln: an ONNX data-type enum is kept as the
# MLIR element type it names.
TYPE_ENUM_ATTRS = {("Cast", "to"), ("EyeLike", "dtype"),
                   ("RandomNormal", "dtype"), ("RandomUniform", "dtype"),
                   ("RandomNormalLike", "dtype"),
                   ("RandomUniformLike", "dtype"), ("Multinomial", "dtype"),
                   ("Bernoulli", "dtype")}

RESERVED = {"name", "type", "loc", "operation", "attributes", "operands",
            "results", "context", "properties", "region", "regions",
            "operand", "result", "attr", "attr_dict"}


def attr_order(item):
    """Attributes in name order, except that If's branches read then-else."""
    return ({"then_branch": 0, "else_branch": 1}.get(item[0], 2), item[0])


# Mnemonics that read better than the mechanical snake case.
MNEMONICS = {"PRelu": "prelu", "MatMul": "matmul", "MatMulInteger": "matmul_integer",
             "QLinearMatMul": "qlinear_matmul", "QLinearConv": "qlinear_conv",
             "TopK": "topk", "ArgMax": "argmax", "ArgMin": "argmin",
             "CumSum": "cumsum", "CumProd": "cumprod", "IsNaN": "is_nan"}


def snake(name):
    if name in MNEMONICS:
        return MNEMONICS[name]
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def ods_ident(name):
    n = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if n in RESERVED:
        n += "_"
    return n


def signature(schema):
    ins = [(p.name, p.option) for p in schema.inputs]
    outs = [(p.name, p.option) for p in schema.outputs]
    attrs = {n: (a.type, a.required) for n, a in schema.attributes.items()}
    return ins, outs, attrs


def compatible(old, new):
    """True if a node written against `old` means the same under `new`."""
    oi, oo, oa = signature(old)
    ni, no, na = signature(new)
    if len(oi) > len(ni) or len(oo) > len(no):
        return False
    for (on, oopt), (nn, nopt) in zip(oi, ni):
        if on != nn or (oopt != nopt and not (oopt == Option.Single and nopt == Option.Optional)):
            return False
    for _, nopt in ni[len(oi):]:
        if nopt == Option.Single:
            return False
    for (on, oopt), (nn, nopt) in zip(oo, no):
        if on != nn or (oopt != nopt and not (oopt == Option.Single and nopt == Option.Optional)):
            return False
    for n, (t, req) in oa.items():
        if n not in na or na[n][0] != t or (na[n][1] and not req):
            return False
    for n, (_, req) in na.items():
        if n not in oa and req:
            return False
    return True


def ods_attr(op, name, attr):
    t = attr.type
    if (op, name) in TYPE_ENUM_ATTRS:
        base = "TypeAttr"
        if attr.required:
            return base
        return "OptionalAttr<TypeAttr>"
    base, default = {
        AttrType.FLOAT: ("F32Attr", lambda v: repr(float(v.f))),
        AttrType.INT: ("I64Attr", lambda v: str(v.i)),
        AttrType.STRING: ("StrAttr", lambda v: '"\\"%s\\""' % v.s.decode()),
        AttrType.FLOATS: ("DenseF32ArrayAttr",
                          lambda v: "{%s}" % ", ".join(repr(float(x)) + "f" for x in v.floats)),
        AttrType.INTS: ("DenseI64ArrayAttr",
                        lambda v: "{%s}" % ", ".join(str(x) for x in v.ints)),
        AttrType.STRINGS: ("StrArrayAttr", None),
        AttrType.TENSOR: ("ElementsAttr", None),
        AttrType.SPARSE_TENSOR: ("ElementsAttr", None),
        AttrType.TENSORS: ("TypedArrayAttrBase<ElementsAttr, \"array of tensors\">", None),
        AttrType.TYPE_PROTO: ("TypeAttr", None),
        AttrType.TYPE_PROTOS: ("TypeArrayAttr", None),
        AttrType.GRAPHS: ("ArrayAttr", None),
    }[t]
    if attr.required:
        return base
    dv = attr.default_value
    has_default = dv is not None and dv.type != 0 and default is not None
    if has_default and t in (AttrType.FLOATS, AttrType.INTS) and not (dv.floats or dv.ints):
        has_default = False
    if has_default:
        val = default(dv)
        if t == AttrType.FLOAT:
            val = val if "e" in val or "." in val else val + ".0"
            if val in ("inf", "-inf", "nan"):
                return "OptionalAttr<%s>" % base
        return "DefaultValuedAttr<%s, %s>" % (base, '"%s"' % val.replace('"', '\\"')
                                              if not val.startswith('"') else val)
    return "OptionalAttr<%s>" % base


def operand_kind(p):
    return {Option.Single: "Single", Option.Optional: "Optional",
            Option.Variadic: "Variadic"}[p.option]


def ods_value(p, is_result):
    base = "AnyType"
    if p.option == Option.Optional:
        return "Optional<%s>" % base
    if p.option == Option.Variadic:
        return "Variadic<%s>" % base
    return base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()

    # (domain, name) -> the newest schema, and every version of it.
    latest = {}
    history = {}
    for sc in defs.get_all_schemas_with_history():
        if sc.domain == "" or (sc.domain == TRAINING_DOMAIN and sc.name in TRAINING_OPS):
            history.setdefault((sc.domain, sc.name), []).append(sc)
    for key, versions in history.items():
        latest[key] = max(versions, key=lambda x: x.since_version)
    max_training_opset = max(sc.since_version for (d, _), sc in latest.items()
                             if d == TRAINING_DOMAIN)
    max_opset = defs.onnx_opset_version()

    td = ["//===- KilnOnnxOps.td - ONNX operators of the kiln dialect -*- tablegen -*-===//",
          "//",
          "// GENERATED by utils/gen-onnx-ops.py from the schemas of onnx %s" % onnx.__version__,
          "// (default domain, opsets up to %d; %s, opset %d). Do not edit." %
          (max_opset, TRAINING_DOMAIN, max_training_opset),
          "//",
          "//===----------------------------------------------------------------------===//",
          "",
          "#ifndef KILN_DIALECT_KILN_IR_KILNONNXOPS_TD",
          "#define KILN_DIALECT_KILN_IR_KILNONNXOPS_TD",
          "",
          'include "kiln/Dialect/Kiln/IR/KilnBase.td"',
          ""]
    table = ["// GENERATED by utils/gen-onnx-ops.py from onnx %s. Do not edit." % onnx.__version__,
             "// KILN_ONNX_MAX_OPSET: the newest default-domain opset these schemas define.",
             "#ifdef KILN_ONNX_MAX_OPSET",
             "KILN_ONNX_MAX_OPSET(%d)" % max_opset,
             "#undef KILN_ONNX_MAX_OPSET",
             "#endif",
             "// KILN_ONNX_MAX_TRAINING_OPSET: the newest %s opset." % TRAINING_DOMAIN,
             "#ifdef KILN_ONNX_MAX_TRAINING_OPSET",
             "KILN_ONNX_MAX_TRAINING_OPSET(%d)" % max_training_opset,
             "#undef KILN_ONNX_MAX_TRAINING_OPSET",
             "#endif",
             "// KILN_ONNX_OP(domain, onnxName, mlirName, sinceVersion, compatibleSince,",
             "//              inputKinds, outputKinds, regionAttrs, renamedAttrs, typeAttrs,",
             "//              requiredAttrs)",
             "#ifdef KILN_ONNX_OP"]

    for domain, name in sorted(latest):
        if name in HAND_WRITTEN:
            continue
        s = latest[(domain, name)]
        versions = sorted(history[(domain, name)], key=lambda x: x.since_version)
        compat = s.since_version
        for old in reversed(versions[:-1]):
            if not compatible(old, s):
                break
            if name in SEMANTIC_BREAKS and old.since_version < SEMANTIC_BREAKS[name]:
                break
            compat = old.since_version
        ident = snake(name)
        cls = "Kiln_%sOp" % name
        traits = []
        if name not in IMPURE:
            traits.append("Pure" if not any(a.type == AttrType.GRAPH for a in s.attributes.values())
                          else "RecursiveMemoryEffects")
        rule = SHAPE_RULES.get(name)
        if rule:
            traits.append("DeclareOpInterfaceMethods<Kiln_InferResultTypesOpInterface>")
        n_opt_in = sum(p.option != Option.Single for p in s.inputs)
        n_opt_out = sum(p.option != Option.Single for p in s.outputs)
        if n_opt_in > 1:
            traits.append("AttrSizedOperandSegments")
        if n_opt_out > 1:
            traits.append("AttrSizedResultSegments")

        names = set()
        def uniq(n):
            n = ods_ident(n)
            while n in names:
                n += "_"
            names.add(n)
            return n
        ins = []
        renamed = []
        for p in s.inputs:
            ins.append("%s:$%s" % (ods_value(p, False), uniq(p.name)))
        regions = []
        for an, a in sorted(s.attributes.items(), key=attr_order):
            if a.type == AttrType.GRAPH:
                rn = uniq(an)
                regions.append("SizedRegion<1>:$%s" % rn)
                continue
            on = uniq(an)
            if on != an:
                renamed.append((an, on))
            ins.append("%s:$%s" % (ods_attr(name, an, a), on))
        outs = ["%s:$%s" % (ods_value(p, True), uniq(p.name)) for p in s.outputs]

        kinds = "".join({"Single": "s", "Optional": "o", "Variadic": "v"}[operand_kind(p)] for p in s.inputs)
        okinds = "".join({"Single": "s", "Optional": "o", "Variadic": "v"}[operand_kind(p)] for p in s.outputs)
        td.append("def %s : Kiln_OnnxOp<\"%s\", \"%s\", %d, %d, \"%s\", \"%s\",\n    [%s]%s> {" %
                  (cls, ident, name, s.since_version, compat, kinds, okinds, ", ".join(traits),
                   ', "%s"' % domain if domain else ""))
        td.append("  let arguments = (ins%s);" % "".join("\n    " + x + ("," if i + 1 < len(ins) else "")
                                                     for i, x in enumerate(ins)))
        td.append("  let results = (outs%s);" % "".join("\n    " + x + ("," if i + 1 < len(outs) else "")
                                                    for i, x in enumerate(outs)))
        if regions:
            td.append("  let regions = (region %s);" % ", ".join(regions))
        if name in FOLDERS:
            td.append("  let hasFolder = 1;")
        if rule and rule != "custom":
            td.append('  let inferRule = "%s";' % rule.capitalize())
        td.append("}")
        td.append("")

        rattrs = ",".join(an for an, a in sorted(s.attributes.items(), key=attr_order)
                          if a.type == AttrType.GRAPH)
        ren = ",".join("%s=%s" % r for r in renamed)
        tattrs = ",".join(an for an in sorted(s.attributes) if (name, an) in TYPE_ENUM_ATTRS)
        req = ",".join(an for an, a in sorted(s.attributes.items())
                       if a.required and a.type != AttrType.GRAPH)
        table.append('KILN_ONNX_OP("%s", "%s", "kiln.%s", %d, %d, "%s", "%s", "%s", "%s", "%s", "%s")' %
                     (domain, name, ident, s.since_version, compat, kinds, okinds, rattrs, ren, tattrs, req))

    td += ["#endif // KILN_DIALECT_KILN_IR_KILNONNXOPS_TD", ""]
    table += ["#undef KILN_ONNX_OP", "#endif", ""]
    with open(os.path.join(args.root, "include/kiln/Dialect/Kiln/IR/KilnOnnxOps.td"), "w") as f:
        f.write("\n".join(td))
    with open(os.path.join(args.root, "lib/Import/OnnxOpTable.inc"), "w") as f:
        f.write("\n".join(table))
    print("generated %d ops (onnx %s, opset %d)" % (len([k for k in latest if k[1] not in HAND_WRITTEN]),
                                                   onnx.__version__, max_opset))


if __name__ == "__main__":
    sys.exit(main())
