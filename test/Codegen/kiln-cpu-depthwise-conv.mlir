// RUN: kiln-opt %s -split-input-file -kiln-cpu-depthwise-conv | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-depthwise-conv=vector-bits=256 | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s -split-input-file -kiln-cpu-depthwise-conv=channels-last-below=0 | FileCheck %s --check-prefix=NCHW

#in = affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>
#in2 = affine_map<(n, c, h, w, i, j) -> (n, c, h * 2 + i, w * 2 + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>

// MobileNet's block: a 3x3 depthwise convolution of a zero-padded 14x14
// plane, starting from a per-channel bias, then a Clip. The pad's copy is
// not read: each plane is one forall iteration over (n, c), each output row
// one 16-lane accumulator (14 lanes used) whose taps take the input row's
// vector shifted by one lane either way, zeros shifted in; the Clip is
// applied before the store.

// CHECK-LABEL: func.func @mobilenet_block
// CHECK-SAME:    (%[[X:.+]]: tensor<1x32x14x14xf32>, %[[W:.+]]: tensor<32x1x3x3xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK:         scf.forall (%[[N:.+]], %[[C:.+]]) in (1, 32) shared_outs(%[[O:.+]] = %{{.+}}) -> (tensor<1x32x14x14xf32>)
// CHECK:           %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-COUNT-9:   tensor.extract %[[W]][%[[C]],
// CHECK:           %[[BIAS:.+]] = tensor.extract %[[B]][%[[C]]]
// CHECK:           %[[START:.+]] = vector.broadcast %[[BIAS]] : f32 to vector<16xf32>
// CHECK:           %[[PLANE:.+]] = tensor.extract_slice %[[O]][%[[N]], %[[C]], 0, 0] [1, 1, 14, 14] [1, 1, 1, 1] : tensor<1x32x14x14xf32> to tensor<14x14xf32>
// CHECK:           scf.for %[[OH:.+]] = {{.*}} iter_args(%[[P:.+]] = %[[PLANE]]) -> (tensor<14x14xf32>)
// The top window row: ih = oh - 1, zeros when outside [0, 14).
// CHECK:             %[[IH:.+]] = affine.apply #{{.+}}(%[[OH]])
// CHECK:             %[[ROW:.+]] = vector.transfer_read %[[X]][%[[N]], %[[C]], %{{.+}}, %{{.+}}], %{{.+}} : tensor<1x32x14x14xf32>, vector<16xf32>
// CHECK:             %[[SEL:.+]] = arith.select %{{.+}}, %[[ROW]], %[[ZERO]] : vector<16xf32>
// CHECK:             %[[LEFT:.+]] = vector.shuffle %[[ZERO]], %[[SEL]] [0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 14, 15]
// CHECK:             %[[A0:.+]] = vector.fma %{{.+}}, %[[LEFT]], %[[START]] : vector<16xf32>
// CHECK:             %[[A1:.+]] = vector.fma %{{.+}}, %[[SEL]], %[[A0]] : vector<16xf32>
// CHECK:             %[[RIGHT:.+]] = vector.shuffle %[[SEL]], %[[SEL]] [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 14, 15]
// CHECK:             vector.fma %{{.+}}, %[[RIGHT]], %[[A1]] : vector<16xf32>
// CHECK-COUNT-6:     vector.fma
// CHECK:             %[[MAX:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:             %[[MIN:.+]] = arith.minimumf %[[MAX]], %{{.+}} : vector<16xf32>
// CHECK:             vector.transfer_write %[[MIN]], %[[P]][%[[OH]], %{{.+}}] : vector<16xf32>, tensor<14x14xf32>
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.+}} into %[[O]][%[[N]], %[[C]], 0, 0] [1, 1, 14, 14] [1, 1, 1, 1] : tensor<14x14xf32> into tensor<1x32x14x14xf32>
// CHECK-NOT:     linalg.generic
// AVX2-LABEL:  func.func @mobilenet_block
// With 8-lane vectors a row is two accumulators: 18 FMAs.
// AVX2-COUNT-18: vector.fma %{{.+}} : vector<8xf32>
// AVX2-NOT:      vector.fma
// AVX2:          arith.maximumf
func.func @mobilenet_block(%x: tensor<1x32x14x14xf32>, %w: tensor<32x1x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x32x14x14xf32> to tensor<1x32x16x16xf32>
  %e = tensor.empty() : tensor<1x32x14x14xf32>
  %bias = linalg.generic {indexing_maps = [#ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<32xf32>) outs(%e : tensor<1x32x14x14xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x14x14xf32>
  %conv = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) outs(%bias : tensor<1x32x14x14xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x14x14xf32>
  %clip = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x32x14x14xf32>) outs(%e : tensor<1x32x14x14xf32>) {
  ^bb0(%in: f32, %o: f32):
    %lo = arith.maximumf %in, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x32x14x14xf32>
  return %clip : tensor<1x32x14x14xf32>
}

// -----

#in2 = affine_map<(n, c, h, w, i, j) -> (n, c, h * 2 + i, w * 2 + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>

// Stride 2 over a 40-wide row (three input vectors, the last partial) from
// a fill, no padding, and a second user of the result: lanes 2l + kw of
// two input vectors are taken by one shuffle; the 19-wide output row is
// two accumulators, the second written with a mask (not in bounds); no
// epilogue.

// CHECK-LABEL: func.func @strided
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (2, 8)
// CHECK:           %[[START:.+]] = vector.broadcast %[[ZERO]] : f32 to vector<16xf32>
// CHECK:           scf.for
// CHECK:             %[[R0:.+]] = vector.transfer_read {{.+}} {in_bounds = [true]} : tensor<2x8x9x40xf32>, vector<16xf32>
// CHECK:             %[[S0:.+]] = arith.select %{{.+}}, %[[R0]]
// CHECK:             %[[R1:.+]] = vector.transfer_read {{.+}} {in_bounds = [true]} : tensor<2x8x9x40xf32>, vector<16xf32>
// CHECK:             %[[S1:.+]] = arith.select %{{.+}}, %[[R1]]
// CHECK:             %[[R2:.+]] = vector.transfer_read {{.+}} : tensor<2x8x9x40xf32>, vector<16xf32>
// CHECK:             %[[S2:.+]] = arith.select %{{.+}}, %[[R2]]
// CHECK:             %[[E0:.+]] = vector.shuffle %[[S0]], %[[S1]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK:             vector.fma %{{.+}}, %[[E0]], %[[START]]
// CHECK:             %[[E1:.+]] = vector.shuffle %[[S2]], %[[S2]] [0, 2, 4, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK:             vector.fma %{{.+}}, %[[E1]], %[[START]]
// CHECK:             vector.transfer_write %{{.+}} {in_bounds = [true]} : vector<16xf32>, tensor<4x19xf32>
// CHECK:             vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : vector<16xf32>, tensor<4x19xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "parallel"]
func.func @strided(%x: tensor<2x8x9x40xf32>, %w: tensor<8x1x3x3xf32>) -> (tensor<2x8x4x19xf32>, tensor<2x8x4x19xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x4x19xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x4x19xf32>) -> tensor<2x8x4x19xf32>
  %conv = linalg.generic {indexing_maps = [#in2, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<2x8x9x40xf32>, tensor<8x1x3x3xf32>) outs(%f : tensor<2x8x4x19xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4x19xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<2x8x4x19xf32>) outs(%e : tensor<2x8x4x19xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4x19xf32>
  return %conv, %relu : tensor<2x8x4x19xf32>, tensor<2x8x4x19xf32>
}

// -----

#in = affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>

// A pad with a non-zero value is not folded (the lanes outside a row read
// as zero): its copy is read as the input. A row of 300 (19 input
// vectors, 298 outputs in 19 vectors) is taken in chunks of 8, 8 and 3
// output vectors, each loading only the 9, 9 and 3 input vectors it reads
// per window row (with 8-lane vectors: 38 output vectors in chunks of 8,
// 8, 8, 8 and 6). Not rewritten: f16 (the kernel sums in f32 vectors
// only), which stays the generic it was.

// CHECK-LABEL: func.func @negative
// CHECK:         %[[PAD:.+]] = tensor.pad
// CHECK:         scf.forall
// CHECK:           vector.transfer_read %[[PAD]]{{.+}} : tensor<1x4x8x8xf32>, vector<16xf32>
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (1, 4) {{.+}} -> (tensor<1x4x1x298xf32>)
// CHECK-COUNT-27:    vector.transfer_read %{{.+}} : tensor<1x4x3x300xf32>, vector<16xf32>
// CHECK-COUNT-8:     vector.transfer_write
// CHECK-COUNT-27:    vector.transfer_read %{{.+}} : tensor<1x4x3x300xf32>, vector<16xf32>
// CHECK-COUNT-8:     vector.transfer_write
// CHECK-COUNT-9:     vector.transfer_read %{{.+}} : tensor<1x4x3x300xf32>, vector<16xf32>
// CHECK-COUNT-3:     vector.transfer_write
// CHECK-NOT:         vector.transfer_write
// CHECK-NOT:     scf.forall (
// CHECK-COUNT-1: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-NOT:     scf.forall (
// AVX2-LABEL:  func.func @negative
// AVX2:          scf.forall (%{{.+}}, %{{.+}}) in (1, 4) {{.+}} -> (tensor<1x4x1x298xf32>)
// AVX2-COUNT-38:   vector.transfer_write %{{.+}} : vector<8xf32>, tensor<1x298xf32>
func.func @negative(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>, %y: tensor<1x4x3x300xf32>, %h: tensor<1x4x8x8xf16>, %wh: tensor<4x1x3x3xf16>) -> (tensor<1x4x6x6xf32>, tensor<1x4x1x298xf32>, tensor<1x4x6x6xf16>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %one : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %a = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) outs(%f : tensor<1x4x6x6xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %m = arith.mulf %u, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x6x6xf32>
  %e2 = tensor.empty() : tensor<1x4x1x298xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x1x298xf32>) -> tensor<1x4x1x298xf32>
  %b = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %w : tensor<1x4x3x300xf32>, tensor<4x1x3x3xf32>) outs(%f2 : tensor<1x4x1x298xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %m = arith.mulf %u, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x1x298xf32>
  %e3 = tensor.empty() : tensor<1x4x6x6xf16>
  %f3 = linalg.fill ins(%zh : f16) outs(%e3 : tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
  %c = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%h, %wh : tensor<1x4x8x8xf16>, tensor<4x1x3x3xf16>) outs(%f3 : tensor<1x4x6x6xf16>) {
  ^bb0(%u: f16, %k: f16, %o: f16):
    %m = arith.mulf %u, %k : f16
    %s = arith.addf %o, %m : f16
    linalg.yield %s : f16
  } -> tensor<1x4x6x6xf16>
  return %a, %b, %c : tensor<1x4x6x6xf32>, tensor<1x4x1x298xf32>, tensor<1x4x6x6xf16>
}

// -----

#in = affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>

// A depthwise QLinearConv's int32 sums (operands with their zero points
// subtracted, so the padding is zeros): the same rows, each tap an integer
// multiply and add.

// CHECK-LABEL: func.func @int32
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (1, 16)
// CHECK:           %[[ZERO:.+]] = arith.constant dense<0> : vector<16xi32>
// CHECK:           vector.shuffle %[[ZERO]], %{{.+}} [0, 16, 17, 18, 19, 20, 21, 22, 8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi32>, vector<16xi32>
// CHECK:           %[[P:.+]] = arith.muli %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK:           arith.addi %{{.+}}, %[[P]] : vector<16xi32>
// CHECK-NOT:     vector.fma
func.func @int32(%x: tensor<1x16x8x8xi32>, %w: tensor<16x1x3x3xi32>) -> tensor<1x16x8x8xi32> {
  %zero = arith.constant 0 : i32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : i32
  } : tensor<1x16x8x8xi32> to tensor<1x16x10x10xi32>
  %e = tensor.empty() : tensor<1x16x8x8xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x16x8x8xi32>) -> tensor<1x16x8x8xi32>
  %conv = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x16x10x10xi32>, tensor<16x1x3x3xi32>) outs(%f : tensor<1x16x8x8xi32>) {
  ^bb0(%a: i32, %k: i32, %o: i32):
    %m = arith.muli %a, %k : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<1x16x8x8xi32>
  return %conv : tensor<1x16x8x8xi32>
}

// -----

#in = affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>

// Two depthwise convolutions in a row, a Relu between: the second reads
// the first's rewrite (its input is matched again after the first is
// replaced).

// CHECK-LABEL: func.func @chained
// CHECK:         %[[A:.+]] = scf.forall (%{{.+}}, %{{.+}}) in (1, 4) {{.+}} -> (tensor<1x4x6x6xf32>)
// CHECK:           arith.maximumf
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (1, 4) {{.+}} -> (tensor<1x4x4x4xf32>)
// CHECK:           vector.transfer_read %[[A]]
func.func @chained(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x6x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c1 = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) outs(%f1 : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x6x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x4x6x6xf32>) outs(%e1 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<1x4x6x6xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c2 = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%r, %w : tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) outs(%f2 : tensor<1x4x4x4xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x4xf32>
  return %c2 : tensor<1x4x4x4xf32>
}

// -----

// ResNet's MaxPool: 3x3, stride 2, over a plane padded with -inf (the
// window's shape is an unread input). The same vector rows, the taps'
// inputs taken from the row vectors by two shuffles (stride 2), lanes
// outside the input -inf, combined with the body's maximum; the rows are
// read from the unpadded input (the pad is left dead) and the maxima start
// from the fill's -inf.

// CHECK-LABEL: func.func @max_pool
// CHECK-SAME:    (%[[X:.+]]: tensor<1x8x32x32xf32>)
// CHECK:         scf.forall (%[[N:.+]], %[[C:.+]]) in (1, 8)
// CHECK:           %[[NINF:.+]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK-NOT:       tensor.extract %
// CHECK:           scf.for %[[OH:.+]] =
// CHECK:             %[[ROW:.+]] = vector.transfer_read %[[X]][%[[N]], %[[C]], %{{.+}}, %{{.+}}], %{{.+}} : tensor<1x8x32x32xf32>, vector<16xf32>
// CHECK:             arith.select %{{.+}}, %[[ROW]], %[[NINF]] : vector<16xf32>
// CHECK:             vector.shuffle
// CHECK:             arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-COUNT-8:     arith.maximumf %{{.+}} : vector<16xf32>
// CHECK:             vector.transfer_write
// CHECK-NOT:     linalg.generic

// Not a window maximum: a sum over the window (the body is not a maximum
// or a multiply-add) stays a generic.
// CHECK-LABEL: func.func @sum_pool
// CHECK:         linalg.generic

#pin = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
#pwin = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#pout = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @max_pool(%x: tensor<1x8x32x32xf32>) -> tensor<1x8x16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x32x32xf32> to tensor<1x8x34x34xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#pin, #pwin, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%padded, %win : tensor<1x8x34x34xf32>, tensor<3x3xf32>) outs(%init : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  return %r : tensor<1x8x16x16xf32>
}
func.func @sum_pool(%x: tensor<1x8x34x34xf32>) -> tensor<1x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#pin, #pwin, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %win : tensor<1x8x34x34xf32>, tensor<3x3xf32>) outs(%init : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.addf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  return %r : tensor<1x8x16x16xf32>
}

// -----

// bf16 input and weights summed in f32 (--precision=bf16): the rows are
// read as bf16 vectors (zeros past their end) and widened, the taps'
// weights widened once, the sums f32 FMAs as above.

#in = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh + kh, ow + kw)>
#wt = affine_map<(n, c, oh, ow, kh, kw) -> (c, 0, kh, kw)>
#out = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>

// CHECK-LABEL: func.func @bf16_depthwise
// CHECK:         scf.forall (%[[N:.+]], %[[C:.+]]) in (1, 32)
// CHECK-COUNT-9:   arith.extf %{{.+}} : bf16 to f32
// CHECK:           scf.for
// CHECK:             %[[ROW:.+]] = vector.transfer_read {{.+}} : tensor<1x32x14x14xbf16>, vector<16xbf16>
// CHECK:             %[[WIDE:.+]] = arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// CHECK:             arith.select %{{.+}}, %[[WIDE]], %{{.+}} : vector<16xf32>
// CHECK-COUNT-9:     vector.fma {{.+}} : vector<16xf32>
// CHECK-NOT:     linalg.generic
func.func @bf16_depthwise(%x: tensor<1x32x14x14xbf16>, %w: tensor<32x1x3x3xbf16>, %init: tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : bf16
  } : tensor<1x32x14x14xbf16> to tensor<1x32x16x16xbf16>
  %conv = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x32x16x16xbf16>, tensor<32x1x3x3xbf16>) outs(%init : tensor<1x32x14x14xf32>) {
  ^bb0(%a: bf16, %k: bf16, %o: f32):
    %ae = arith.extf %a : bf16 to f32
    %ke = arith.extf %k : bf16 to f32
    %m = arith.mulf %ae, %ke : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x14x14xf32>
  return %conv : tensor<1x32x14x14xf32>
}

// -----

// One widened input and one not: no half-precision product, left alone.

#in = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh + kh, ow + kw)>
#wt = affine_map<(n, c, oh, ow, kh, kw) -> (c, 0, kh, kw)>
#out = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>

// CHECK-LABEL: func.func @mixed_depthwise
// CHECK:         linalg.generic
// CHECK-NOT:     scf.forall
func.func @mixed_depthwise(%x: tensor<1x32x16x16xbf16>, %w: tensor<32x1x3x3xf32>, %init: tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32> {
  %conv = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x32x16x16xbf16>, tensor<32x1x3x3xf32>) outs(%init : tensor<1x32x14x14xf32>) {
  ^bb0(%a: bf16, %k: f32, %o: f32):
    %ae = arith.extf %a : bf16 to f32
    %m = arith.mulf %ae, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x14x14xf32>
  return %conv : tensor<1x32x14x14xf32>
}

// -----

#in = affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>
#wt = affine_map<(n, c, h, w, i, j) -> (c, 0, i, j)>
#out = affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>

// A depthwise convolution after a 1x1 convolution of a 7x7 plane with 64
// output channels, which kiln-conv-to-gemm computes channels-last: it is
// computed channels-last too. Its input is transposed to NHWC and its
// weights to [kh, kw, 1, c] (a transpose here, as they are an argument;
// a constant is reordered at compile time); an scf.forall over (n, oh,
// 16-channel blocks) starts each position's sums from the bias vectors and
// applies the Clip before the store. A row whose window is all inside the
// input takes three column loops, the first and last column checked
// (selected to zero outside), the interior unchecked; other rows check
// every tap. The NHWC result is transposed back.

// CHECK-LABEL: func.func @channels_last
// CHECK:         %[[CONV:.+]] = linalg.conv_2d_nchw_fchw
// CHECK:         %[[WT:.+]] = linalg.transpose ins(%{{.+}} : tensor<64x1x3x3xf32>) {{.+}} permutation = [2, 3, 1, 0]
// CHECK:         %[[XT:.+]] = linalg.transpose ins(%[[CONV]] : tensor<1x64x7x7xf32>) {{.+}} permutation = [0, 2, 3, 1]
// CHECK:         %[[R:.+]] = scf.forall (%[[N:.+]], %[[OH:.+]], %[[CB:.+]]) in (1, 7, 4) shared_outs(%{{.+}}) -> (tensor<1x7x7x64xf32>)
// CHECK-COUNT-9:   vector.transfer_read %[[WT]]
// CHECK:           vector.transfer_read %{{.+}} : tensor<64xf32>, vector<16xf32>
// CHECK:           scf.if
// CHECK:             scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c1{{(_[0-9]+)?}} step
// CHECK:               arith.select
// CHECK:             scf.for %{{.+}} = %c1{{(_[0-9]+)?}} to %c6{{(_[0-9]+)?}} step
// CHECK-NOT:             arith.select
// CHECK-COUNT-9:         vector.fma
// CHECK:                 arith.maximumf
// CHECK:                 arith.minimumf
// CHECK:             scf.for %{{.+}} = %c6{{(_[0-9]+)?}} to %c7{{(_[0-9]+)?}} step
// CHECK:           else
// CHECK:             scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c7{{(_[0-9]+)?}} step
// CHECK:           tensor.parallel_insert_slice %{{.+}}[%[[N]], %[[OH]], 0, %{{.+}}] [1, 1, 7, 16] [1, 1, 1, 1] : tensor<7x16xf32> into tensor<1x7x7x64xf32>
// CHECK:         %[[BACK:.+]] = linalg.transpose ins(%[[R]] : tensor<1x7x7x64xf32>) {{.+}} permutation = [0, 3, 1, 2]
// CHECK:         return %[[BACK]]
// AVX2-LABEL:  func.func @channels_last
// AVX2:          scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 7, 4) {{.+}} -> (tensor<1x7x7x64xf32>)
// AVX2-COUNT-18:   vector.transfer_read %{{.+}} : tensor<3x3x1x64xf32>, vector<8xf32>
// NCHW-LABEL:  func.func @channels_last
// NCHW-NOT:      linalg.transpose
// NCHW:          scf.forall (%{{.+}}, %{{.+}}) in (1, 64)
func.func @channels_last(%x: tensor<1x32x7x7xf32>, %k: tensor<64x32x1x1xf32>, %w: tensor<64x1x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e0 = tensor.empty() : tensor<1x64x7x7xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x32x7x7xf32>, tensor<64x32x1x1xf32>) outs(%f0 : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %p = tensor.pad %y low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x64x7x7xf32> to tensor<1x64x9x9xf32>
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %init = linalg.generic {indexing_maps = [#ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<64xf32>) outs(%e : tensor<1x64x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x64x7x7xf32>
  %c = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x64x9x9xf32>, tensor<64x1x3x3xf32>) outs(%init : tensor<1x64x7x7xf32>) {
  ^bb0(%u: f32, %k2: f32, %o: f32):
    %m = arith.mulf %u, %k2 : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x7x7xf32>
  %e2 = tensor.empty() : tensor<1x64x7x7xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x64x7x7xf32>) outs(%e2 : tensor<1x64x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %lo = arith.maximumf %v, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x64x7x7xf32>
  return %r : tensor<1x64x7x7xf32>
}
