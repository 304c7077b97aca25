//===- ConstantEvaluator.cpp - evaluating kiln ops on constants -----------===//
//
// Works on the row-major bytes of each constant: the layout ops (Transpose,
// Reshape, Slice, Concat, Expand, Tile, Gather) move whole elements of any
// width; Cast, DequantizeLinear and the arithmetic convert elements with
// APFloat/APInt (or f32 arithmetic where the run-time code computes in
// f32), so that a folded weight has exactly the bits the run-time code
// would have computed.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/ConstantEvaluator.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/APSInt.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

/// Results with more elements than this become dense resources (weights,
/// kept out of the IR's text as the importer keeps initializers); smaller
/// ones (shape vectors, pads) stay inline, where the per-op folders and
/// shape functions read them.
constexpr int64_t kInlineElements = 64;

/// Ops that make more elements than they read are evaluated up to this
/// many (as the per-op folders do), or as weights.
constexpr int64_t kGrowingElements = 1 << 16;

/// A constant's row-major elements, each `width` bytes (a bool is a byte).
struct Tensor {
  RankedTensorType type;
  int64_t width = 0;
  std::vector<char> bytes;

  int64_t size() const { return type.getNumElements(); }
  ArrayRef<int64_t> shape() const { return type.getShape(); }
  Type element() const { return type.getElementType(); }
  const char *at(int64_t i) const { return bytes.data() + i * width; }
  char *at(int64_t i) { return bytes.data() + i * width; }
};

int64_t byteWidth(Type t) {
  if (t.isInteger(1))
    return 1;
  if (!t.isIntOrFloat() || t.getIntOrFloatBitWidth() % 8)
    return 0;
  return t.getIntOrFloatBitWidth() / 8;
}

Tensor make(RankedTensorType type) {
  Tensor t;
  t.type = type;
  t.width = byteWidth(type.getElementType());
  t.bytes.resize(type.getNumElements() * t.width);
  return t;
}

std::optional<Tensor> read(Value v) {
  auto cst = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  if (!cst || !type || !type.hasStaticShape())
    return std::nullopt;
  Tensor t;
  t.type = type;
  t.width = byteWidth(type.getElementType());
  if (!t.width)
    return std::nullopt;
  int64_t n = type.getNumElements();
  ElementsAttr value = cst.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (type.getElementType().isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        t.bytes.push_back(b ? 1 : 0);
      return t;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      if ((int64_t)raw.size() < t.width)
        return std::nullopt;
      t.bytes.resize(n * t.width);
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(t.at(i), raw.data(), t.width);
      return t;
    }
    if ((int64_t)raw.size() != n * t.width)
      return std::nullopt;
    t.bytes.assign(raw.begin(), raw.end());
    return t;
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob || (int64_t)blob->getData().size() != n * t.width)
      return std::nullopt;
    t.bytes.assign(blob->getData().begin(), blob->getData().end());
    return t;
  }
  return std::nullopt;
}

std::optional<ElementsAttr> write(const Tensor &t) {
  if (t.element().isInteger(1)) {
    if (t.size() > kInlineElements)
      return std::nullopt;
    SmallVector<bool> values;
    for (char c : t.bytes)
      values.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(t.type, values));
  }
  if (t.size() <= kInlineElements)
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(
        t.type, ArrayRef<char>(t.bytes.data(), t.bytes.size())));
  return ElementsAttr(DenseResourceElementsAttr::get(
      t.type, "kiln_folded",
      HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(t.bytes.data(), t.bytes.size()),
          alignof(std::max_align_t))));
}

/// Row-major strides of `shape`.
SmallVector<int64_t> strides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// A tensor of type `rt` filled element by element: `source(coords,
/// inStrides)` names the element of `in` that lands at each coordinate.
template <typename Fn>
Tensor gathered(RankedTensorType rt, const Tensor &in, Fn source) {
  Tensor out = make(rt);
  SmallVector<int64_t> inStrides = strides(in.shape());
  int64_t rank = rt.getRank();
  SmallVector<int64_t> coord(rank, 0);
  for (int64_t i = 0, n = out.size(); i < n; ++i) {
    std::memcpy(
        out.at(i),
        in.at(source(ArrayRef<int64_t>(coord), ArrayRef<int64_t>(inStrides))),
        out.width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < rt.getDimSize(d))
        break;
      coord[d] = 0;
    }
  }
  return out;
}

std::optional<SmallVector<int64_t>> ints(Value v) {
  std::optional<Tensor> t = read(v);
  auto it = t ? dyn_cast<IntegerType>(t->element()) : nullptr;
  if (!it || it.getWidth() < 8)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < t->size(); ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, t->at(i), t->width);
    APInt x(it.getWidth(), raw);
    out.push_back(it.isUnsigned() ? (int64_t)x.getZExtValue()
                                  : x.getSExtValue());
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Element conversion
//===----------------------------------------------------------------------===//

/// One element as an APInt (integers, bools) or an APFloat (floats).
struct Scalar {
  std::optional<APInt> i;
  std::optional<APFloat> f;
  bool isUnsigned = false;
};

Scalar load(const Tensor &t, int64_t k) {
  Type e = t.element();
  Scalar s;
  uint64_t raw = 0;
  std::memcpy(&raw, t.at(k), t.width);
  if (auto ft = dyn_cast<FloatType>(e)) {
    s.f = APFloat(ft.getFloatSemantics(), APInt(ft.getWidth(), raw));
    return s;
  }
  auto it = cast<IntegerType>(e);
  s.i = it.getWidth() == 1 ? APInt(1, raw & 1) : APInt(it.getWidth(), raw);
  s.isUnsigned = it.isUnsigned() || it.getWidth() == 1;
  return s;
}

void storeBits(Tensor &t, int64_t k, const APInt &bits) {
  uint64_t raw =
      t.element().isInteger(1) ? (bits.isZero() ? 0 : 1) : bits.getZExtValue();
  std::memcpy(t.at(k), &raw, t.width);
}

/// Converts `s` to `to` as ONNX Cast does (floats rounded to nearest even,
/// floats to integers toward zero, integers wrapped); false where the
/// result would be undefined (a NaN or out-of-range float to an integer).
bool convert(const Scalar &s, Type to, APInt &bits) {
  if (auto ft = dyn_cast<FloatType>(to)) {
    APFloat x(ft.getFloatSemantics());
    bool lost;
    if (s.f) {
      x = *s.f;
      x.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    } else {
      x.convertFromAPInt(*s.i, !s.isUnsigned, APFloat::rmNearestTiesToEven);
    }
    bits = x.bitcastToAPInt();
    return true;
  }
  auto it = cast<IntegerType>(to);
  if (it.getWidth() == 1) {
    bits = APInt(1, s.f ? !s.f->isZero() : !s.i->isZero());
    return true;
  }
  if (s.f) {
    APSInt r(it.getWidth(), it.isUnsigned());
    bool exact;
    if (s.f->isNaN() || s.f->convertToInteger(r, APFloat::rmTowardZero,
                                              &exact) == APFloat::opInvalidOp)
      return false;
    bits = r;
    return true;
  }
  bits = s.isUnsigned ? s.i->zextOrTrunc(it.getWidth())
                      : s.i->sextOrTrunc(it.getWidth());
  return true;
}

float loadF32(const Tensor &t, int64_t k) {
  float x;
  std::memcpy(&x, t.at(k), 4);
  return x;
}

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

std::optional<Tensor> evalTranspose(TransposeOp op, const Tensor &in,
                                    RankedTensorType rt) {
  int64_t rank = rt.getRank();
  SmallVector<int64_t> perm;
  if (auto p = op.getPerm())
    perm.assign(p->begin(), p->end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  if ((int64_t)perm.size() != rank)
    return std::nullopt;
  return gathered(rt, in, [&](ArrayRef<int64_t> c, ArrayRef<int64_t> is) {
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d)
      k += c[d] * is[perm[d]];
    return k;
  });
}

std::optional<Tensor> evalSlice(SliceOp op, const Tensor &in,
                                RankedTensorType rt) {
  auto starts = ints(op.getStarts());
  if (!starts)
    return std::nullopt;
  int64_t rank = rt.getRank();
  SmallVector<int64_t> axes, steps;
  if (op.getAxes()) {
    auto a = ints(op.getAxes());
    if (!a)
      return std::nullopt;
    axes = *a;
  } else {
    for (int64_t d = 0; d < (int64_t)starts->size(); ++d)
      axes.push_back(d);
  }
  if (op.getSteps()) {
    auto s = ints(op.getSteps());
    if (!s)
      return std::nullopt;
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || steps.size() != starts->size())
    return std::nullopt;
  // Per dim: the first input index and the step; the result type already
  // holds each extent.
  SmallVector<int64_t> first(rank, 0), step(rank, 1);
  for (auto [axis, s, st] : llvm::zip(axes, *starts, steps)) {
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || st == 0)
      return std::nullopt;
    int64_t dim = in.shape()[axis];
    if (s < 0)
      s += dim;
    s = st > 0 ? std::clamp<int64_t>(s, 0, dim)
               : std::clamp<int64_t>(s, 0, dim - 1);
    first[axis] = s;
    step[axis] = st;
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t last = first[d] + (rt.getDimSize(d) - 1) * step[d];
    if (rt.getDimSize(d) > 0 &&
        (last < 0 || last >= in.shape()[d] || first[d] >= in.shape()[d]))
      return std::nullopt;
  }
  return gathered(rt, in, [&](ArrayRef<int64_t> c, ArrayRef<int64_t> is) {
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d)
      k += (first[d] + c[d] * step[d]) * is[d];
    return k;
  });
}

/// Expand and the broadcast operands of elementwise ops: the input element
/// that broadcasts to each output coordinate (shapes aligned at the right).
int64_t broadcastSource(ArrayRef<int64_t> c, ArrayRef<int64_t> inShape,
                        ArrayRef<int64_t> inStrides) {
  int64_t k = 0, off = (int64_t)c.size() - (int64_t)inShape.size();
  for (int64_t d = 0; d < (int64_t)inShape.size(); ++d)
    if (inShape[d] != 1)
      k += c[d + off] * inStrides[d];
  return k;
}

std::optional<Tensor> evalExpand(const Tensor &in, RankedTensorType rt) {
  if (in.type.getRank() > rt.getRank())
    return std::nullopt;
  return gathered(rt, in, [&](ArrayRef<int64_t> c, ArrayRef<int64_t> is) {
    return broadcastSource(c, in.shape(), is);
  });
}

std::optional<Tensor> evalTile(const Tensor &in, RankedTensorType rt) {
  if (in.type.getRank() != rt.getRank())
    return std::nullopt;
  return gathered(rt, in, [&](ArrayRef<int64_t> c, ArrayRef<int64_t> is) {
    int64_t k = 0;
    for (int64_t d = 0; d < (int64_t)c.size(); ++d)
      k += (c[d] % in.shape()[d]) * is[d];
    return k;
  });
}

std::optional<Tensor> evalConcat(ConcatOp op, RankedTensorType rt) {
  int64_t rank = rt.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  SmallVector<Tensor> ins;
  for (Value v : op.getInputs()) {
    auto t = read(v);
    if (!t)
      return std::nullopt;
    ins.push_back(std::move(*t));
  }
  Tensor out = make(rt);
  // outer x (axis extent x inner) blocks, one per input in turn.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= rt.getDimSize(d);
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor &t : ins) {
      int64_t block = outer ? t.size() / outer : 0;
      std::memcpy(out.at(pos), t.at(o * block), block * t.width);
      pos += block;
    }
  if (pos != out.size())
    return std::nullopt;
  return out;
}

std::optional<Tensor> evalGather(GatherOp op, const Tensor &in,
                                 RankedTensorType rt) {
  auto idx = ints(op.getIndices());
  if (!idx)
    return std::nullopt;
  int64_t rank = in.type.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  int64_t dim = in.shape()[axis];
  for (int64_t &i : *idx) {
    if (i < 0)
      i += dim;
    if (i < 0 || i >= dim)
      return std::nullopt;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= in.shape()[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= in.shape()[d];
  Tensor out = make(rt);
  if (out.size() != outer * (int64_t)idx->size() * inner)
    return std::nullopt;
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : *idx) {
      std::memcpy(out.at(pos), in.at((o * dim + i) * inner), inner * in.width);
      pos += inner;
    }
  return out;
}

std::optional<Tensor> evalCast(const Tensor &in, RankedTensorType rt) {
  Tensor out = make(rt);
  APInt bits;
  for (int64_t k = 0; k < in.size(); ++k) {
    if (!convert(load(in, k), rt.getElementType(), bits))
      return std::nullopt;
    storeBits(out, k, bits);
  }
  return out;
}

std::optional<Tensor> evalConstantOfShape(ConstantOfShapeOp op,
                                          RankedTensorType rt) {
  Tensor out = make(rt);
  uint64_t raw = 0;
  if (auto value = op.getValue()) {
    auto dense = dyn_cast<DenseElementsAttr>(*value);
    if (!dense || dense.getNumElements() != 1 ||
        dense.getElementType() != rt.getElementType())
      return std::nullopt;
    if (rt.getElementType().isInteger(1))
      raw = *dense.getValues<bool>().begin() ? 1 : 0;
    else if ((int64_t)dense.getRawData().size() >= out.width)
      std::memcpy(&raw, dense.getRawData().data(), out.width);
    else
      return std::nullopt;
  } else if (!rt.getElementType().isF32()) {
    return std::nullopt; // the default value is a float32 zero
  }
  for (int64_t k = 0; k < out.size(); ++k)
    std::memcpy(out.at(k), &raw, out.width);
  return out;
}

/// y = (float(x) - float(zero_point)) * scale in f32, as the lowering
/// computes it: per tensor, per slice along `axis`, or per block of
/// block_size along it (the scale and zero point then have x's shape but
/// ceil(n / block_size) along the axis, and element i reads them at its
/// index with the axis' divided by block_size).
std::optional<Tensor> evalDequantize(DequantizeLinearOp op, const Tensor &x,
                                     RankedTensorType rt) {
  if (!rt.getElementType().isF32() || !isa<IntegerType>(x.element()))
    return std::nullopt;
  auto scale = read(op.getXScale());
  if (!scale || !scale->element().isF32() || scale->size() == 0)
    return std::nullopt;
  std::optional<Tensor> zp;
  if (op.getXZeroPoint()) {
    zp = read(op.getXZeroPoint());
    if (!zp || zp->element() != x.element() || zp->size() != scale->size())
      return std::nullopt;
  }
  int64_t block = static_cast<int64_t>(op.getBlockSize());
  int64_t rank = x.type.getRank();
  // Element i = (outer, a, inner) around the axis: its parameters at a
  // (per axis), at (outer, a / block, inner) (blocked), or at 0.
  int64_t inner = 1, extent = 1, blocks = 0;
  if (scale->size() != 1 || block != 0) {
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    extent = x.shape()[axis];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= x.shape()[d];
    if (block == 0 && extent != scale->size())
      return std::nullopt;
    if (block != 0) {
      if (block < 0 || scale->type.getRank() != rank)
        return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        if (scale->shape()[d] !=
            (d == axis ? llvm::divideCeil(extent, block) : x.shape()[d]))
          return std::nullopt;
      blocks = scale->shape()[axis];
    }
  }
  auto toF32 = [](const Scalar &s) {
    APFloat f(APFloat::IEEEsingle());
    f.convertFromAPInt(*s.i, !s.isUnsigned, APFloat::rmNearestTiesToEven);
    return f.convertToFloat();
  };
  Tensor out = make(rt);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t a = (i / inner) % extent, c = 0;
    if (blocks)
      c = ((i / (inner * extent)) * blocks + a / block) * inner + i % inner;
    else if (scale->size() != 1)
      c = a;
    float v = toF32(load(x, i));
    if (zp)
      v = v - toF32(load(*zp, c));
    v = v * loadF32(*scale, c);
    std::memcpy(out.at(i), &v, 4);
  }
  return out;
}

/// Float32 elementwise arithmetic with broadcasting.
std::optional<Tensor> evalArith(Operation *op, RankedTensorType rt) {
  if (!rt.getElementType().isF32())
    return std::nullopt;
  SmallVector<Tensor> ins;
  for (Value v : op->getOperands()) {
    auto t = read(v);
    if (!t || !t->element().isF32() || t->type.getRank() > rt.getRank())
      return std::nullopt;
    ins.push_back(std::move(*t));
  }
  SmallVector<SmallVector<int64_t>> is;
  for (const Tensor &t : ins)
    is.push_back(strides(t.shape()));
  Tensor out = make(rt);
  int64_t rank = rt.getRank();
  SmallVector<int64_t> c(rank, 0);
  for (int64_t k = 0; k < out.size(); ++k) {
    float a = loadF32(ins[0], broadcastSource(c, ins[0].shape(), is[0]));
    float b = ins.size() > 1
                  ? loadF32(ins[1], broadcastSource(c, ins[1].shape(), is[1]))
                  : 0.0f;
    float r;
    if (isa<AddOp>(op))
      r = a + b;
    else if (isa<SubOp>(op))
      r = a - b;
    else if (isa<MulOp>(op))
      r = a * b;
    else if (isa<DivOp>(op))
      r = a / b;
    else if (isa<NegOp>(op))
      r = -a;
    else if (isa<SqrtOp>(op))
      r = std::sqrt(a);
    else
      return std::nullopt;
    std::memcpy(out.at(k), &r, 4);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++c[d] < rt.getDimSize(d))
        break;
      c[d] = 0;
    }
  }
  return out;
}

std::optional<Tensor> evaluate(Operation *op, RankedTensorType rt,
                               const ConstantEvaluationOptions &options) {
  if (auto cos = dyn_cast<ConstantOfShapeOp>(op))
    return evalConstantOfShape(cos, rt);
  if (auto concat = dyn_cast<ConcatOp>(op))
    return evalConcat(concat, rt);
  if (isa<AddOp, SubOp, MulOp, DivOp, NegOp, SqrtOp>(op))
    return evalArith(op, rt);
  std::optional<Tensor> in = read(op->getOperand(0));
  if (!in)
    return std::nullopt;
  if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, FlattenOp, IdentityOp>(op)) {
    if (in->element() != rt.getElementType() ||
        in->size() != rt.getNumElements())
      return std::nullopt;
    in->type = rt;
    return in;
  }
  if (auto t = dyn_cast<TransposeOp>(op))
    return evalTranspose(t, *in, rt);
  if (auto s = dyn_cast<SliceOp>(op))
    return evalSlice(s, *in, rt);
  if (isa<ExpandOp>(op))
    return evalExpand(*in, rt);
  if (isa<TileOp>(op))
    return evalTile(*in, rt);
  if (auto g = dyn_cast<GatherOp>(op))
    return evalGather(g, *in, rt);
  if (isa<CastOp>(op))
    return evalCast(*in, rt);
  if (auto dq = dyn_cast<DequantizeLinearOp>(op); dq && options.dequantize)
    return evalDequantize(dq, *in, rt);
  return std::nullopt;
}

} // namespace

std::optional<SmallVector<ElementsAttr>>
kiln::evaluateConstantOp(Operation *op,
                         const ConstantEvaluationOptions &options) {
  if (op->getNumResults() != 1 || op->getNumRegions() ||
      !isa<KilnDialect>(op->getDialect()) || isa<ConstantOp>(op))
    return std::nullopt;
  for (Value v : op->getOperands())
    if (!v.getDefiningOp<ConstantOp>())
      return std::nullopt;
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || !rt.hasStaticShape())
    return std::nullopt;
  int64_t width = byteWidth(rt.getElementType());
  if (!width || rt.getNumElements() * width > options.maxResultBytes)
    return std::nullopt;
  int64_t largestOperand = 0;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || !byteWidth(t.getElementType()))
      return std::nullopt;
    largestOperand = std::max(largestOperand, t.getNumElements());
  }
  // An op that makes more elements than it reads (ConstantOfShape, Expand,
  // Tile, a broadcasting Add) is cheaper computed at run time, where a
  // consumer reads the broadcast through its indexing, than stored, unless
  // the result is small or is a weight (every user a product or
  // convolution, perhaps through a reshape, a transpose or a cast).
  if (rt.getNumElements() > std::max(largestOperand, kGrowingElements) &&
      !llvm::all_of(op->getResult(0).getUsers(), [](Operation *user) {
        return isa<ConvOp, ConvTransposeOp, GemmOp, MatMulOp, ConvIntegerOp,
                   MatMulIntegerOp, TransposeOp, ReshapeOp, CastOp>(user);
      }))
    return std::nullopt;
  // Layout ops keep the element type; only Cast, DequantizeLinear and
  // ConstantOfShape change it.
  if (!isa<CastOp, DequantizeLinearOp, ConstantOfShapeOp>(op) &&
      getElementTypeOrSelf(op->getOperand(0).getType()) != rt.getElementType())
    return std::nullopt;
  std::optional<Tensor> out = evaluate(op, rt, options);
  if (!out)
    return std::nullopt;
  std::optional<ElementsAttr> attr = write(*out);
  if (!attr)
    return std::nullopt;
  return SmallVector<ElementsAttr>{*attr};
}

std::optional<ElementsAttr> kiln::expandSplat(Value value) {
  auto cst = value.getDefiningOp<ConstantOp>();
  auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  if (!dense || !dense.isSplat() || dense.getNumElements() <= kInlineElements)
    return std::nullopt;
  std::optional<Tensor> t = read(value);
  return t ? write(*t) : std::nullopt;
}
