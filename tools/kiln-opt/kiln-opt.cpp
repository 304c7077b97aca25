//===- kiln-opt.cpp - Kiln's pass driver ----------------------------------===//
//
// mlir-opt for Kiln: reads `.mlir`, MLIR bytecode, or an ONNX model (`.onnx`,
// `.onnxtxt`, imported on the fly) and runs any registered pass or pipeline.
//
//===----------------------------------------------------------------------===//

#include "kiln/Import/OnnxImporter.h"
#include "kiln/InitAll.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::OptionCategory onnxCategory("ONNX import options");

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Static shape for an ONNX graph input, NAME:DxDxD (use ? "
                   "for a dim left dynamic); repeatable, or comma-separated"),
    llvm::cl::CommaSeparated, llvm::cl::cat(onnxCategory));

static llvm::cl::list<std::string> inputSequences(
    "input-sequence",
    llvm::cl::desc("The elements' shapes of an ONNX sequence input, "
                   "NAME:DxD,DxD,... (NAME: for an empty one); repeatable"),
    llvm::cl::cat(onnxCategory));

static llvm::cl::list<std::string> absentInputs(
    "input-absent",
    llvm::cl::desc("Import these ONNX optional inputs without a value"),
    llvm::cl::CommaSeparated, llvm::cl::cat(onnxCategory));

static llvm::cl::opt<bool> noOnnxChecks(
    "no-onnx-checks",
    llvm::cl::desc("Skip libonnx's checker and shape inference on import"),
    llvm::cl::init(false), llvm::cl::cat(onnxCategory));

static llvm::cl::opt<std::string> inputFormat(
    "input-format",
    llvm::cl::desc("Format of the input: auto (by extension), mlir, onnx "
                   "(binary protobuf) or onnxtxt (ONNX textual syntax)"),
    llvm::cl::init("auto"), llvm::cl::cat(onnxCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  DialectRegistry registry;
  kiln::registerAllDialects(registry);
  kiln::registerAllPasses();

  // Weights imported from ONNX are resources; keep them out of printed IR
  // unless the user asks otherwise.
  std::vector<char *> args(argv, argv + argc);
  bool userElides = llvm::any_of(args, [](const char *a) {
    return llvm::StringRef(a).contains("elide-resource-strings-if-larger");
  });
  std::string elide = "--mlir-elide-resource-strings-if-larger=64";
  if (!userElides)
    args.insert(args.begin() + 1, elide.data());

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      static_cast<int>(args.size()), args.data(),
      "Kiln optimizer driver\n\nReads .mlir, MLIR bytecode, .onnx or "
      ".onnxtxt input.\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  bool onnx = inputFormat == "onnx" || inputFormat == "onnxtxt" ||
              (inputFormat == "auto" && kiln::isOnnxFileName(inputFilename));
  if (inputFormat != "auto" && inputFormat != "mlir" && !onnx) {
    llvm::errs() << "error: unknown --input-format '" << inputFormat << "'\n";
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(inputFilename, &errorMessage);
  if (!buffer) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (onnx) {
    kiln::OnnxImportOptions importOptions;
    importOptions.onnxChecks = !noOnnxChecks;
    for (const std::string &spec : inputShapes) {
      if (failed(kiln::parseInputShape(spec, importOptions, errorMessage))) {
        llvm::errs() << "error: --input-shape: " << errorMessage << "\n";
        return 1;
      }
    }
    for (const std::string &spec : inputSequences) {
      if (failed(kiln::parseInputSequence(spec, importOptions, errorMessage))) {
        llvm::errs() << "error: --input-sequence: " << errorMessage << "\n";
        return 1;
      }
    }
    for (const std::string &name : absentInputs)
      importOptions.absentInputs.insert(name);
    bool isText = inputFormat == "onnxtxt" ||
                  (inputFormat == "auto" &&
                   llvm::StringRef(inputFilename).ends_with(".onnxtxt"));
    llvm::SmallString<256> dir;
    if (inputFilename != "-") {
      dir = inputFilename;
      llvm::sys::path::remove_filename(dir);
      if (dir.empty())
        dir = ".";
    }
    MLIRContext context(registry);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    OwningOpRef<ModuleOp> module = kiln::importOnnxBuffer(
        buffer->getBuffer(), inputFilename == "-" ? "<stdin>" : inputFilename,
        isText, dir, &context, importOptions);
    if (!module)
      return 1;
    // Hand the imported module to the opt driver as bytecode: resources and
    // locations survive, and no text round trip is needed.
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    if (failed(writeBytecodeToFile(*module, os)))
      return 1;
    buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes, inputFilename);
  }

  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(buffer), registry, config)))
    return 1;
  output->keep();
  return 0;
}
