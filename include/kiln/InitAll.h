//===- InitAll.h - register every Kiln dialect and pass ----------*- C++
//-*-===//

#ifndef KILN_INITALL_H
#define KILN_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace kiln {
/// Adds the kiln dialect and the upstream dialects Kiln's pipelines use.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers Kiln's passes and pipelines and the upstream passes they use,
/// so that `kiln-opt` can run each of them by flag.
void registerAllPasses();
} // namespace kiln

#endif // KILN_INITALL_H
