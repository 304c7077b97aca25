// RUN: kiln-opt %s -split-input-file -kiln-plan-memory | FileCheck %s

// A buffer copied whole into an output argument at the end (what
// buffer-results-to-out-params leaves for a returned allocation) becomes
// that argument: the result is computed in place, the copy is gone, and
// the arena holds only %a.

// CHECK-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 1024 : i64, buffers = 1 : i64
// CHECK:       func.func @main(%[[IN:[^:]+]]: memref<256xf32>, %[[OUT:[^:]+]]: memref<256xf32>, %[[ARENA:[^:]+]]: memref<1024xi8>)
// CHECK:         %[[A:.+]] = memref.view %[[ARENA]]
// CHECK:         linalg.copy ins(%[[IN]] : memref<256xf32>) outs(%[[A]] : memref<256xf32>)
// CHECK:         linalg.copy ins(%[[A]] : memref<256xf32>) outs(%[[OUT]] : memref<256xf32>)
// CHECK-NEXT:    return
// CHECK-NOT:     memref.copy
func.func @main(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.copy ins(%in : memref<256xf32>) outs(%a : memref<256xf32>)
  %r = memref.alloc() : memref<256xf32>
  linalg.copy ins(%a : memref<256xf32>) outs(%r : memref<256xf32>)
  memref.copy %r, %out : memref<256xf32> to memref<256xf32>
  return
}

// -----

// A value returned twice: the first output takes the buffer, the second
// copies from the first.

// CHECK-LABEL: kiln.memory_plan = {arena_bytes = 0 : i64
// CHECK:       func.func @main(%[[IN:[^:]+]]: memref<4xf32>, %[[O1:[^:]+]]: memref<4xf32>, %[[O2:[^:]+]]: memref<4xf32>)
// CHECK:         linalg.copy ins(%[[IN]] : memref<4xf32>) outs(%[[O1]] : memref<4xf32>)
// CHECK:         memref.copy %[[O1]], %[[O2]]
// CHECK-NOT:     memref.alloc
func.func @main(%in: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<4xf32>) {
  %r = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%r : memref<4xf32>)
  memref.copy %r, %o1 : memref<4xf32> to memref<4xf32>
  memref.copy %r, %o2 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Left as they are: a buffer read after its copy out, an output argument
// written twice, and a copy between different layouts.

// CHECK-LABEL: kiln.memory_plan = {arena_bytes = 64 : i64
// CHECK-COUNT-3: memref.copy
func.func @main(%in: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<4xf32>,
                %o3: memref<2x2xf32>) {
  %r = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%r : memref<4xf32>)
  memref.copy %r, %o1 : memref<4xf32> to memref<4xf32>
  linalg.copy ins(%r : memref<4xf32>) outs(%o2 : memref<4xf32>)
  %s = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%s : memref<4xf32>)
  memref.copy %s, %o2 : memref<4xf32> to memref<4xf32>
  %t = memref.alloc() : memref<2x2xf32>
  %v = memref.subview %t[0, 0] [2, 1] [1, 1] : memref<2x2xf32> to memref<2x1xf32, strided<[2, 1]>>
  %w = memref.subview %o3[0, 0] [2, 1] [1, 1] : memref<2x2xf32> to memref<2x1xf32, strided<[2, 1]>>
  memref.copy %v, %w : memref<2x1xf32, strided<[2, 1]>> to memref<2x1xf32, strided<[2, 1]>>
  return
}
