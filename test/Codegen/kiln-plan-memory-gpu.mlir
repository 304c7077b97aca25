// RUN: kiln-opt %s -split-input-file -kiln-plan-memory | FileCheck %s --check-prefix=PLAIN
// RUN: kiln-opt %s -split-input-file '-kiln-plan-memory=pad-sources-live=true epilogue-inputs-live=true' | FileCheck %s --check-prefix=GPU

// A padded copy: %src is copied into the interior of %pad, and a tiled
// convolution reads %pad. Planned plainly, %src dies at the copy and %late
// (born after it) takes its bytes. With pad-sources-live, %src lives as
// long as %pad (the kernel reads %src in place of the copy), so %late gets
// bytes of its own.

// PLAIN-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 2176 : i64
// PLAIN:         %[[S:.+]] = arith.constant 1152 : index
// PLAIN-NEXT:    memref.view %{{.+}}[%[[S]]][] : memref<2176xi8> to memref<16x16xf32>
// PLAIN:         %[[L:.+]] = arith.constant 1152 : index
// PLAIN-NEXT:    memref.view %{{.+}}[%[[L]]][] : memref<2176xi8> to memref<16x16xf32>
// GPU-LABEL:   module attributes {kiln.memory_plan = {arena_bytes = 3200 : i64
// GPU:           %[[S:.+]] = arith.constant 1152 : index
// GPU-NEXT:      memref.view %{{.+}}[%[[S]]][] : memref<3200xi8> to memref<16x16xf32>
// GPU:           %[[L:.+]] = arith.constant 2176 : index
// GPU-NEXT:      memref.view %{{.+}}[%[[L]]][] : memref<3200xi8> to memref<16x16xf32>
func.func @main(%in: memref<16x16xf32>, %w: memref<16x16xf32>, %out: memref<16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %src = memref.alloc() : memref<16x16xf32>
  linalg.copy ins(%in : memref<16x16xf32>) outs(%src : memref<16x16xf32>)
  %pad = memref.alloc() : memref<16x18xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<16x18xf32>)
  %interior = memref.subview %pad[0, 1] [16, 16] [1, 1] : memref<16x18xf32> to memref<16x16xf32, strided<[18, 1], offset: 1>>
  memref.copy %src, %interior : memref<16x16xf32> to memref<16x16xf32, strided<[18, 1], offset: 1>>
  %late = memref.alloc() : memref<16x16xf32>
  linalg.copy ins(%w : memref<16x16xf32>) outs(%late : memref<16x16xf32>)
  %window = memref.subview %pad[0, 0] [16, 16] [1, 1] : memref<16x18xf32> to memref<16x16xf32, strided<[18, 1]>>
  linalg.matmul ins(%window, %late : memref<16x16xf32, strided<[18, 1]>>, memref<16x16xf32>) outs(%out : memref<16x16xf32>)
  return
}

// -----

// A contraction and the elementwise op after it that reads its product:
// planned plainly, the contraction's input %a dies at the contraction and
// the bias add's output %c takes its bytes. With epilogue-inputs-live, %a
// lives through the add, which the contraction's kernel runs as its
// epilogue while still reading %a, so %c gets bytes of its own.

// PLAIN-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 2048 : i64
// PLAIN:         %[[A:.+]] = arith.constant 0 : index
// PLAIN-NEXT:    memref.view %{{.+}}[%[[A]]][] : memref<2048xi8> to memref<16x16xf32>
// PLAIN:         %[[B:.+]] = arith.constant 1024 : index
// PLAIN:         %[[C:.+]] = arith.constant 0 : index
// GPU-LABEL:   module attributes {kiln.memory_plan = {arena_bytes = 3072 : i64
// GPU:           %[[A:.+]] = arith.constant 0 : index
// GPU:           %[[B:.+]] = arith.constant 1024 : index
// GPU:           %[[C:.+]] = arith.constant 2048 : index
func.func @main(%in: memref<16x16xf32>, %w: memref<16x16xf32>, %bias: memref<16xf32>, %out: memref<16x16xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  linalg.copy ins(%in : memref<16x16xf32>) outs(%a : memref<16x16xf32>)
  %b = memref.alloc() : memref<16x16xf32>
  linalg.matmul ins(%a, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%b : memref<16x16xf32>)
  %c = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %bias : memref<16x16xf32>, memref<16xf32>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%c : memref<16x16xf32>) outs(%out : memref<16x16xf32>)
  return
}

// -----

// epilogue-inputs-live keeps an input live only through an op that reads
// the contraction's product: here the op after the contraction reads
// something else, and %c takes %a's bytes under either plan.

// PLAIN-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 2048 : i64
// GPU-LABEL:   module attributes {kiln.memory_plan = {arena_bytes = 2048 : i64
// GPU:           %[[A:.+]] = arith.constant 0 : index
// GPU:           %[[B:.+]] = arith.constant 1024 : index
// GPU:           %[[C:.+]] = arith.constant 0 : index
func.func @main(%in: memref<16x16xf32>, %w: memref<16x16xf32>, %out: memref<16x16xf32>, %out2: memref<16x16xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  linalg.copy ins(%in : memref<16x16xf32>) outs(%a : memref<16x16xf32>)
  %b = memref.alloc() : memref<16x16xf32>
  linalg.matmul ins(%a, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%b : memref<16x16xf32>)
  %c = memref.alloc() : memref<16x16xf32>
  linalg.copy ins(%w : memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  linalg.add ins(%b, %c : memref<16x16xf32>, memref<16x16xf32>) outs(%out : memref<16x16xf32>)
  return
}
