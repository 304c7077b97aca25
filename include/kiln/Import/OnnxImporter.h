//===- OnnxImporter.h - ONNX model to kiln IR --------------------*- C++
//-*-===//

#ifndef KILN_IMPORT_ONNXIMPORTER_H
#define KILN_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace kiln {

struct OnnxImportOptions {
  /// Static shapes for graph inputs, by input name; they replace the model's
  /// (possibly symbolic) dims. Dims of -1 stay dynamic.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Sequence inputs, by name: the shape of each element (its length is
  /// the list's). The input becomes one function argument per element
  /// (named NAME[i]) and a SequenceConstruct of them, recorded in @main's
  /// `kiln.sequences`.
  llvm::StringMap<llvm::SmallVector<llvm::SmallVector<int64_t>>> inputSequences;
  /// Optional inputs compiled without a value (the module does not take
  /// them); the others are compiled with one.
  llvm::StringSet<> absentInputs;
  /// Run libonnx's checker and shape inference as a cross-check where the
  /// model's opset is within libonnx's reach.
  bool onnxChecks = true;
  /// Constants with at most this many elements are inline dense attributes;
  /// larger ones are dense resources.
  int64_t inlineElementsLimit = 8;
};

/// Parses `name:1x3x224x224` (dims separated by `x`, `?` or -1 for a dynamic
/// dim, an empty list for a scalar) into `options.inputShapes`.
llvm::LogicalResult parseInputShape(llvm::StringRef spec,
                                    OnnxImportOptions &options,
                                    std::string &error);

/// Parses `name:3x4,5x4` (each element's shape as in parseInputShape,
/// separated by commas; `name:` for an empty sequence) into
/// `options.inputSequences`.
llvm::LogicalResult parseInputSequence(llvm::StringRef spec,
                                       OnnxImportOptions &options,
                                       std::string &error);

/// Imports an ONNX model from a file: binary protobuf, or ONNX textual
/// syntax when the name ends in `.onnxtxt`. External data is read from
/// files inside the model's directory only. Errors are reported through the
/// context's diagnostic handler; returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context,
               const OnnxImportOptions &options = {});

/// Imports an ONNX model held in memory. `bufferName` names it in
/// diagnostics; `modelDir` is where external data files are looked up (empty:
/// external data is rejected).
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBuffer(llvm::StringRef bytes, llvm::StringRef bufferName, bool isText,
                 llvm::StringRef modelDir, mlir::MLIRContext *context,
                 const OnnxImportOptions &options = {});

/// True if `path` names an ONNX file by its extension (`.onnx`,
/// `.onnxtxt`).
bool isOnnxFileName(llvm::StringRef path);

} // namespace kiln

#endif // KILN_IMPORT_ONNXIMPORTER_H
