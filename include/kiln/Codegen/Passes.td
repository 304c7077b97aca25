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

def KilnPlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Places every intermediate buffer of @main in one arena";
  let description = [{
    After bufferization, each statically shaped `memref.alloc` of the graph
    function `@main` gets an offset in one arena from its live range (from
    the allocation to the last use of the buffer or of any view of it);
    buffers live at the same time never overlap, and offsets are 64-byte
    aligned. The arena becomes a trailing `memref<Nxi8>` argument of
    `@main`, so the runtime owns it (one per session) and a run allocates
    nothing. Buffers that escape (returned, or stored) are left alone.

    The module records the plan in `kiln.memory_plan`: the arena size, the
    sum of all planned buffers (what allocating each separately costs) and
    the lower bound (the most bytes live at any one point).

    ```mlir
    %a = memref.alloc() : memref<4x8xf32>
    // becomes, with %arena the new last argument of @main
    %c0 = arith.constant 0 : index
    %a = memref.view %arena[%c0][] : memref<128xi8> to memref<4x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
