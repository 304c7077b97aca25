//===- main.cpp - a program built against the installed Kiln package ----===//

#include "kiln/Import/OnnxImporter.h"
#include "kiln/InitAll.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  auto m = kiln::importOnnxFile(argv[1], &ctx);
  if (!m)
    return 1;
  m->print(llvm::outs());
  return 0;
}
