//===- LoweringUtils.h - shared helpers of the kiln-to-linalg lowering ----===//
//
// Builders that every lowering file of convert-kiln-to-linalg uses, and the
// entry points of the lowerings kept in files of their own. Internal to the
// conversion library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGUTILS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace kiln {
class TopKOp;
} // namespace kiln

namespace kiln::lowering {

using mlir::ArrayRef;
using mlir::FailureOr;
using mlir::Location;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

using ScalarFn = mlir::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Whether `t` (or its elements) is a float type.
bool isFloat(Type t);
/// Whether `t` (or its elements) is an unsigned integer type. The lowering
/// computes on signless integers (all arith and linalg take) and picks the
/// unsigned forms of division, comparison, extension and conversion where
/// the ONNX type was unsigned.
bool isUnsignedElt(Type t);
/// `t` with an unsigned integer element type made signless.
Type toSignless(Type t);

int64_t intAttr(Operation *op, StringRef name, int64_t dflt);
float floatAttr(Operation *op, StringRef name, float dflt);
SmallVector<int64_t> intsAttr(Operation *op, StringRef name,
                              SmallVector<int64_t> dflt);
/// `axis` in [0, rank): ONNX's negative axes count from the end. An axis
/// outside [-rank, rank) is reported on `op` and fails.
FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank);

/// A scalar constant of int or float type `t`.
Value scalarConst(OpBuilder &b, Location loc, Type t, double v);
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t);
/// A tensor of type `t` filled with `scalar`.
Value filled(OpBuilder &b, Location loc, RankedTensorType t, Value scalar);
/// The lowest or highest value of a type (`uns`: of its unsigned reading),
/// for max/min identities and pads.
Value extremum(OpBuilder &b, Location loc, Type t, bool lowest,
               bool uns = false);
/// The indexing map of an operand of `operand`'s type broadcast to a result
/// of `result`'s type by ONNX's rules: trailing-aligned, size-1 dims read
/// at 0.
mlir::AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result);
/// A `linalg.generic` over `resultType` whose inputs broadcast to it as
/// ONNX multidirectional broadcasting says (aligned at the trailing dims);
/// `customMaps` replace the maps of the first inputs.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ScalarFn fn,
                  ArrayRef<mlir::AffineMap> customMaps = {});
/// An ONNX index (any integer type) as an `index` into a dim of `extent`:
/// negative values count from the end.
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t extent);
/// Converts a scalar between element types as ONNX Cast does; integers are
/// read (`fromUnsigned`) and written (`toUnsigned`) as unsigned if so.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to,
                    bool fromUnsigned = false, bool toUnsigned = false);
/// Reshapes a static tensor to another static shape with the same count.
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType to);
/// `parts` one after another along `axis`, into a tensor of type `to`.
Value concatAlong(OpBuilder &b, Location loc, ValueRange parts, int64_t axis,
                  RankedTensorType to);
using ReduceCombineFn =
    mlir::function_ref<Value(OpBuilder &, Location, Value, Value)>;
using ReducePreFn = mlir::function_ref<Value(OpBuilder &, Location, Value)>;
/// A reducing `linalg.generic` of `in` over the dims flagged in `reduced`
/// into `keptType` (the kept dims; size 1 where reduced if it has `in`'s
/// rank), starting from `init`: acc = comb(pre(x), acc).
Value reduceDims(OpBuilder &b, Location loc, Value in, ArrayRef<bool> reduced,
                 RankedTensorType keptType, Value init, ReduceCombineFn comb,
                 ReducePreFn pre = nullptr);
/// `x` padded with `padValue` (returns `x` when every pad is zero).
Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue);

/// The result of a lowering entry point kept in its own file: std::nullopt
/// when the op is not one of that file's, failure (with a diagnostic on the
/// op) when it is but cannot be lowered, else the replacement values.
using LoweringResult = std::optional<FailureOr<SmallVector<Value>>>;

/// Col2Im, AffineGrid, CenterCropPad, Einsum, LRN, ReverseSequence,
/// MeanVarianceNormalization, TfIdfVectorizer (LowerMiscOps.cpp).
LoweringResult lowerMiscOp(OpBuilder &b, Operation *op);
/// RNN, GRU, LSTM (LowerRecurrentOps.cpp).
LoweringResult lowerRecurrentOp(OpBuilder &b, Operation *op);
/// GridSample, RoiAlign, MaxUnpool, DeformConv (LowerSamplingOps.cpp).
LoweringResult lowerSamplingOp(OpBuilder &b, Operation *op);
/// TopK (its x's integers signed or, with `unsignedX`, unsigned; by
/// counting the elements that precede each: LowerSignalOps.cpp).
FailureOr<SmallVector<Value>> lowerTopK(OpBuilder &b, TopKOp op,
                                        bool unsignedX);
/// HannWindow, HammingWindow, BlackmanWindow, DFT, STFT,
/// MelWeightMatrix, Det (LowerSignalOps.cpp).
LoweringResult lowerSignalOp(OpBuilder &b, Operation *op);
/// LinearAttention, CausalConvWithState, TensorScatter (LowerStateOps.cpp).
LoweringResult lowerStateOp(OpBuilder &b, Operation *op);
/// If, Loop, Scan (LowerControlFlow.cpp).
LoweringResult lowerControlFlowOp(OpBuilder &b, Operation *op);
/// For a Loop whose scan outputs are graph outputs as long as the
/// iterations it runs, which its condition decides at run time: their
/// upper bound, the constant trip count M (LowerControlFlow.cpp).
std::optional<int64_t> loopScanBound(Operation *op);
/// Fails, naming the reason, where an If, Loop or Scan has a result shape
/// known only at run time (before the general "needs static shapes").
mlir::LogicalResult checkControlFlowTypes(Operation *op);
/// Adagrad, Adam, Momentum of ai.onnx.preview.training
/// (LowerTrainingOps.cpp).
LoweringResult lowerTrainingOp(OpBuilder &b, Operation *op);

/// A result whose extent along one dim depends on the values of the op's
/// inputs: that dim and the static upper bound of its extent.
struct DataDependentResult {
  unsigned result;
  int64_t dim;
  int64_t bound;
};
/// The data-dependent results of NonMaxSuppression, NonZero, Compress,
/// Unique, a Slice with run-time starts or ends, and a Loop's scan outputs
/// (`loopScanBound`), in result order (LowerDataDependentOps.cpp). Empty
/// for other ops and where the inputs have no static shape.
SmallVector<DataDependentResult> dataDependentResults(Operation *op);
/// NonMaxSuppression, NonZero, Compress, Unique, Slice
/// (LowerDataDependentOps.cpp), once `dataDependent`, what
/// `dataDependentResults` gave before, have their upper bound types: the
/// replacements of the results (their valid part a prefix along the
/// data-dependent dim), then one tensor<i64> per data-dependent result with
/// its valid extent.
LoweringResult
lowerDataDependentOp(OpBuilder &b, Operation *op,
                     ArrayRef<DataDependentResult> dataDependent);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGUTILS_H
