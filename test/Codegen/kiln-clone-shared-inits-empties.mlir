// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits=empties=true -cse | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits -cse | FileCheck %s --check-prefix=OFF

// An elementwise op after a convolution that reads a padded input, writing
// into a tensor.empty another op writes too: with empties=true it gets its
// own, tagged so that CSE keeps them apart (bufferization then gives it its
// own buffer, not one the convolution may read in place). Without the
// option they share it.

// CHECK-LABEL: func.func @after_padded_conv
// CHECK:         %[[E0:.+]] = tensor.empty() : tensor<1x2x4x4xf16>
// CHECK:         %[[A:.+]] = linalg.generic {{.*}} outs(%[[E0]] : tensor<1x2x4x4xf16>)
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK:         %[[E1:.+]] = tensor.empty() {kiln.init_clone = {{[0-9]+}} : i64} : tensor<1x2x4x4xf16>
// CHECK:         linalg.generic {{.*}} outs(%[[E1]] : tensor<1x2x4x4xf16>)
// OFF-LABEL: func.func @after_padded_conv
// OFF:         %[[E0:.+]] = tensor.empty() : tensor<1x2x4x4xf16>
// OFF:         linalg.generic {{.*}} outs(%[[E0]] : tensor<1x2x4x4xf16>)
// OFF:         linalg.conv_2d_nchw_fchw
// OFF:         linalg.generic {{.*}} outs(%[[E0]] : tensor<1x2x4x4xf16>)
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @after_padded_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf16>) -> tensor<1x2x4x4xf16> {
  %e = tensor.empty() : tensor<1x2x4x4xf16>
  %zero = arith.constant 0.0 : f16
  %zero32 = arith.constant 0.0 : f32
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x2x4x4xf16>
  %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f16
  } : tensor<1x2x4x4xf16> to tensor<1x2x6x6xf16>
  %acc0 = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero32 : f32) outs(%acc0 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x2x6x6xf16>, tensor<2x2x3x3xf16>)
      outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %a : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf16>) outs(%e : tensor<1x2x4x4xf16>) {
  ^bb0(%in: f32, %res: f16, %out: f16):
    %t = arith.truncf %in : f32 to f16
    %s = arith.addf %t, %res : f16
    linalg.yield %s : f16
  } -> tensor<1x2x4x4xf16>
  return %r : tensor<1x2x4x4xf16>
}

// -----

// Two elementwise writers with no padded contraction before them keep
// sharing the tensor.empty (they may write in place).

// CHECK-LABEL: func.func @plain_writers
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT:     kiln.init_clone
#id = affine_map<(d0) -> (d0)>
func.func @plain_writers(%x: tensor<8xf32>) -> tensor<8xf16> {
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
