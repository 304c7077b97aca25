//===- KilnInterfaces.td - kiln op interfaces ---------------*- tablegen -*-===//

#ifndef KILN_DIALECT_KILN_IR_KILNINTERFACES_TD
#define KILN_DIALECT_KILN_IR_KILNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Kiln_InferResultTypesOpInterface
    : OpInterface<"InferResultTypesOpInterface"> {
  let cppNamespace = "::kiln";
  let description = [{
    Computes an op's result types from its operand types, attributes and,
    where an operand is a constant, its value (the `shape` of `Reshape`).
    Unknown dimensions come out as `?`. The importer uses it to type node
    outputs, the `kiln-infer-shapes` pass to refine a graph after its inputs
    were given static shapes, and the verifier to reject results whose types
    contradict it.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends one inferred type per result to `types`. Fails, with a
        diagnostic on the op, when the operands are malformed for the op.
      }],
      "::llvm::LogicalResult", "inferResultTypes",
      (ins "::llvm::SmallVectorImpl<::mlir::Type> &":$types)>,
  ];
}

#endif // KILN_DIALECT_KILN_IR_KILNINTERFACES_TD
