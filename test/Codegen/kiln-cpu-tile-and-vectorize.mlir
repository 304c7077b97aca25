// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="panel-bytes=1024" | FileCheck %s --check-prefix=PANEL
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="parallel-chunks=1" | FileCheck %s --check-prefix=NOCHUNK
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="fuse-residuals=true" | FileCheck %s --check-prefix=RES
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="k-chunk-bytes=1024" | FileCheck %s --check-prefix=KCHUNK
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="k-chunk-bytes=4096" | FileCheck %s --check-prefix=KWHOLE

// A 12x32x64 f32 matmul: 6x16 register tiles (two AVX2 vectors wide), the
// k loop innermost with the accumulator carried in registers (the
// transfer pair is hoisted out of it), one outer product per step of k.

// CHECK-LABEL: func.func @matmul
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %c6
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK:             %[[ACC:.+]] = vector.transfer_read {{.+}} : tensor<6x16xf32>, vector<6x16xf32>
// CHECK:             %[[R:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %c64 step %c1 iter_args({{.+}}, %[[V:.+]] = %[[ACC]]) -> ({{.+}}, vector<6x16xf32>)
// CHECK-NOT:           vector.transfer_write
// CHECK:               vector.contract {{.+}} %[[V]] : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK:             vector.transfer_write %[[R]]#2
// CHECK-NOT:     linalg.matmul

// With a 1 KiB panel budget, the 32 columns split into scf.forall blocks
// of 16 (K = 64 floats is 256 bytes a column).
// PANEL-LABEL: func.func @matmul
// PANEL:         scf.forall (%{{.+}}) = (0) to (32) step (16)

// With 1 KiB chunks of the 16-column panel (16 k), the reduction is swept
// around the row tiles: the first chunk's tiles sum into the init, a loop
// over the middle chunks (k = 16, 32) and the last chunk's tiles each into
// the sums so far; every tile keeps its accumulator in registers over its
// 16 k.
// KCHUNK-LABEL: func.func @matmul
// KCHUNK:         %[[FIRST:.+]] = scf.for %{{.+}} = %c0 to %c12 step %c6
// KCHUNK:           scf.for %{{.+}} = %c0 to %c16 step %c1
// KCHUNK:         %[[MID:.+]] = scf.for %[[K:.+]] = %c16 to %c48 step %c16 iter_args(%{{.+}} = %[[FIRST]])
// KCHUNK:           scf.for %{{.+}} = %c0 to %c12 step %c6
// KCHUNK:             scf.for %{{.+}} = %c0 to %c16 step %c1
// KCHUNK:               vector.contract
// KCHUNK:         scf.for %{{.+}} = %c0 to %c12 step %c6 iter_args(%{{.+}} = %[[MID]])
// KCHUNK:           scf.for %{{.+}} = %c0 to %c16 step %c1
// A 4 KiB chunk holds the whole panel (64 k of 16 columns): one sweep.
// KWHOLE-LABEL: func.func @matmul
// KWHOLE-NOT:     to %c16 step %c1
// KWHOLE:         scf.for %{{.+}} = %{{.+}} to %c64 step %c1
func.func @matmul(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %0 : tensor<12x32xf32>
}

// -----

// 20 columns: a 16-wide tile and a peeled 4-wide remainder, both static
// (no masks); 8 rows: one full 6-row tile and a peeled 2-row remainder.

// CHECK-LABEL: func.func @peeled
// CHECK:           vector.contract {{.+}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK:           vector.contract {{.+}} : vector<6x1xf32>, vector<1x4xf32> into vector<6x4xf32>
// CHECK:           vector.contract {{.+}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// CHECK:           vector.contract {{.+}} : vector<2x1xf32>, vector<1x4xf32> into vector<2x4xf32>
// CHECK-NOT:     vector.mask
func.func @peeled(%a: tensor<8x64xf32>, %b: tensor<64x20xf32>, %c: tensor<8x20xf32>) -> tensor<8x20xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x20xf32>) outs(%c : tensor<8x20xf32>) -> tensor<8x20xf32>
  return %0 : tensor<8x20xf32>
}

// -----

// A batched contraction as a generic (what MatMul lowers to): the batch
// dim goes to scf.forall, and f64 takes 2x4-lane vectors.

// CHECK-LABEL: func.func @batched
// CHECK:         scf.forall (%{{.+}}) in (3)
// CHECK:           vector.contract {{.+}} into vector<1x6x8xf64>
#a = affine_map<(b, m, k, n) -> (b, m, k)>
#b = affine_map<(b, m, k, n) -> (b, k, n)>
#c = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @batched(%a: tensor<3x6x16xf64>, %b: tensor<3x16x8xf64>, %c: tensor<3x6x8xf64>) -> tensor<3x6x8xf64> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : tensor<3x6x16xf64>, tensor<3x16x8xf64>) outs(%c : tensor<3x6x8xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<3x6x8xf64>
  return %0 : tensor<3x6x8xf64>
}

// -----

// Not float contractions: an integer matmul is not vectorized, only split
// into 8 parallel blocks of rows (12 x 32 x 64 iterations is above the
// 16384 threshold); a small elementwise op and dynamic shapes are left as
// they are.

// CHECK-LABEL: func.func @left_alone
// CHECK:         scf.forall (%{{.+}}) = (0) to (12) step (2)
// CHECK:           linalg.matmul ins(%{{.+}} : tensor<2x64xi32>, tensor<64x32xi32>)
// CHECK:         linalg.add ins(%{{.+}} : tensor<12x32xf32>, tensor<12x32xf32>)
// CHECK:         linalg.matmul ins(%{{.+}} : tensor<?x64xf32>, tensor<64x32xf32>)
// CHECK-NOT:     vector.
func.func @left_alone(%a: tensor<12x64xi32>, %b: tensor<64x32xi32>, %c: tensor<12x32xi32>,
                      %x: tensor<12x32xf32>, %d: tensor<?x64xf32>, %e: tensor<64x32xf32>,
                      %f: tensor<?x32xf32>) -> (tensor<12x32xi32>, tensor<12x32xf32>, tensor<?x32xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xi32>, tensor<64x32xi32>) outs(%c : tensor<12x32xi32>) -> tensor<12x32xi32>
  %1 = linalg.add ins(%x, %x : tensor<12x32xf32>, tensor<12x32xf32>) outs(%x : tensor<12x32xf32>) -> tensor<12x32xf32>
  %2 = linalg.matmul ins(%d, %e : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %0, %1, %2 : tensor<12x32xi32>, tensor<12x32xf32>, tensor<?x32xf32>
}

// -----

// A large elementwise op: its outermost parallel loop with two or more
// iterations (dim 1 here, dim 0 has one) splits into 8 blocks; with
// parallel-chunks=1 it is left alone.

// CHECK-LABEL: func.func @spread
// CHECK:         scf.forall (%{{.+}}) = (0) to (64) step (8)
// CHECK:           linalg.generic {{.+}} ins(%{{.+}} : tensor<1x8x512xf32>)
// NOCHUNK-LABEL: func.func @spread
// NOCHUNK-NOT:     scf.forall
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @spread(%x: tensor<1x64x512xf32>) -> tensor<1x64x512xf32> {
  %e = tensor.empty() : tensor<1x64x512xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x64x512xf32>) outs(%e : tensor<1x64x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x64x512xf32>
  return %0 : tensor<1x64x512xf32>
}

// -----

// A copy that reads its input through a floordiv and a mod of dims 0 and 1
// (a packed im2col panel): a block of those dims does not read the span of
// its ends, so the first dim read directly (dim 2) is split instead.

// CHECK-LABEL: func.func @spread_nonlinear
// CHECK:         scf.forall (%{{.+}}) = (0) to (16) step (2)
// CHECK:           linalg.generic {{.+}} ins(%{{.+}} : tensor<64x2x64xf32>)
#nl_in = affine_map<(d0, d1, d2) -> ((d0 * 32 + d1) floordiv 64, d2, (d0 * 32 + d1) mod 64)>
#nl_out = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
func.func @spread_nonlinear(%x: tensor<64x16x64xf32>) -> tensor<128x16x32xf32> {
  %e = tensor.empty() : tensor<128x16x32xf32>
  %0 = linalg.generic {indexing_maps = [#nl_in, #nl_out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<64x16x64xf32>) outs(%e : tensor<128x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128x16x32xf32>
  return %0 : tensor<128x16x32xf32>
}

// -----

// Too few blocks for the threads: a 48x64x32 matmul fits one panel (no
// column blocks), so its 48 rows split into scf.forall blocks of whole
// 6-row register tiles, at least parallel-chunks (8) of them; with
// parallel-chunks=1 the rows are not split.

// CHECK-LABEL: func.func @few_blocks
// CHECK:         scf.forall (%{{.+}}) = (0) to (48) step (6)
// CHECK:           vector.contract {{.+}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// NOCHUNK-LABEL: func.func @few_blocks
// NOCHUNK-NOT:   scf.forall
// NOCHUNK:       vector.contract
func.func @few_blocks(%a: tensor<48x64xf32>, %b: tensor<64x32xf32>, %c: tensor<48x32xf32>) -> tensor<48x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<48x64xf32>, tensor<64x32xf32>) outs(%c : tensor<48x32xf32>) -> tensor<48x32xf32>
  return %0 : tensor<48x32xf32>
}

// -----

// An activation that is the only consumer of a contraction (here through
// the reshape that kiln-conv-to-gemm leaves) is applied to each register
// tile's accumulator after its reduction loop, before the one write: a
// Clip (ReLU6) with its bounds broadcast. The separate pass over the
// result is gone.

// CHECK-LABEL: func.func @epilogue
// CHECK:         %[[R:.+]]:3 = scf.for {{.+}} -> ({{.+}}, vector<6x16xf32>)
// CHECK:           vector.contract
// CHECK:         %[[LO:.+]] = arith.maximumf %[[R]]#2, %{{.+}} : vector<6x16xf32>
// CHECK:         %[[HI:.+]] = arith.minimumf %[[LO]], %{{.+}} : vector<6x16xf32>
// CHECK:         vector.transfer_write %[[HI]]
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.expand_shape
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @epilogue(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>) -> tensor<3x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [3, 4, 32] : tensor<12x32xf32> into tensor<3x4x32xf32>
  %e = tensor.empty() : tensor<3x4x32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<3x4x32xf32>) outs(%e : tensor<3x4x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    %n = arith.minimumf %m, %six : f32
    linalg.yield %n : f32
  } -> tensor<3x4x32xf32>
  return %2 : tensor<3x4x32xf32>
}

// -----

// Through the transpose back to NCHW that kiln-conv-to-gemm's channels-last
// form leaves, too: a Relu after it is applied to the accumulators, and
// the transpose moves the activated values.

// CHECK-LABEL: func.func @epilogue_through_transpose
// CHECK:         %[[R:.+]]:3 = scf.for {{.+}} -> ({{.+}}, vector<6x16xf32>)
// CHECK:           vector.contract
// CHECK:         %[[A:.+]] = arith.maximumf %[[R]]#2, %{{.+}} : vector<6x16xf32>
// CHECK:         vector.transfer_write %[[A]]
// CHECK:         %[[T:.+]] = linalg.transpose
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[T]]
func.func @epilogue_through_transpose(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>) -> tensor<32x12xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %t = tensor.empty() : tensor<32x12xf32>
  %1 = linalg.transpose ins(%0 : tensor<12x32xf32>) outs(%t : tensor<32x12xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<32x12xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<32x12xf32>) outs(%e : tensor<32x12xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<32x12xf32>
  return %2 : tensor<32x12xf32>
}

// -----

// A residual Add + Relu (a ResNet block's end) after a contraction,
// through the reshape back to the image's shape: each register tile
// reads the residual's vector where it writes (the residual reshaped back
// to the contraction's [12, 32]), adds it to the accumulator and applies
// the Relu before its one write; the separate pass is gone. That is
// fuse-residuals (off by default: slower on ResNet-50); without it the
// add stays an op of its own.

// RES-LABEL:   func.func @residual_epilogue
// RES-SAME:      %[[RES:[^:]+]]: tensor<3x4x32xf32>
// RES:           %[[VIEW:.+]] = tensor.collapse_shape %[[RES]] {{\[}}[0, 1], [2]] : tensor<3x4x32xf32> into tensor<12x32xf32>
// RES:           %[[R:.+]]:3 = scf.for {{.+}} -> ({{.+}}, vector<6x16xf32>)
// RES:             vector.contract
// RES:           %[[RV:.+]] = vector.transfer_read %[[VIEW]][%{{.+}}, %{{.+}}], %{{.+}} {in_bounds = [true, true]} : tensor<12x32xf32>, vector<6x16xf32>
// RES:           %[[S:.+]] = arith.addf %[[RV]], %[[R]]#2 : vector<6x16xf32>
// RES:           %[[A:.+]] = arith.maximumf %[[S]], %{{.+}} : vector<6x16xf32>
// RES:           vector.transfer_write %[[A]]
// RES-NOT:       linalg.generic
// RES:           return
// CHECK-LABEL: func.func @residual_epilogue
// CHECK:         vector.contract
// CHECK:         linalg.generic
// CHECK:           arith.addf
func.func @residual_epilogue(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>,
                             %r: tensor<3x4x32xf32>) -> tensor<3x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [3, 4, 32] : tensor<12x32xf32> into tensor<3x4x32xf32>
  %e = tensor.empty() : tensor<3x4x32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r, %1 : tensor<3x4x32xf32>, tensor<3x4x32xf32>) outs(%e : tensor<3x4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<3x4x32xf32>
  return %2 : tensor<3x4x32xf32>
}

// -----

// Not epilogues: a residual add whose other tensor is computed after the
// contraction (its tiles could not read it), and a contraction whose
// result has a second user. Both stay separate ops after the contraction.

// CHECK-LABEL: func.func @not_epilogues
// CHECK:         vector.contract
// CHECK:         linalg.generic
// CHECK:           arith.negf
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         vector.contract
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK:         return
#id = affine_map<(i, j) -> (i, j)>
func.func @not_epilogues(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>,
                         %r: tensor<12x32xf32>) -> (tensor<12x32xf32>, tensor<12x32xf32>, tensor<12x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x32xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %later = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<12x32xf32>) outs(%e : tensor<12x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<12x32xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %later : tensor<12x32xf32>, tensor<12x32xf32>) outs(%e : tensor<12x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<12x32xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<12x32xf32>) outs(%e : tensor<12x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<12x32xf32>
  return %1, %2, %3 : tensor<12x32xf32>, tensor<12x32xf32>, tensor<12x32xf32>
}

// -----

// A MatMul of a [S, 1, K] activation (sequence first, ViT's attention
// input) by a 2-D weight has two row dims, S and the unit one: the
// register tile runs along S (6 rows), not along the unit dim with S in
// an scf.forall (where every block would read the whole weight for one
// row).

// CHECK-LABEL: func.func @two_row_dims
// CHECK-NOT:     scf.forall
// CHECK:         scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK:           vector.contract {{.+}} : vector<6x1x1xf32>, vector<1x16xf32> into vector<6x1x16xf32>
#sa = affine_map<(s, b, n, k) -> (s, b, k)>
#sb = affine_map<(s, b, n, k) -> (k, n)>
#sc = affine_map<(s, b, n, k) -> (s, b, n)>
func.func @two_row_dims(%a: tensor<12x1x32xf32>, %b: tensor<32x64xf32>, %c: tensor<12x1x64xf32>) -> tensor<12x1x64xf32> {
  %0 = linalg.generic {indexing_maps = [#sa, #sb, #sc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<12x1x32xf32>, tensor<32x64xf32>) outs(%c : tensor<12x1x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<12x1x64xf32>
  return %0 : tensor<12x1x64xf32>
}

// -----

// A consumer that yields a value from outside its body (every element the
// same constant) is not an epilogue: it stays a separate op.

// CHECK-LABEL: func.func @yields_outside_value
// CHECK:         vector.contract
// CHECK:         linalg.generic
// CHECK:           linalg.yield %{{.+}} : f32
func.func @yields_outside_value(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<12x32xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<12x32xf32>) outs(%e : tensor<12x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %one : f32
  } -> tensor<12x32xf32>
  return %1 : tensor<12x32xf32>
}

// -----

// A convolution's GEMM (kiln-conv-to-gemm's NCHW form) whose init is its
// bias broadcast along the output channels, seen through the reshapes to
// [n, f, p / 16, 16]: each register tile's accumulators start from the
// bias values of its rows (read as a vector, broadcast along the plane)
// instead of a read of the init, and the loops write into the broadcast's
// own destination, so the broadcast is dead (canonicalization drops it).
// The peeled 2-row remainder (f = 8 = 6 + 2) starts so too.

#ch = affine_map<(n, f, p) -> (f)>
#id3 = affine_map<(n, f, p) -> (n, f, p)>
// CHECK-LABEL: func.func @bias_start
// CHECK-SAME:    (%{{.+}}: tensor<8x27xf32>, %{{.+}}: tensor<1x27x32xf32>, %[[BIAS:.+]]: tensor<8xf32>)
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x8x32xf32>
// CHECK:         %[[INIT:.+]] = tensor.expand_shape %[[E]]
// CHECK:         scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %[[INIT]])
// CHECK:           %[[B:.+]] = vector.transfer_read %[[BIAS]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<8xf32>, vector<6xf32>
// CHECK:           %[[S:.+]] = vector.shape_cast %[[B]] : vector<6xf32> to vector<1x6x1x1xf32>
// CHECK:           %[[ACC:.+]] = vector.broadcast %[[S]] : vector<1x6x1x1xf32> to vector<1x6x1x16xf32>
// CHECK:           scf.for {{.+}} iter_args({{.+}}, %{{.+}} = %[[ACC]])
// CHECK:           %[[B2:.+]] = vector.transfer_read %[[BIAS]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<8xf32>, vector<2xf32>
// CHECK:           %[[S2:.+]] = vector.shape_cast %[[B2]] : vector<2xf32> to vector<1x2x1x1xf32>
// CHECK:           %[[ACC2:.+]] = vector.broadcast %[[S2]] : vector<1x2x1x1xf32> to vector<1x2x1x16xf32>
// CHECK:           scf.for {{.+}} iter_args({{.+}}, %{{.+}} = %[[ACC2]])
func.func @bias_start(%w: tensor<8x27xf32>, %col: tensor<1x27x32xf32>, %bias: tensor<8xf32>) -> tensor<1x8x32xf32> {
  %e = tensor.empty() : tensor<1x8x32xf32>
  %b = linalg.generic {indexing_maps = [#ch, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<8xf32>) outs(%e : tensor<1x8x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x32xf32>
  %acc = tensor.expand_shape %b [[0], [1], [2, 3]] output_shape [1, 8, 2, 16] : tensor<1x8x32xf32> into tensor<1x8x2x16xf32>
  %colp = tensor.expand_shape %col [[0], [1], [2, 3]] output_shape [1, 27, 2, 16] : tensor<1x27x32xf32> into tensor<1x27x2x16xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(n, f, pb, pi, k) -> (f, k)>, affine_map<(n, f, pb, pi, k) -> (n, k, pb, pi)>, affine_map<(n, f, pb, pi, k) -> (n, f, pb, pi)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%w, %colp : tensor<8x27xf32>, tensor<1x27x2x16xf32>) outs(%acc : tensor<1x8x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x2x16xf32>
  %r = tensor.collapse_shape %0 [[0], [1], [2, 3]] : tensor<1x8x2x16xf32> into tensor<1x8x32xf32>
  return %r : tensor<1x8x32xf32>
}

// -----

// A channels-last convolution's GEMM with packed weights: the output
// channels (the bias dim) are split into blocks of the register tile's
// width, [n, p, f / 16, 16]. The bias index is fb * 16 + fi: each tile
// reads its block's 16 bias values as one vector at 16 * fb, broadcast
// along the plane's rows (the peeled 2-row remainder too). (Checked after
// canonicalization, which folds the offset's sum of zeros.)

// CANON-LABEL: func.func @bias_start_split
// CANON-SAME:    %[[BIAS:[^:]+]]: tensor<32xf32>
// CANON:         scf.forall (%[[FB:.+]]) in (2)
// CANON:           %[[O:.+]] = arith.muli %[[FB]], %{{.+}} : index
// CANON:           %[[B:.+]] = vector.transfer_read %[[BIAS]][%[[O]]], %{{.+}} {in_bounds = [true]} : tensor<32xf32>, vector<16xf32>
// CANON:           %[[ACC:.+]] = vector.broadcast %[[B]] : vector<16xf32> to vector<1x6x1x16xf32>
// CANON:           scf.for {{.+}} iter_args(%{{.+}} = %[[ACC]])
// CANON:           %[[O2:.+]] = arith.muli %[[FB]], %{{.+}} : index
// CANON:           %[[B2:.+]] = vector.transfer_read %[[BIAS]][%[[O2]]], %{{.+}} {in_bounds = [true]} : tensor<32xf32>, vector<16xf32>
// CANON:           vector.broadcast %[[B2]] : vector<16xf32> to vector<1x2x1x16xf32>
#chl = affine_map<(n, p, f) -> (f)>
#idl = affine_map<(n, p, f) -> (n, p, f)>
func.func @bias_start_split(%col: tensor<1x8x16xf32>, %w: tensor<2x16x16xf32>, %bias: tensor<32xf32>) -> tensor<1x8x32xf32> {
  %e = tensor.empty() : tensor<1x8x32xf32>
  %b = linalg.generic {indexing_maps = [#chl, #idl], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<32xf32>) outs(%e : tensor<1x8x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x32xf32>
  %acc = tensor.expand_shape %b [[0], [1], [2, 3]] output_shape [1, 8, 2, 16] : tensor<1x8x32xf32> into tensor<1x8x2x16xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(n, p, fb, k, fi) -> (n, p, k)>, affine_map<(n, p, fb, k, fi) -> (fb, k, fi)>, affine_map<(n, p, fb, k, fi) -> (n, p, fb, fi)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%col, %w : tensor<1x8x16xf32>, tensor<2x16x16xf32>) outs(%acc : tensor<1x8x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x2x16xf32>
  %r = tensor.collapse_shape %0 [[0], [1], [2, 3]] : tensor<1x8x2x16xf32> into tensor<1x8x32xf32>
  return %r : tensor<1x8x32xf32>
}

// -----

// A zero fill starts the accumulators as a splat; an init that is an
// argument, or a broadcast that something else reads too, is still read.

// CHECK-LABEL: func.func @fill_start
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         vector.broadcast %[[ZERO]] : f32 to vector<6x16xf32>
// CHECK-NOT:     linalg.fill
// CHECK-LABEL: func.func @read_inits
// CHECK:         vector.transfer_read %{{.+}} : tensor<6x16xf32>, vector<6x16xf32>
// CHECK:         %[[BB:[0-9]+]] = scf.for
// CHECK:           vector.broadcast %{{.+}} : vector<16xf32> to vector<1x16xf32>
// CHECK:         vector.transfer_read %[[BB]]{{.+}} : tensor<6x16xf32>, vector<6x16xf32>
func.func @fill_start(%a: tensor<12x64xf32>, %b: tensor<64x32xf32>) -> tensor<12x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<12x32xf32>) -> tensor<12x32xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %0 : tensor<12x32xf32>
}
func.func @read_inits(%a: tensor<6x64xf32>, %b: tensor<64x16xf32>, %c: tensor<6x16xf32>, %bias: tensor<16xf32>) -> (tensor<6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<6x64xf32>, tensor<64x16xf32>) outs(%c : tensor<6x16xf32>) -> tensor<6x16xf32>
  %e = tensor.empty() : tensor<6x16xf32>
  %bb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<16xf32>) outs(%e : tensor<6x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<6x16xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<6x64xf32>, tensor<64x16xf32>) outs(%bb : tensor<6x16xf32>) -> tensor<6x16xf32>
  return %0, %1, %bb : tensor<6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>
}

// -----

// A bias that another contraction computes (a matvec, itself tiled by this
// pass) is not taken as a start: the init is read. The broadcast is a
// copy along rows, vectorized (two vectors a row).

// CHECK-LABEL: func.func @computed_bias
// CHECK:         %[[BIAS:[0-9]+]] = scf.for
// CHECK:           vector.contract
// CHECK:         scf.for
// CHECK:           vector.transfer_read %[[BIAS]]{{.+}} : tensor<32xf32>, vector<32xf32>
// CHECK:           vector.broadcast %{{.+}} : vector<32xf32> to vector<1x32xf32>
// CHECK:         vector.transfer_read %{{.+}} : tensor<6x16xf32>, vector<6x16xf32>
func.func @computed_bias(%m: tensor<32x64xf32>, %v: tensor<64xf32>, %a: tensor<12x64xf32>, %b: tensor<64x32xf32>) -> tensor<12x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %bias = linalg.matvec ins(%m, %v : tensor<32x64xf32>, tensor<64xf32>) outs(%z : tensor<32xf32>) -> tensor<32xf32>
  %e2 = tensor.empty() : tensor<12x32xf32>
  %bb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<32xf32>) outs(%e2 : tensor<12x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<12x32xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x32xf32>) outs(%bb : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %0 : tensor<12x32xf32>
}

// -----

// In an image loop (kiln-cpu-image-loops), a contraction started from its
// bias with a Relu epilogue whose destination is the slice of the loop's
// result: the tiles write into that slice (reshaped), moved before the
// contraction, not into an empty tensor that bufferization would copy
// into the slice afterwards.

// CHECK-LABEL: func.func @epilogue_in_place
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}})
// CHECK:           %[[D:.+]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0] [1, 64, 64] [1, 1, 1]
// CHECK:           %[[F:.+]] = tensor.collapse_shape %[[D]]
// CHECK:           %[[E:.+]] = tensor.expand_shape %[[F]]
// CHECK:           %[[T:.+]] = scf.forall {{.+}} shared_outs(%{{.+}} = %[[E]])
// CHECK:             arith.maximumf
// CHECK:           tensor.insert_slice %[[T]] into %[[ACC]][%[[I]], 0, 0] [1, 64, 64] [1, 1, 1]
#bias = affine_map<(n, f, p) -> (f)>
#id3 = affine_map<(n, f, p) -> (n, f, p)>
#w = affine_map<(n, f, p, k) -> (f, k)>
#x = affine_map<(n, f, p, k) -> (n, k, p)>
#o = affine_map<(n, f, p, k) -> (n, f, p)>
func.func @epilogue_in_place(%x: tensor<2x64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %out: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %out) -> (tensor<2x64x64xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<2x64x64xf32> to tensor<1x64x64xf32>
    %e = tensor.empty() : tensor<1x64x64xf32>
    %bb = linalg.generic {indexing_maps = [#bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b : tensor<64xf32>) outs(%e : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    } -> tensor<1x64x64xf32>
    %g = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %xi : tensor<64x64xf32>, tensor<1x64x64xf32>) outs(%bb : tensor<1x64x64xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x64x64xf32>
    %d = tensor.extract_slice %acc[%i, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<2x64x64xf32> to tensor<1x64x64xf32>
    %rl = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : tensor<1x64x64xf32>) outs(%d : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %mx = arith.maximumf %in, %z : f32
      linalg.yield %mx : f32
    } -> tensor<1x64x64xf32>
    %ins = tensor.insert_slice %rl into %acc[%i, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<1x64x64xf32> into tensor<2x64x64xf32>
    scf.yield %ins : tensor<2x64x64xf32>
  }
  return %r : tensor<2x64x64xf32>
}

// -----

// A large fill (MaxPool's -inf start) is split over threads like the other
// non-contraction ops: an scf.forall over blocks of its outermost loop
// with more than one iteration.

// CHECK-LABEL: func.func @spread_fill
// CHECK:         scf.forall (%[[I:.+]]) = (0) to (64) step (8) shared_outs(%[[O:.+]] = %{{.+}}) -> (tensor<1x64x56x56xf32>)
// CHECK:           %[[S:.+]] = tensor.extract_slice %[[O]][0, %[[I]], 0, 0] [1, 8, 56, 56]
// CHECK:           linalg.fill ins(%{{.+}} : f32) outs(%[[S]] : tensor<1x8x56x56xf32>)
func.func @spread_fill(%init: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %f = linalg.fill ins(%ninf : f32) outs(%init : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %f : tensor<1x64x56x56xf32>
}

// -----

// Attention's Q K^T: the input that holds the output's contiguous dim n
// (K, [b, n, k]) has k innermost, so a register tile's vector of n would be
// gathered at every step of k. It is copied once transposed, [b, k, n],
// and read so; through the transpose that made it (a head split), the two
// transposes are one. Left alone: a constant input (kiln-pack-weights'),
// and an input whose elements are each read fewer than 4 times (2 rows).

// CHECK-LABEL: func.func @kt_operand
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x16x8xf32>, %[[K:[^:]+]]: tensor<2x32x8xf32>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[K]] : tensor<2x32x8xf32>) outs(%{{.+}} : tensor<2x8x32xf32>) permutation = [0, 2, 1]
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[KT]]
// CHECK:           vector.contract

// CHECK-LABEL: func.func @kt_through_transpose
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x16x8xf32>, %[[SRC:[^:]+]]: tensor<32x2x8xf32>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[SRC]] : tensor<32x2x8xf32>) outs(%{{.+}} : tensor<2x8x32xf32>) permutation = [1, 2, 0]
// CHECK-NOT:     linalg.transpose
// CHECK:         vector.contract

// CHECK-LABEL: func.func @kt_constant
// CHECK-NOT:     linalg.transpose
// CHECK:         vector.contract
// CHECK-LABEL: func.func @kt_little_reuse
// CHECK-NOT:     linalg.transpose
// CHECK:         return
#qa = affine_map<(b, m, k, n) -> (b, m, k)>
#kb = affine_map<(b, m, k, n) -> (b, n, k)>
#sc = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @kt_operand(%q: tensor<2x16x8xf32>, %k: tensor<2x32x8xf32>, %c: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = linalg.generic {indexing_maps = [#qa, #kb, #sc], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %k : tensor<2x16x8xf32>, tensor<2x32x8xf32>) outs(%c : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}
func.func @kt_through_transpose(%q: tensor<2x16x8xf32>, %src: tensor<32x2x8xf32>, %c: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %e = tensor.empty() : tensor<2x32x8xf32>
  %k = linalg.transpose ins(%src : tensor<32x2x8xf32>) outs(%e : tensor<2x32x8xf32>) permutation = [1, 0, 2]
  %0 = linalg.generic {indexing_maps = [#qa, #kb, #sc], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %k : tensor<2x16x8xf32>, tensor<2x32x8xf32>) outs(%c : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}
func.func @kt_constant(%q: tensor<2x16x8xf32>, %c: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %k = arith.constant dense<1.0> : tensor<2x32x8xf32>
  %0 = linalg.generic {indexing_maps = [#qa, #kb, #sc], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %k : tensor<2x16x8xf32>, tensor<2x32x8xf32>) outs(%c : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}
func.func @kt_little_reuse(%q: tensor<2x2x8xf32>, %k: tensor<2x32x8xf32>, %c: tensor<2x2x32xf32>) -> tensor<2x2x32xf32> {
  %0 = linalg.generic {indexing_maps = [#qa, #kb, #sc], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %k : tensor<2x2x8xf32>, tensor<2x32x8xf32>) outs(%c : tensor<2x2x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x32xf32>
  return %0 : tensor<2x2x32xf32>
}

// -----

// Copies along rows are vectorized: attention's head split (a transpose
// that keeps the last dim) reads and writes each 64-float row in two
// tiles of 4 vectors (1x1x1x32 at the default 256 bits). A transpose of the last dim stays a
// linalg op (its rows are not contiguous in the source).

// CHECK-LABEL: func.func @head_split
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for {{.+}} step %c32
// CHECK:                 vector.transfer_read {{.+}} : tensor<1x1x1x32xf32>, vector<1x1x1x32xf32>
// CHECK:                 vector.transfer_write {{.+}} : vector<1x1x1x32xf32>, tensor<1x1x1x32xf32>
// CHECK-NOT:     linalg.transpose
// CHECK-LABEL: func.func @last_dim
// CHECK:         linalg.transpose
// CHECK-NOT:     vector.transfer_write
// CHECK:         return
func.func @head_split(%x: tensor<1x8x4x64xf32>) -> tensor<1x4x8x64xf32> {
  %e = tensor.empty() : tensor<1x4x8x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x4x64xf32>) outs(%e : tensor<1x4x8x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x4x8x64xf32>
}
func.func @last_dim(%x: tensor<8x64xf32>) -> tensor<64x8xf32> {
  %e = tensor.empty() : tensor<64x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x64xf32>) outs(%e : tensor<64x8xf32>) permutation = [1, 0]
  return %t : tensor<64x8xf32>
}

// -----

// A copy into a loop-carried tensor (a recurrent layer's state, written in
// place each step) is left as it is: tiled, bufferization could no longer
// tell that the loop yields its own buffer.

// CHECK-LABEL: func.func @carried_copy
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK-NOT:       vector.transfer_write
// CHECK:         return
func.func @carried_copy(%x: tensor<4x64xf32>, %h: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %h) -> (tensor<4x64xf32>) {
    %c = linalg.copy ins(%x : tensor<4x64xf32>) outs(%s : tensor<4x64xf32>) -> tensor<4x64xf32>
    scf.yield %c : tensor<4x64xf32>
  }
  return %r : tensor<4x64xf32>
}
