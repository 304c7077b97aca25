//===- Passes.td - Kiln codegen passes ----------------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCopyToLinalg : Pass<"kiln-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turns memref.copy into linalg.copy so that it becomes loops";
  let description = [{
    Bufferization emits `memref.copy` between buffers; copies between
    strided views would otherwise lower to a call into MLIR's C runner
    library, which compiled modules do not link. As `linalg.copy` they
    become plain loops with the rest of the kernel.

    ```mlir
    memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
    // becomes
    linalg.copy ins(%a : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
