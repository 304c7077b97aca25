//===- OnnxImportFuzzer.cpp - libFuzzer harness for the ONNX importer -----===//
//
// Feeds bytes to the importer as a binary ONNX model (libonnx's checker and
// shape inference included, as kiln-compile runs them) and verifies what it
// produces. The importer must answer every input with a module that
// verifies or with a diagnostic: any crash, sanitizer report, hang, or a
// failure without a diagnostic is a bug.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Kept for the process: protobuf's log lines about bad input are noise.
  static google::protobuf::LogSilencer *silence =
      new google::protobuf::LogSilencer();
  (void)silence;
  // A context keeps every attribute and type it ever uniqued: a fresh one
  // every 2,000 inputs keeps the fuzzer's memory bounded.
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 2000 == 0) {
    context = std::make_unique<mlir::MLIRContext>();
    context->loadDialect<kiln::KilnDialect, mlir::func::FuncDialect>();
  }
  bool diagnosed = false;
  mlir::ScopedDiagnosticHandler handler(
      context.get(), [&](mlir::Diagnostic &d) {
        diagnosed |= d.getSeverity() == mlir::DiagnosticSeverity::Error;
        return mlir::success();
      });
  auto module = kiln::importOnnxBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz",
      /*isText=*/false, /*modelDir=*/"", context.get());
  if (!module) {
    if (!diagnosed)
      __builtin_trap(); // a failed import must say why
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    __builtin_trap(); // the importer built invalid IR
  return 0;
}
