//===- KilnOps.h - kiln dialect ops and types --------------------*- C++
//-*-===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_H
#define KILN_DIALECT_KILN_IR_KILNOPS_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Kiln/IR/KilnInterfaces.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnTypes.h.inc"

namespace kiln {
/// Shared parser, printer and verifier of every generated ONNX op: the
/// positional form `kiln.op(%a, none, %c) {attrs} : (types) -> types`.
mlir::ParseResult parseOnnxOp(mlir::OpAsmParser &parser,
                              mlir::OperationState &result,
                              llvm::StringRef inputKinds,
                              llvm::StringRef outputKinds);
void printOnnxOp(mlir::Operation *op, mlir::OpAsmPrinter &printer,
                 llvm::StringRef inputKinds, llvm::StringRef outputKinds);
llvm::LogicalResult verifyOnnxOp(mlir::Operation *op);

/// Result-type rules shared by many ops (see utils/gen-onnx-ops.py).
llvm::LogicalResult
inferSameResultTypes(mlir::Operation *op,
                     llvm::SmallVectorImpl<mlir::Type> &types);
llvm::LogicalResult
inferBroadcastResultTypes(mlir::Operation *op,
                          llvm::SmallVectorImpl<mlir::Type> &types);
llvm::LogicalResult
inferCompareResultTypes(mlir::Operation *op,
                        llvm::SmallVectorImpl<mlir::Type> &types);

/// ONNX multidirectional broadcasting; emits an error on `op` and fails
/// when two known extents disagree.
llvm::FailureOr<llvm::SmallVector<int64_t>>
broadcastStaticShapes(mlir::Operation *op,
                      llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// One term of an einsum equation: its labels, with the ellipsis (if any)
/// as '.'.
using EinsumTerm = llvm::SmallVector<char>;

/// A term as written, the ellipsis as "...".
std::string einsumTermString(const EinsumTerm &t);

/// Parses "ab,bc->ac" (or the implicit form "ab,bc": the ellipsis, then the
/// labels used once, in alphabetical order) into the input terms and the
/// output term. Fails with the reason in `error`.
llvm::LogicalResult parseEinsum(llvm::StringRef eq, size_t numInputs,
                                llvm::SmallVectorImpl<EinsumTerm> &inputs,
                                EinsumTerm &output, std::string &error);

/// The MLIR element type of an ONNX `TensorProto.DataType` value, or null
/// for an unknown or unsupported one.
mlir::Type getElementTypeFromOnnx(mlir::MLIRContext *ctx, int64_t dataType);

/// The operand of a generated op at ONNX input position `index`, following
/// the operand segments of ops with several optional inputs; null when the
/// input is absent.
mlir::Value getOnnxInput(mlir::Operation *op, unsigned index);

/// Whether `op` (a ConvInteger or QLinearConv) is a 1x1 convolution of
/// 1x1 planes with static shapes, no pads and one group: the product of
/// its [M, C] input and [F, C] weight, as kiln-fold-qdq writes a QDQ Gemm.
bool isPointwiseGemm(mlir::Operation *op);

/// The ONNX node an op comes from: the first name in its location (the
/// importer names each node's ops so), or "".
std::string onnxNodeName(mlir::Location loc);

/// The integer values of `v` when a constant (a kiln.constant, or one
/// already lowered) defines it.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value v);

/// The ONNX `TensorProto.DataType` of an MLIR element type, or 0.
int64_t getOnnxDataType(mlir::Type elementType);

/// True if `inferred` and `actual` can describe the same value: equal
/// element types, and shapes that agree wherever both are known.
bool areCompatibleTypes(mlir::Type inferred, mlir::Type actual);

/// The more refined of two compatible types (known dims win).
mlir::Type refineType(mlir::Type a, mlir::Type b);

/// Unit attribute of `kiln.attention` that `kiln-fuse-layers` sets when it
/// takes in SDPA's guard `Where(IsNaN(P), 0, P)` behind a mask that may be
/// -inf: a query row whose keys are all masked gives zeros, not NaN.
inline constexpr llvm::StringLiteral kZeroNaNRowsAttrName =
    "kiln.zero_nan_rows";
} // namespace kiln

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.h.inc"

namespace kiln {
/// The value of a constant one-element integer or bool tensor read as a
/// condition (non-zero is true).
std::optional<bool> getConstantCondition(mlir::Value v);

/// The number of iterations of `op` when it is known at compile time: a
/// constant trip count M and no condition operand (the body's condition is
/// then ignored), or a constant true condition that the body passes on
/// unchanged or yields as a constant true.
std::optional<int64_t> getLoopTripCount(LoopOp op);
} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_KILNOPS_H
