// RUN: kiln-opt %s -split-input-file -kiln-cpu-row-reductions -canonicalize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-row-reductions="vector-bits=256 unroll=1" -canonicalize | FileCheck %s --check-prefix=AVX2

// A sum over rows of 40: two whole vectors of 16 lanes in two
// accumulators, a masked tail of 8, one tree reduction, the output's
// value added last.

// CHECK-LABEL: func.func @sum
// CHECK-SAME:    %[[X:[^:]+]]: memref<4x40xf32>, %[[OUT:[^:]+]]: memref<4xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:           %[[V0:.+]] = vector.load %[[X]][%[[I]], %{{.+}}] : memref<4x40xf32>, vector<16xf32>
// CHECK:           %[[V1:.+]] = vector.load %[[X]][%[[I]], %{{.+}}] : memref<4x40xf32>, vector<16xf32>
// CHECK:           %[[MASK:.+]] = vector.constant_mask [8] : vector<16xi1>
// CHECK:           %[[T:.+]] = vector.maskedload %[[X]][%[[I]], %{{.+}}], %[[MASK]], %[[ZERO]]
// CHECK:           %[[TS:.+]] = arith.select %[[MASK]], %[[T]], %[[ZERO]]
// CHECK:           %[[R:.+]] = vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK:           %[[OLD:.+]] = memref.load %[[OUT]][%[[I]]]
// CHECK:           %[[NEW:.+]] = arith.addf %[[R]], %[[OLD]] : f32
// CHECK:           memref.store %[[NEW]], %[[OUT]][%[[I]]]
// CHECK-NOT:     linalg.generic

// AVX2-LABEL: func.func @sum
// AVX2:         vector.load {{.+}} vector<8xf32>
// AVX2:         vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<8xf32> into f32

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum(%x: memref<4x40xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x40xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Softmax's sum of exp(x - max): the row's maximum is loaded once per row
// and broadcast; the body runs on vectors in four accumulators.

// CHECK-LABEL: func.func @exp_sum
// CHECK-SAME:    %[[X:[^:]+]]: memref<2x12x128xf32>, %[[M:[^:]+]]: memref<2x12xf32>
// CHECK:         scf.for %[[B:[^ ]+]] =
// CHECK:           scf.for %[[H:[^ ]+]] =
// CHECK:             %[[MAX:.+]] = memref.load %[[M]][%[[B]], %[[H]]]
// CHECK:             %{{.+}}:4 = scf.for %[[K:[^ ]+]] = %{{.+}} to %{{.+}} step %[[C64:[^ ]+]] iter_args(
// CHECK:               %[[V:.+]] = vector.load %[[X]][%[[B]], %[[H]], %[[K]]] : memref<2x12x128xf32>, vector<16xf32>
// CHECK:               %[[MAXV:.+]] = vector.broadcast %[[MAX]] : f32 to vector<16xf32>
// CHECK:               %[[D:.+]] = arith.subf %[[V]], %[[MAXV]] : vector<16xf32>
// CHECK:               %[[E:.+]] = math.exp %[[D]] : vector<16xf32>
// CHECK:               arith.addf %{{.+}}, %[[E]] : vector<16xf32>
// CHECK:             vector.reduction <add>
// CHECK-NOT:     linalg.generic

#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @exp_sum(%x: memref<2x12x128xf32>, %m: memref<2x12xf32>, %out: memref<2x12xf32>) {
  linalg.generic {indexing_maps = [#x3, #r3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %m : memref<2x12x128xf32>, memref<2x12xf32>) outs(%out : memref<2x12xf32>) {
  ^bb0(%a: f32, %mx: f32, %acc: f32):
    %d = arith.subf %a, %mx : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A maximum over a strided slice whose rows are contiguous (a subview), and
// an integer sum into i32 of sign-extended bytes (64 lanes of i8 read, the
// widest element decides: 16 lanes).

// CHECK-LABEL: func.func @max_subview
// CHECK-DAG:     arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK:         vector.load %{{.+}} : memref<3x32xf32, strided<[64, 1], offset: 8>>, vector<16xf32>
// CHECK:         arith.maxnumf %{{.+}} : vector<16xf32>
// CHECK:         vector.reduction <maxnumf>
// CHECK:         arith.maxnumf %{{.+}} : f32

// CHECK-LABEL: func.func @int_sum
// CHECK:         %[[B:.+]] = vector.load %{{.+}} : memref<8x64xi8>, vector<16xi8>
// CHECK:         arith.extsi %[[B]] : vector<16xi8> to vector<16xi32>
// CHECK:         vector.reduction <add>, %{{.+}} : vector<16xi32> into i32

#m2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>
func.func @max_subview(%x: memref<3x32xf32, strided<[64, 1], offset: 8>>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [#m2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x32xf32, strided<[64, 1], offset: 8>>) outs(%out : memref<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maxnumf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @int_sum(%x: memref<8x64xi8>, %out: memref<8xi32>) {
  linalg.generic {indexing_maps = [#m2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xi8>) outs(%out : memref<8xi32>) {
  ^bb0(%a: i8, %acc: i32):
    %e = arith.extsi %a : i8 to i32
    %s = arith.addi %acc, %e : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Two outputs, each with its own combiner (a sum and a sum of squares).

// CHECK-LABEL: func.func @two_outputs
// CHECK:         %{{.+}}:8 = scf.for
// CHECK:         vector.reduction <add>
// CHECK:         vector.reduction <add>
// CHECK-NOT:     linalg.generic

func.func @two_outputs(%x: memref<4x256xf32>, %s: memref<4xf32>, %q: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%s, %q : memref<4xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %as: f32, %aq: f32):
    %sq = arith.mulf %a, %a : f32
    %ns = arith.addf %as, %a : f32
    %nq = arith.addf %aq, %sq : f32
    linalg.yield %ns, %nq : f32, f32
  }
  return
}

// -----

// A tile of an scf.forall over rows, as LayerNorm's mean in a tile of 25
// of 197 rows: the row count is dynamic (the last tile is shorter), the
// row length static. The loop over rows runs to the tile's dim.

// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x?x768xf32, strided<[151296, 768, 1], offset: ?>>
// CHECK:         %[[ROWS:.+]] = memref.dim %[[X]], %c1
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[ROWS]] step
// CHECK:           vector.load %[[X]]{{.+}} vector<16xf32>
// CHECK:           vector.reduction <add>
// CHECK-NOT:     linalg.generic

// AVX2-LABEL: func.func @dynamic_rows
// AVX2:         memref.dim
// AVX2:         vector.load {{.+}} vector<8xf32>
// AVX2-NOT:     linalg.generic

// A dynamic row length is left to the scalar loops (the chunks and the
// tail are set at compile time).

// CHECK-LABEL: func.func @dynamic_row_length
// CHECK:         linalg.generic
// AVX2-LABEL:  func.func @dynamic_row_length
// AVX2:          linalg.generic

#d3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#d2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dynamic_rows(%x: memref<1x?x768xf32, strided<[151296, 768, 1], offset: ?>>,
                        %out: memref<1x?xf32, strided<[197, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#d3, #d2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x?x768xf32, strided<[151296, 768, 1], offset: ?>>)
      outs(%out : memref<1x?xf32, strided<[197, 1], offset: ?>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @dynamic_row_length(%x: memref<4x?xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x?xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left to the scalar loops: a reduction that is not the innermost loop, a
// row read across its rows (strided), a row shorter than a vector, an
// index computation, an accumulator read twice, and ops on tensors.

// CHECK-LABEL: func.func @outer_reduction
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @strided_row
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @short_row
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @index
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @acc_twice
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @tensors
// CHECK:         linalg.generic

func.func @outer_reduction(%x: memref<64x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @strided_row(%x: memref<64x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @short_row(%x: memref<64x8xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x8xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @index(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %p = arith.mulf %a, %f : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @acc_twice(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %acc, %acc : f32
    %s = arith.addf %p, %a : f32
    linalg.yield %s : f32
  }
  return
}
func.func @tensors(%x: tensor<4x64xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%out : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
