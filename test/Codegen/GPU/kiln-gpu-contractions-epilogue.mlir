// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{fuse-epilogue=false}))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions))' | FileCheck %s --check-prefix=EPI
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{fold-init=false fuse-epilogue=false}))' | FileCheck %s --check-prefix=KEEP

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// The zero fill right before a product (a view between them) is its
// initial value: the epilogue adds the accumulators to the constant and
// stores, without reading the output, and the fill goes. With
// fold-init=false the fill stays and the epilogue reads the output.

// CHECK-LABEL: func.func @fill
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.launch
// CHECK: scf.yield
// CHECK-NOT: memref.load %[[Y:.*]]
// CHECK: arith.addf %[[ZERO]], %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf32>
// KEEP-LABEL: func.func @fill
// KEEP: linalg.fill
// KEEP: gpu.launch
// KEEP: scf.yield
// KEEP: memref.load %{{.*}} : memref<64x64xf32>
func.func @fill(%x: memref<64x32xf32>, %w: memref<32x64xf32>, %arena: memref<16384xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %y = memref.view %arena[%c0][] : memref<16384xi8> to memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// A bias broadcast into the output (a Gemm's or a Conv's C): the epilogue
// adds the accumulators to the bias element of the output's column.

// CHECK-LABEL: func.func @bias
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: scf.yield
// CHECK: %[[B:.*]] = memref.load %arg2[%[[COL:.*]]] : memref<64xf32>
// CHECK: arith.addf %[[B]], %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %arg3[%{{.*}}, %[[COL]]] : memref<64x64xf32>
func.func @bias(%x: memref<64x32xf32>, %w: memref<32x64xf32>, %b: memref<64xf32>, %y: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// Not folded: an op that writes memory stands between the fill and the
// product; a broadcast that computes (a bias doubled) is not a copy; and a
// fill of another buffer does not give this output its value.

// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK: memref.store
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg5
// CHECK: gpu.launch
// CHECK: scf.yield
// CHECK: memref.load %arg4
func.func @kept(%x: memref<64x32xf32>, %w: memref<32x64xf32>, %b: memref<64xf32>,
                %y: memref<64x64xf32>, %z: memref<64x64xf32>, %other: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  memref.store %zero, %b[%c0] : memref<64xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %d = arith.addf %i, %i : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%other : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// The bias add and Relu right after a product (kiln-fuse-elementwise made
// them one generic) run in its epilogue: each result, added to the zero
// fill, goes through the generic's body with the bias element of its
// column (loaded once a column, before the stores) and is stored into
// the generic's output; the product's own arena buffer is never written.
// With fuse-epilogue=false the generic stays.

// EPI-LABEL: func.func @bias_relu
// EPI-NOT: linalg.fill
// EPI: gpu.launch
// EPI: scf.yield
// EPI: %[[B:.*]] = memref.load %arg2[%[[COL:.*]]] : memref<64xf32>
// EPI-NOT: memref.store
// EPI: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// EPI: %[[T:.*]] = arith.addf %[[SUM]], %[[B]] : f32
// EPI: %[[R:.*]] = arith.maximumf %[[T]], %{{.*}} : f32
// EPI: memref.store %[[R]], %arg3[%{{.*}}, %[[COL]]] : memref<64x64xf32>
// EPI-NOT: memref.store %{{.*}}, %view
// EPI-NOT: linalg.generic
// KEEP-LABEL: func.func @bias_relu
// KEEP: gpu.launch
// KEEP: linalg.generic
func.func @bias_relu(%x: memref<64x32xf32>, %w: memref<32x64xf32>, %b: memref<64xf32>,
                     %out: memref<64x64xf32>, %arena: memref<16384xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %y = memref.view %arena[%c0][] : memref<16384xi8> to memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : memref<64x64xf32>, memref<64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%i: f32, %bb: f32, %o: f32):
    %t = arith.addf %i, %bb : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// Not in the epilogue: a consumer whose output shares arena bytes with
// the product's input x (another block may still be reading x); and a
// consumer of a product whose buffer is read again later (it must hold
// the product).

// EPI-LABEL: func.func @epilogue_kept
// EPI: gpu.launch
// EPI: linalg.generic {{.*}} outs(%[[XA:.*]] : memref<64x32xf32>
// EPI: gpu.launch
// EPI: linalg.generic
// EPI: linalg.copy
func.func @epilogue_kept(%w: memref<32x32xf32>, %arena: memref<65536xi8>,
                         %out: memref<64x32xf32>, %copy: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %c16384 = arith.constant 16384 : index
  %x = memref.view %arena[%c0][] : memref<65536xi8> to memref<64x32xf32>
  %y = memref.view %arena[%c8192][] : memref<65536xi8> to memref<64x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  %xa = memref.view %arena[%c0][] : memref<65536xi8> to memref<64x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x32xf32>) outs(%xa : memref<64x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.addf %i, %i : f32
    linalg.yield %t : f32
  }
  %z = memref.view %arena[%c16384][] : memref<65536xi8> to memref<64x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%y, %w : memref<64x32xf32>, memref<32x32xf32>) outs(%z : memref<64x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<64x32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.addf %i, %i : f32
    linalg.yield %t : f32
  }
  linalg.copy ins(%z : memref<64x32xf32>) outs(%copy : memref<64x32xf32>)
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// The product's arena view is shared (CSE) with an earlier tensor and a
// later one in the same bytes: the later one overwrites it whole (a fill,
// which then becomes the second product's initial value), so the Relu
// still runs in the epilogue. Where the next op reads the view instead
// (the copy after the second product), the product must be stored and the
// Relu stays.

// EPI-LABEL: func.func @shared_view
// EPI: gpu.launch
// EPI: arith.maximumf
// EPI: gpu.launch
// EPI-NOT: arith.maximumf
// EPI: linalg.generic
// EPI: linalg.copy
func.func @shared_view(%w: memref<32x32xf32>, %arena: memref<65536xi8>,
                       %x: memref<64x32xf32>, %out: memref<64x32xf32>,
                       %copy: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c8192 = arith.constant 8192 : index
  %y = memref.view %arena[%c8192][] : memref<65536xi8> to memref<64x32xf32>
  linalg.copy ins(%x : memref<64x32xf32>) outs(%y : memref<64x32xf32>)
  linalg.copy ins(%y : memref<64x32xf32>) outs(%copy : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.maximumf %i, %zero : f32
    linalg.yield %t : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.maximumf %i, %zero : f32
    linalg.yield %t : f32
  }
  linalg.copy ins(%y : memref<64x32xf32>) outs(%copy : memref<64x32xf32>)
  return
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// An output argument used as scratch by a product whose bias add writes
// elsewhere: fused where the next use overwrites the argument (a fill,
// which becomes the second product's initial value), whatever a loop
// reads of it further down; kept where the next use is a
// loop that loads from it (it must hold the product), or where nothing
// overwrites it (the caller reads it).

// EPI-LABEL: func.func @output_scratch
// EPI: gpu.launch
// EPI-NOT: linalg.generic
// EPI: gpu.launch
// EPI: linalg.generic
// EPI: scf.for
// EPI: gpu.launch
// EPI: linalg.generic
func.func @output_scratch(%x: memref<64x32xf32>, %w: memref<32x64xf32>,
                          %out: memref<64x64xf32>, %arena: memref<65536xi8>,
                          %r: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c16384 = arith.constant 16384 : index
  %y = memref.view %arena[%c0][] : memref<65536xi8> to memref<64x64xf32>
  %z = memref.view %arena[%c16384][] : memref<65536xi8> to memref<64x64xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.addf %i, %i : f32
    linalg.yield %t : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<64x64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.addf %i, %i : f32
    linalg.yield %t : f32
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %v = memref.load %out[%c0, %k] : memref<64x64xf32>
    memref.store %v, %r[%k] : memref<64xf32>
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.addf %i, %i : f32
    linalg.yield %t : f32
  }
  return
}
