//===- KilnOps.td - kiln dialect ops ------------------------*- tablegen -*-===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_TD
#define KILN_DIALECT_KILN_IR_KILNOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "output"]>,
    DeclareOpInterfaceMethods<Kiln_InferResultTypesOpInterface>]> {
  let summary = "A constant tensor: an ONNX `Constant` node or an initializer";
  let description = [{
    Holds a tensor value. Small constants are inline dense elements; weights
    are dense resources, kept out of the text form of the IR (print with
    `--mlir-elide-resource-strings-if-larger` to elide them).

    ```mlir
    %shape = kiln.constant dense<[1, -1]> : tensor<2xi64>
    %w = kiln.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike]> {
  let summary = "Returns the outputs of a subgraph region";
  let description = [{
    Terminates the region of `kiln.if`, `kiln.loop` or `kiln.scan` with the
    values of the subgraph's outputs, in order.

    ```mlir
    kiln.yield %a, %b : tensor<f32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

include "kiln/Dialect/Kiln/IR/KilnOnnxOps.td"

#endif // KILN_DIALECT_KILN_IR_KILNOPS_TD
