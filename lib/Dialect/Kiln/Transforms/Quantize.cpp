//===- Quantize.cpp - calibrated INT8 quantization of a float model -------===//
//
// Post-training quantization in two passes around a calibration run:
//
//  - kiln-expose-calibration-tensors makes each tensor that quantization
//    needs a range for (the activation input and the output of every
//    quantizable Conv and MatMul) an extra result of @main, named by its
//    key, so that running the float model over calibration samples
//    observes them (kiln-compile --precision=int8 does, on the CPU);
//  - kiln-quantize reads a table of ranges (one `key<TAB>min<TAB>max` line
//    per tensor) and writes the model as a QDQ model: activations
//    quantized per tensor to int8 from their ranges, weights per output
//    channel, symmetric, the Conv bias to int32 at scale x_scale *
//    w_scale; a Relu after a Conv or MatMul is absorbed (its output range,
//    from 0, is the output's quantization, whose saturation is the Relu).
//    kiln-fold-qdq then turns each such group into an integer op. With
//    type=fp8 the quantized type is float8 e4m3 (E4M3FN), symmetric:
//    scales are magnitudes over 448, the bias stays float and a Relu
//    stays.
//
// Quantizable: 2-D convolutions (group 1) and MatMul with constant float32
// weights, and Gemm (alpha = beta = 1, A not transposed) with a constant
// B, which becomes MatMul(A, B as [K, N]) + C first.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/Transforms/ConstantValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <map>

#define DEBUG_TYPE "kiln-quantize"

namespace kiln {
#define GEN_PASS_DEF_KILNEXPOSECALIBRATIONTENSORS
#define GEN_PASS_DEF_KILNQUANTIZE
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

bool constantF32(Value v) {
  auto cst = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  return cst && isF32(v);
}

/// Gemm(A, B, C) with a constant B (alpha = beta = 1, A not transposed) as
/// MatMul(A, B') + C, B' the constant as [K, N]: the form kiln-quantize
/// and kiln-fold-qdq take.
void gemmsToMatMul(func::FuncOp fn) {
  SmallVector<GemmOp> gemms;
  fn.walk([&](GemmOp g) { gemms.push_back(g); });
  for (GemmOp g : gemms) {
    auto bt = dyn_cast<RankedTensorType>(g.getB().getType());
    if (g.getAlpha().convertToDouble() != 1.0 ||
        g.getBeta().convertToDouble() != 1.0 || g.getTransA() != 0 ||
        !constantF32(g.getB()) || !isF32(g.getA()) || !isF32(g.getY()) ||
        bt.getRank() != 2 || (g.getC() && !isF32(g.getC())))
      continue;
    auto values = constFloats(g.getB());
    if (!values)
      continue;
    int64_t r = bt.getDimSize(0), c = bt.getDimSize(1);
    bool trans = g.getTransB() != 0;
    int64_t k = trans ? c : r, n = trans ? r : c;
    SmallVector<float> kn(k * n);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        kn[i * n + j] = trans ? (*values)[j * c + i] : (*values)[i * c + j];
    OpBuilder b(g);
    Value w = floatConstant(b, g.getLoc(),
                            RankedTensorType::get({k, n}, b.getF32Type()), kn,
                            "kiln_gemm_weight");
    Value y = MatMulOp::create(b, g.getLoc(), g.getY().getType(), g.getA(), w);
    if (g.getC())
      y = AddOp::create(b, g.getLoc(), g.getY().getType(), y, g.getC());
    g.getY().replaceAllUsesWith(y);
    g->erase();
  }
}

/// A quantizable op: its activation input, its output (the op's result,
/// or the result of the Relu that is its only user) and that Relu.
struct Target {
  Operation *op;
  Value input, output;
  ReluOp relu;
};

SmallVector<Target> targets(func::FuncOp fn) {
  SmallVector<Target> out;
  fn.walk([&](Operation *op) {
    Value x, w;
    if (auto conv = dyn_cast<ConvOp>(op)) {
      auto wt = dyn_cast<RankedTensorType>(conv.getW().getType());
      if (!wt || wt.getRank() != 4 || conv.getGroup() != 1 ||
          (conv.getB() && !constantF32(conv.getB())))
        return;
      x = conv.getX();
      w = conv.getW();
    } else if (auto mm = dyn_cast<MatMulOp>(op)) {
      auto bt = dyn_cast<RankedTensorType>(mm.getB().getType());
      if (!bt || bt.getRank() != 2)
        return;
      x = mm.getA();
      w = mm.getB();
    } else {
      return;
    }
    if (!isF32(x) || !constantF32(w) || !isF32(op->getResult(0)))
      return;
    Target t{op, x, op->getResult(0), ReluOp()};
    if (op->getResult(0).hasOneUse())
      if (auto relu = dyn_cast<ReluOp>(*op->getResult(0).getUsers().begin())) {
        t.relu = relu;
        t.output = relu.getY();
      }
    out.push_back(t);
  });
  return out;
}

/// Stable names of the tensors to calibrate, in the order of `targets`:
/// a graph input's name, else its node's name and result number (with a
/// suffix where two would be the same).
struct Keys {
  std::vector<std::pair<Value, std::string>> ordered;
  DenseMap<Value, std::string> of;

  explicit Keys(func::FuncOp fn, ArrayRef<Target> ts) {
    std::map<std::string, int> used;
    auto add = [&](Value v) {
      if (of.count(v))
        return;
      std::string key;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto name =
            fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
        key = name ? name.str() : "input" + std::to_string(arg.getArgNumber());
      } else {
        std::string node = onnxNodeName(v.getLoc());
        key = (node.empty() ? v.getDefiningOp()->getName().getStringRef().str()
                            : node) +
              "#" + std::to_string(cast<OpResult>(v).getResultNumber());
      }
      if (int n = used[key]++)
        key += "~" + std::to_string(n);
      of[v] = key;
      ordered.emplace_back(v, key);
    };
    for (const Target &t : ts) {
      add(t.input);
      add(t.output);
    }
  }
};

/// Appends `values` to @main's results, each named (kiln.name) by its key.
void appendResults(func::FuncOp fn,
                   ArrayRef<std::pair<Value, std::string>> values) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  unsigned first = results.size();
  for (auto &[v, key] : values)
    results.push_back(v);
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret->erase();
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               ValueRange(results).getTypes()));
  for (auto [i, item] : llvm::enumerate(values))
    fn.setResultAttr(first + i, "kiln.name",
                     StringAttr::get(fn.getContext(), item.second));
}

struct ExposeCalibrationTensorsPass
    : public kiln::impl::KilnExposeCalibrationTensorsBase<
          ExposeCalibrationTensorsPass> {
  void runOnOperation() override {
    auto fn = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!fn)
      return;
    gemmsToMatMul(fn);
    SmallVector<Target> ts = targets(fn);
    Keys keys(fn, ts);
    appendResults(fn, keys.ordered);
  }
};

/// Quantization of a tensor with range [lo, hi] to int8: a range from 0
/// uses all 256 steps above -128; a symmetric one zero point 0; others
/// the affine map of [lo, hi] onto [-128, 127].
std::pair<float, int8_t> activationQuant(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (hi - lo <= 0)
    return {1.0f, 0};
  if (lo == 0)
    return {static_cast<float>(hi / 255), -128};
  if (std::fabs(lo + hi) <= 1e-6 * hi)
    return {static_cast<float>(hi / 127), 0};
  double scale = (hi - lo) / 255;
  double zp = std::round(-128 - lo / scale);
  return {static_cast<float>(scale),
          static_cast<int8_t>(std::clamp(zp, -128.0, 127.0))};
}

/// The largest finite float8 e4m3 (E4M3FN) value.
constexpr double kE4m3Max = 448;

/// `x` rounded to nearest even as float8 e4m3 (E4M3FN), as its bits.
uint8_t e4m3Bits(float x) {
  APFloat f(x);
  bool lost;
  f.convert(APFloat::Float8E4M3FN(), APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint8_t>(f.bitcastToAPInt().getZExtValue());
}

struct QuantizePass : public kiln::impl::KilnQuantizeBase<QuantizePass> {
  using Base::Base;

  /// type=fp8: float8 e4m3 instead of int8.
  bool fp8 = false;

  /// The scale and zero point of a tensor of range [lo, hi].
  std::pair<float, int8_t> quantOf(double lo, double hi) const {
    if (!fp8)
      return activationQuant(lo, hi);
    float scale =
        static_cast<float>(std::max(std::fabs(lo), std::fabs(hi)) / kE4m3Max);
    return {scale > 0 ? scale : 1.0f, 0};
  }

  /// The quantized element type.
  Type qType() {
    return fp8 ? Type(Float8E4M3FNType::get(&getContext()))
               : Type(IntegerType::get(&getContext(), 8));
  }

  void runOnOperation() override {
    auto fn = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!fn)
      return;
    if (type != "int8" && type != "fp8") {
      getOperation().emitError("kiln-quantize: unknown type '")
          << type << "' (int8 or fp8)";
      return signalPassFailure();
    }
    fp8 = type == "fp8";
    std::map<std::string, std::pair<double, double>> table;
    if (failed(readTable(table)))
      return signalPassFailure();
    gemmsToMatMul(fn);
    SmallVector<Target> ts = targets(fn);
    Keys keys(fn, ts);
    // What is quantized: each tensor's DequantizeLinear, by the float
    // value it replaced; an absorbed Relu's result stands for its input.
    DenseMap<Value, std::pair<Value, float>> quantized;
    DenseMap<Value, Value> absorbed;
    SmallVector<Attribute> layers;
    std::vector<std::pair<Value, std::string>> exposed;
    auto range = [&](Value v) -> const std::pair<double, double> * {
      auto it = table.find(keys.of.lookup(v));
      return it == table.end() ? nullptr : &it->second;
    };
    SmallVector<std::pair<const std::pair<double, double> *,
                          const std::pair<double, double> *>>
        ranges;
    for (const Target &t : ts)
      ranges.emplace_back(range(t.input), range(t.output));
    for (auto [t, r] : llvm::zip(ts, ranges)) {
      auto [in, out] = r;
      if (!in || !out)
        continue; // Not calibrated: stays float.
      Value input = absorbed.lookup(t.input);
      if (!input)
        input = t.input;
      Value xdq = quantize(input, *in, quantized);
      float xs = quantized[input].second;
      OpBuilder b(t.op);
      Location loc = t.op->getLoc();
      SmallVector<float> ws;
      if (auto conv = dyn_cast<ConvOp>(t.op)) {
        Value w;
        std::tie(w, ws) = weights(b, loc, conv.getW(), /*axis=*/0);
        conv.getXMutable().assign(xdq);
        conv.getWMutable().assign(w);
        if (conv.getB() && !fp8)
          conv.getBMutable().assign(bias(b, loc, conv.getB(), xs, ws));
      } else {
        auto mm = cast<MatMulOp>(t.op);
        Value w;
        std::tie(w, ws) = weights(b, loc, mm.getB(), /*axis=*/1);
        mm.getAMutable().assign(xdq);
        mm.getBMutable().assign(w);
      }
      // The output; an absorbed Relu's saturation is the quantization's
      // (int8: a range from 0; float8 is symmetric, its Relu stays).
      Value result = t.op->getResult(0);
      if (fp8) {
        result = t.output;
      } else if (t.relu) {
        absorbed[t.relu.getY()] = result;
        t.relu.getY().replaceAllUsesWith(result);
        t.relu->erase();
      }
      Value ydq = quantize(result, *out, quantized);
      // What was done, for kiln-compile --report: the layer by its output's
      // key, its scales and zero points.
      auto [is, iz] = quantOf(in->first, in->second);
      auto [os, oz] = quantOf(out->first, out->second);
      auto [wmin, wmax] = std::minmax_element(ws.begin(), ws.end());
      Builder attrs(&getContext());
      layers.push_back(attrs.getDictionaryAttr({
          attrs.getNamedAttr("name",
                             attrs.getStringAttr(keys.of.lookup(t.output))),
          attrs.getNamedAttr(
              "op", attrs.getStringAttr(t.op->getName().getStringRef())),
          attrs.getNamedAttr("input_scale", attrs.getF32FloatAttr(is)),
          attrs.getNamedAttr("input_zero_point", attrs.getI64IntegerAttr(iz)),
          attrs.getNamedAttr("output_scale", attrs.getF32FloatAttr(os)),
          attrs.getNamedAttr("output_zero_point", attrs.getI64IntegerAttr(oz)),
          attrs.getNamedAttr("weight_scale_min", attrs.getF32FloatAttr(*wmin)),
          attrs.getNamedAttr("weight_scale_max", attrs.getF32FloatAttr(*wmax)),
      }));
      exposed.emplace_back(ydq, keys.of.lookup(t.output));
    }
    getOperation()->setAttr("kiln.quantized_layers",
                            ArrayAttr::get(&getContext(), layers));
    if (exposeOutputs)
      appendResults(fn, exposed);
  }

  LogicalResult
  readTable(std::map<std::string, std::pair<double, double>> &table) {
    auto buffer = llvm::MemoryBuffer::getFile(ranges);
    if (!buffer) {
      getOperation().emitError("kiln-quantize: cannot read the ranges file '")
          << ranges << "'";
      return failure();
    }
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n', -1, false);
    for (StringRef line : lines) {
      if (line.starts_with("#"))
        continue;
      SmallVector<StringRef> fields;
      line.split(fields, '\t');
      double lo, hi;
      if (fields.size() != 3 || fields[1].trim().getAsDouble(lo) ||
          fields[2].trim().getAsDouble(hi) || !(lo <= hi)) {
        getOperation().emitError("kiln-quantize: '")
            << ranges << "': a line is not 'name<TAB>min<TAB>max': '" << line
            << "'";
        return failure();
      }
      table[fields[0].str()] = {lo, hi};
    }
    return success();
  }

  /// `v` quantized and dequantized (once per tensor): its uses, but the
  /// QuantizeLinear, read the DequantizeLinear.
  Value quantize(Value v, std::pair<double, double> r,
                 DenseMap<Value, std::pair<Value, float>> &quantized) {
    auto it = quantized.find(v);
    if (it != quantized.end())
      return it->second.first;
    auto [scale, zp] = quantOf(r.first, r.second);
    OpBuilder b(&getContext());
    if (auto arg = dyn_cast<BlockArgument>(v))
      b.setInsertionPointToStart(arg.getOwner());
    else
      b.setInsertionPointAfter(v.getDefiningOp());
    Location loc = v.getLoc();
    auto vt = cast<RankedTensorType>(v.getType());
    auto scalarF = RankedTensorType::get({}, b.getF32Type());
    auto scalarQ = RankedTensorType::get({}, qType());
    Value s = ConstantOp::create(b, loc, scalarF,
                                 DenseElementsAttr::get(scalarF, scale));
    Value z = ConstantOp::create(b, loc, scalarQ, zeroPointAttr(scalarQ, zp));
    Value q = QuantizeLinearOp::create(
        b, loc, RankedTensorType::get(vt.getShape(), qType()), v, s, z,
        b.getI64IntegerAttr(1));
    Value dq =
        DequantizeLinearOp::create(b, loc, vt, q, s, z, b.getI64IntegerAttr(1));
    v.replaceAllUsesExcept(dq, q.getDefiningOp());
    quantized[v] = {dq, scale};
    return dq;
  }

  /// A zero point of type `t`: `zp` (int8), or float8's zero.
  DenseElementsAttr zeroPointAttr(RankedTensorType t, int8_t zp) {
    Attribute v = fp8 ? Attribute(FloatAttr::get(qType(), 0.0))
                      : Attribute(IntegerAttr::get(qType(), zp));
    return DenseElementsAttr::get(t, ArrayRef<Attribute>{v});
  }

  /// Constant float weights as int8 (or float8 e4m3), symmetric, one scale
  /// per slice along `axis` (a Conv's output channels, a MatMul's
  /// columns), dequantized.
  std::pair<Value, SmallVector<float>> weights(OpBuilder &b, Location loc,
                                               Value w, int64_t axis) {
    auto wt = cast<RankedTensorType>(w.getType());
    SmallVector<float> values = *constFloats(w);
    int64_t channels = wt.getDimSize(axis), stride = 1;
    for (int64_t d = axis + 1; d < wt.getRank(); ++d)
      stride *= wt.getDimSize(d);
    SmallVector<float> scales(channels, 0.0f);
    for (auto [i, x] : llvm::enumerate(values)) {
      float &s = scales[(i / stride) % channels];
      s = std::max(s, std::fabs(x));
    }
    // (A maximum so small that its scale underflows to zero is a zero
    // channel: scale 1.)
    for (float &s : scales) {
      float scale = static_cast<float>(s / (fp8 ? kE4m3Max : 127));
      s = scale > 0 ? scale : 1.0f;
    }
    std::vector<uint8_t> q(values.size());
    for (auto [i, x] : llvm::enumerate(values)) {
      float v = x / scales[(i / stride) % channels];
      q[i] = fp8 ? e4m3Bits(v)
                 : static_cast<uint8_t>(static_cast<int8_t>(
                       std::clamp(std::round(v), -127.0f, 127.0f)));
    }
    auto qt = RankedTensorType::get(wt.getShape(), qType());
    auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(q));
    Value wq = ConstantOp::create(
        b, loc, qt,
        DenseResourceElementsAttr::get(qt, "kiln_quantized", std::move(blob)));
    auto st = RankedTensorType::get({channels}, b.getF32Type());
    Value s = floatConstant(b, loc, st, scales, "kiln_weight_scales");
    auto zt = RankedTensorType::get({channels}, qType());
    Value z = ConstantOp::create(b, loc, zt, zeroPointAttr(zt, 0));
    Value dq = DequantizeLinearOp::create(b, loc, wt, wq, s, z,
                                          b.getI64IntegerAttr(axis));
    return {dq, scales};
  }

  /// A float bias as the int32 bias at scale x_scale * w_scale[c],
  /// dequantized.
  Value bias(OpBuilder &b, Location loc, Value bias, float xs,
             ArrayRef<float> ws) {
    auto bt = cast<RankedTensorType>(bias.getType());
    SmallVector<float> values = *constFloats(bias);
    SmallVector<float> scales;
    std::vector<int32_t> q;
    for (auto [i, x] : llvm::enumerate(values)) {
      float s = xs * ws[ws.size() == 1 ? 0 : i];
      scales.push_back(s);
      q.push_back(static_cast<int32_t>(
          std::clamp(std::round(static_cast<double>(x) / s), -2147483648.0,
                     2147483647.0)));
    }
    auto qt = RankedTensorType::get(bt.getShape(), b.getI32Type());
    Value bq = ConstantOp::create(
        b, loc, qt, DenseIntElementsAttr::get(qt, ArrayRef<int32_t>(q)));
    Value s = floatConstant(
        b, loc, RankedTensorType::get(bt.getShape(), b.getF32Type()), scales,
        "kiln_bias_scales");
    Value z = ConstantOp::create(
        b, loc, qt, DenseElementsAttr::get(qt, b.getI32IntegerAttr(0)));
    return DequantizeLinearOp::create(b, loc, bt, bq, s, z,
                                      b.getI64IntegerAttr(0));
  }
};

} // namespace
