// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-fold-dequantize))' | FileCheck %s

// Both operands of the MatMul are DequantizeLinear'd float8 e4m3 with zero
// zero points: the product becomes one of the float8 bytes (each operand's
// producer copied to yield its bits as i8, which its other users, the
// DequantizeLinear, read back through a bitcast), bitcast back and
// extended to f32 in the body, then a product with both scales: the
// activation's per tensor, the weight's per output column (the output's
// dim 1).
// CHECK-LABEL: func.func @matmul
// CHECK:       %[[WB:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<32x16xi8>)
// CHECK:         arith.bitcast %{{.+}} : f8E4M3FN to i8
// CHECK:       %[[XB:.+]] = linalg.generic {{.+}} ins(%arg0, %{{.+}} : tensor<64x32xf32>, tensor<f32>) outs(%{{.+}} : tensor<64x32xi8>)
// CHECK:         arith.truncf %{{.+}} : f32 to f8E4M3FN
// CHECK:         arith.bitcast %{{.+}} : f8E4M3FN to i8
// CHECK:       linalg.generic {{.+}} ins(%[[XB]] : tensor<64x32xi8>) outs(%{{.+}} : tensor<64x32xf8E4M3FN>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:    arith.bitcast %{{.+}} : i8 to f8E4M3FN
// CHECK:       %[[P:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[XB]], %[[WB]] : tensor<64x32xi8>, tensor<32x16xi8>) outs(%{{.+}} : tensor<64x16xf32>)
// CHECK:         %[[A8:.+]] = arith.bitcast %{{.+}} : i8 to f8E4M3FN
// CHECK:         %[[A:.+]] = arith.extf %[[A8]] : f8E4M3FN to f32
// CHECK:         %[[B8:.+]] = arith.bitcast %{{.+}} : i8 to f8E4M3FN
// CHECK:         %[[B:.+]] = arith.extf %[[B8]] : f8E4M3FN to f32
// CHECK:         arith.mulf %[[A]], %[[B]] : f32
// CHECK:       %[[Y:.+]] = linalg.generic {{.+}} ins(%[[P]], %{{.+}}, %{{.+}} : tensor<64x16xf32>, tensor<f32>, tensor<16xf32>)
// CHECK:         %[[S:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK:         arith.mulf %{{.+}}, %[[S]] : f32
// CHECK:       return %[[Y]]

// Left as they are: a zero point that is not zero; a weight scale along
// K (the reduction), which no scaling after the sum can apply.
// CHECK-LABEL: func.func @nonzero_zero_point
// CHECK-NOT:   xi8>
// CHECK:       return
// CHECK-LABEL: func.func @scale_along_k
// CHECK-NOT:   xi8>
// CHECK:       return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s0 = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// A MatMul of a dequantized activation (per-tensor scale) and a
// dequantized float8 constant weight (per-column scales).
func.func @matmul(%x: tensor<64x32xf32>) -> tensor<64x16xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f8E4M3FN>
  %w = arith.constant dense<[[1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0]]> : tensor<1x16xf8E4M3FN>
  %wb = tensor.empty() : tensor<32x16xf8E4M3FN>
  %wfull = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<1x16xf8E4M3FN>) outs(%wb : tensor<32x16xf8E4M3FN>) {
  ^bb0(%in: f8E4M3FN, %o: f8E4M3FN):
    linalg.yield %in : f8E4M3FN
  } -> tensor<32x16xf8E4M3FN>
  %ws = arith.constant dense<0.25> : tensor<16xf32>
  %wz = arith.constant dense<0.0> : tensor<16xf8E4M3FN>
  %e8 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id2, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x32xf32>, tensor<f32>) outs(%e8 : tensor<64x32xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %d = arith.divf %in, %sc : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<64x32xf8E4M3FN>
  %ex = tensor.empty() : tensor<64x32xf32>
  %xd = linalg.generic {indexing_maps = [#id2, #s0, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%q, %s, %z : tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) outs(%ex : tensor<64x32xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<64x32xf32>
  %ew = tensor.empty() : tensor<32x16xf32>
  %wd = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%wfull, %ws, %wz : tensor<32x16xf8E4M3FN>, tensor<16xf32>, tensor<16xf8E4M3FN>) outs(%ew : tensor<32x16xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<64x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ey : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xd, %wd : tensor<64x32xf32>, tensor<32x16xf32>) outs(%init : tensor<64x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s0 = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

func.func @nonzero_zero_point(%x: tensor<64x32xf32>) -> tensor<64x16xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f8E4M3FN>
  %w = arith.constant dense<[[1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0]]> : tensor<1x16xf8E4M3FN>
  %wb = tensor.empty() : tensor<32x16xf8E4M3FN>
  %wfull = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<1x16xf8E4M3FN>) outs(%wb : tensor<32x16xf8E4M3FN>) {
  ^bb0(%in: f8E4M3FN, %o: f8E4M3FN):
    linalg.yield %in : f8E4M3FN
  } -> tensor<32x16xf8E4M3FN>
  %ws = arith.constant dense<0.25> : tensor<16xf32>
  %wz = arith.constant dense<1.0> : tensor<16xf8E4M3FN>
  %e8 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id2, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x32xf32>, tensor<f32>) outs(%e8 : tensor<64x32xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %d = arith.divf %in, %sc : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<64x32xf8E4M3FN>
  %ex = tensor.empty() : tensor<64x32xf32>
  %xd = linalg.generic {indexing_maps = [#id2, #s0, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%q, %s, %z : tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) outs(%ex : tensor<64x32xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<64x32xf32>
  %ew = tensor.empty() : tensor<32x16xf32>
  %wd = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%wfull, %ws, %wz : tensor<32x16xf8E4M3FN>, tensor<16xf32>, tensor<16xf8E4M3FN>) outs(%ew : tensor<32x16xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<64x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ey : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xd, %wd : tensor<64x32xf32>, tensor<32x16xf32>) outs(%init : tensor<64x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s0 = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

func.func @scale_along_k(%x: tensor<64x32xf32>) -> tensor<64x16xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f8E4M3FN>
  %w = arith.constant dense<[[1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0]]> : tensor<1x16xf8E4M3FN>
  %wb = tensor.empty() : tensor<32x16xf8E4M3FN>
  %wfull = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<1x16xf8E4M3FN>) outs(%wb : tensor<32x16xf8E4M3FN>) {
  ^bb0(%in: f8E4M3FN, %o: f8E4M3FN):
    linalg.yield %in : f8E4M3FN
  } -> tensor<32x16xf8E4M3FN>
  %ws = arith.constant dense<0.25> : tensor<32xf32>
  %wz = arith.constant dense<0.0> : tensor<16xf8E4M3FN>
  %e8 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id2, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x32xf32>, tensor<f32>) outs(%e8 : tensor<64x32xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %d = arith.divf %in, %sc : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<64x32xf8E4M3FN>
  %ex = tensor.empty() : tensor<64x32xf32>
  %xd = linalg.generic {indexing_maps = [#id2, #s0, #s0, #id2], iterator_types = ["parallel", "parallel"]} ins(%q, %s, %z : tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) outs(%ex : tensor<64x32xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<64x32xf32>
  %ew = tensor.empty() : tensor<32x16xf32>
  %wd = linalg.generic {indexing_maps = [#id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%wfull, %ws, %wz : tensor<32x16xf8E4M3FN>, tensor<32xf32>, tensor<16xf8E4M3FN>) outs(%ew : tensor<32x16xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<64x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ey : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xd, %wd : tensor<64x32xf32>, tensor<32x16xf32>) outs(%init : tensor<64x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// Operands that reach the product through transposes (and a pad before
// one): no transpose is left for the tiles to gather through. The float8
// constant's bytes are reordered at compile time ([3, 2] of 1, 2, 3, 4, 5,
// 6 (e4m3 0x38 0x40 0x44 0x48 0x4A 0x4C) read as [2, 3]: 1, 3, 5, 2, 4,
// 6); the activation's QuantizeLinear is copied to write its bytes in the
// transposed layout (its input read through the permutation), and the pad
// that came before the transpose (of dim 1) follows it, on dim 0.
// CHECK-DAG:   #[[$T:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_operands
// CHECK:       %[[XB:.+]] = linalg.generic {indexing_maps = [#[[$T]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %{{.+}} : tensor<2x4xf32>, tensor<f32>) outs(%{{.+}} : tensor<4x2xi8>)
// CHECK:         arith.bitcast %{{.+}} : f8E4M3FN to i8
// CHECK:       %[[Z:.+]] = arith.constant 0 : i8
// CHECK:       %[[P:.+]] = tensor.pad %[[XB]] low[0, 0] high[1, 0]
// CHECK:         tensor.yield %[[Z]] : i8
// CHECK:       } : tensor<4x2xi8> to tensor<5x2xi8>
// CHECK:       %[[W:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<2x3xi8>
// CHECK:       linalg.generic {{.+}} ins(%[[P]], %[[W]] : tensor<5x2xi8>, tensor<2x3xi8>)
// CHECK:       [[BLOB]]: "0x0100000038444A40484C"

#t2 = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_operands(%x: tensor<2x4xf32>) -> tensor<5x3xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f8E4M3FN>
  %e8 = tensor.empty() : tensor<2x4xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<2x4xf32>, tensor<f32>) outs(%e8 : tensor<2x4xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %d = arith.divf %in, %sc : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<2x4xf8E4M3FN>
  %ex = tensor.empty() : tensor<2x4xf32>
  %xd = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%q, %s, %z : tensor<2x4xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) outs(%ex : tensor<2x4xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<2x4xf32>
  %c0 = arith.constant 0.0 : f32
  %xp = tensor.pad %xd low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<2x4xf32> to tensor<2x5xf32>
  %et = tensor.empty() : tensor<5x2xf32>
  %xt = linalg.transpose ins(%xp : tensor<2x5xf32>) outs(%et : tensor<5x2xf32>) permutation = [1, 0]
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf8E4M3FN>
  %ws = arith.constant dense<0.25> : tensor<f32>
  %ew = tensor.empty() : tensor<3x2xf32>
  %wd = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w, %ws, %z : tensor<3x2xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) outs(%ew : tensor<3x2xf32>) {
  ^bb0(%in: f8E4M3FN, %sc: f32, %zp: f8E4M3FN, %o: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.extf %zp : f8E4M3FN to f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.mulf %2, %sc : f32
    linalg.yield %3 : f32
  } -> tensor<3x2xf32>
  %ewt = tensor.empty() : tensor<2x3xf32>
  %wt = linalg.transpose ins(%wd : tensor<3x2xf32>) outs(%ewt : tensor<2x3xf32>) permutation = [1, 0]
  %eo = tensor.empty() : tensor<5x3xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%eo : tensor<5x3xf32>) -> tensor<5x3xf32>
  %y = linalg.matmul ins(%xt, %wt : tensor<5x2xf32>, tensor<2x3xf32>) outs(%zero : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
