//===- MixedPrecision.cpp - float32 ops in float16 or bfloat16 ------------===//
//
// Each op of a fixed list of ops that are safe in half precision gets its
// float32 operands cast to the half type and its float32 results cast back;
// casts that meet cancel, so converted ops pass half values between them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "kiln-mixed-precision"

namespace kiln {
#define GEN_PASS_DEF_KILNMIXEDPRECISION
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Ops whose float32 computation is safe in half precision: contractions
/// (their kernels accumulate in float32 whatever the element type),
/// elementwise arithmetic and activations with a bounded or linear range,
/// pooling, and data movement. None of them has a type attribute or a
/// float operand that must stay float32 (Resize's scales, for one, would).
constexpr const char *kHalfSafeOps[] = {
    // contractions
    "kiln.conv", "kiln.matmul", "kiln.gemm", "kiln.attention",
    // elementwise
    "kiln.add", "kiln.sub", "kiln.mul", "kiln.div", "kiln.neg", "kiln.abs",
    "kiln.max", "kiln.min", "kiln.relu", "kiln.leaky_relu", "kiln.prelu",
    "kiln.clip", "kiln.sigmoid", "kiln.hard_sigmoid", "kiln.hard_swish",
    "kiln.tanh", "kiln.erf", "kiln.gelu", "kiln.swish", "kiln.where",
    // pooling by maximum (exact in any type; averages sum in their
    // element type, so they stay float32)
    "kiln.max_pool", "kiln.global_max_pool",
    // data movement
    "kiln.concat", "kiln.reshape", "kiln.transpose", "kiln.flatten",
    "kiln.squeeze", "kiln.unsqueeze", "kiln.slice", "kiln.gather", "kiln.split",
    "kiln.pad", "kiln.expand", "kiln.identity", "kiln.tile",
    "kiln.depth_to_space", "kiln.space_to_depth"};

bool isF32Tensor(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.getElementType().isF32();
}

RankedTensorType withElement(Type t, Type element) {
  return cast<RankedTensorType>(t).clone(element);
}

/// `f` rounded to `half`, to nearest even, as its bits.
APInt roundTo(const APFloat &f, FloatType half) {
  bool lost;
  APFloat v(f);
  v.convert(half.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return v.bitcastToAPInt();
}

/// The constant `cst` (float32) converted to `half`: inline values stay
/// inline (a splat stays a splat), a resource becomes a resource of the
/// half values. Null when its values cannot be read.
ElementsAttr convertConstant(ConstantOp cst, FloatType half) {
  ElementsAttr value = cst.getValue();
  auto type = withElement(value.getType(), half);
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.mapValues(half,
                           [&](const APFloat &f) { return roundTo(f, half); });
  auto resource = dyn_cast<DenseF32ResourceElementsAttr>(value);
  auto data = resource ? resource.tryGetAsArrayRef() : std::nullopt;
  if (!data)
    return {};
  SmallVector<uint16_t> bits;
  bits.reserve(data->size());
  for (float f : *data)
    bits.push_back(
        static_cast<uint16_t>(roundTo(APFloat(f), half).getZExtValue()));
  return DenseResourceElementsAttr::get(
      type, "half_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(bits)));
}

/// The ONNX node name an op's location carries, if any.
StringRef nodeName(Operation *op) {
  if (auto named = dyn_cast<NameLoc>(op->getLoc()))
    return named.getName().getValue();
  return {};
}

struct MixedPrecisionPass
    : public kiln::impl::KilnMixedPrecisionBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FloatType half;
    if (type == "f16")
      half = Float16Type::get(ctx);
    else if (type == "bf16")
      half = BFloat16Type::get(ctx);
    else {
      getOperation()->emitError("kiln-mixed-precision: type must be f16 or "
                                "bf16, not '")
          << type << "'";
      return signalPassFailure();
    }
    llvm::StringSet<> safe;
    for (const char *name : kHalfSafeOps)
      safe.insert(name);
    for (const std::string &name : keepOps)
      safe.erase(name);
    llvm::StringSet<> keep, seen;
    for (const std::string &name : keepNodes)
      keep.insert(name);

    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (StringRef name = nodeName(op); !name.empty() && keep.contains(name))
        seen.insert(name);
      if (!safe.contains(op->getName().getStringRef()) ||
          keep.contains(nodeName(op)))
        return;
      if (llvm::any_of(op->getOperandTypes(), isF32Tensor) ||
          llvm::any_of(op->getResultTypes(), isF32Tensor))
        ops.push_back(op);
    });
    for (const std::string &name : keepNodes)
      if (!seen.contains(name)) {
        getOperation()->emitError("kiln-mixed-precision: keep-nodes names '")
            << name << "', which is no node of the graph";
        return signalPassFailure();
      }

    OpBuilder b(ctx);
    DenseMap<Value, Value> converted; // a float32 constant's half version
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      for (OpOperand &operand : op->getOpOperands()) {
        Value v = operand.get();
        if (!isF32Tensor(v.getType()))
          continue;
        Value h = converted.lookup(v);
        if (!h) {
          auto type = withElement(v.getType(), half);
          if (auto cst = v.getDefiningOp<ConstantOp>()) {
            if (ElementsAttr attr = convertConstant(cst, half)) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointAfter(cst);
              h = ConstantOp::create(b, cst.getLoc(), type, attr);
              converted[v] = h;
            }
          }
          if (!h)
            h = CastOp::create(b, op->getLoc(), type, v, StringAttr(),
                               IntegerAttr(), TypeAttr::get(half));
        }
        operand.set(h);
      }
      b.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        if (!isF32Tensor(result.getType()))
          continue;
        Type f32 = result.getType();
        result.setType(withElement(f32, half));
        auto back =
            CastOp::create(b, op->getLoc(), f32, result, StringAttr(),
                           IntegerAttr(), TypeAttr::get(b.getF32Type()));
        result.replaceAllUsesExcept(back, back);
      }
    }

    // Casts that meet cancel: half -> f32 -> half is the half value (the
    // widening is exact).
    SmallVector<CastOp> casts;
    getOperation()->walk([&](CastOp c) { casts.push_back(c); });
    for (CastOp c : casts) {
      auto wide = c.getInput().getDefiningOp<CastOp>();
      if (!wide || c.getType() != wide.getInput().getType() ||
          !isF32Tensor(wide.getType()))
        continue;
      c.replaceAllUsesWith(wide.getInput());
    }
    for (CastOp c : llvm::reverse(casts))
      if (c->use_empty())
        c->erase();
    for (auto &[wide, narrow] : converted)
      if (wide.use_empty())
        wide.getDefiningOp()->erase();
  }
};

} // namespace
