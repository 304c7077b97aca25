// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits=empties=true -cse | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits -cse | FileCheck %s --check-prefix=OFF

// Two elementwise ops writing into one tensor.empty: with empties=true the
// second gets its own, tagged so that CSE keeps them apart (bufferization
// then gives each its own buffer). Without the option they share it.

// CHECK-LABEL: func.func @two_writers
// CHECK:         %[[E0:.+]] = tensor.empty() : tensor<8xf16>
// CHECK:         %[[A:.+]] = linalg.generic {{.*}} outs(%[[E0]] : tensor<8xf16>)
// CHECK:         %[[E1:.+]] = tensor.empty() {kiln.init_clone = {{[0-9]+}} : i64} : tensor<8xf16>
// CHECK:         linalg.generic {{.*}} outs(%[[E1]] : tensor<8xf16>)
// OFF-LABEL: func.func @two_writers
// OFF:         %[[E0:.+]] = tensor.empty() : tensor<8xf16>
// OFF:         linalg.generic {{.*}} outs(%[[E0]] : tensor<8xf16>)
// OFF-NOT:     tensor.empty
// OFF:         linalg.generic {{.*}} outs(%[[E0]] : tensor<8xf16>)
#id = affine_map<(d0) -> (d0)>
func.func @two_writers(%x: tensor<8xf32>) -> tensor<8xf16> {
  %e = tensor.empty() : tensor<8xf16>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<8xf16>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf16>) outs(%e : tensor<8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %s = arith.addf %in, %in : f16
    linalg.yield %s : f16
  } -> tensor<8xf16>
  return %b : tensor<8xf16>
}

// -----

// One writer: nothing to clone.

// CHECK-LABEL: func.func @one_writer
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT:     kiln.init_clone
#id = affine_map<(d0) -> (d0)>
func.func @one_writer(%x: tensor<8xf32>) -> tensor<8xf16> {
  %e = tensor.empty() : tensor<8xf16>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<8xf16>
  return %a : tensor<8xf16>
}
