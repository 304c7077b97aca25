// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// CausalConvWithState: the past state before the input along the length,
// one depthwise generic over the taps (t + j into the padded input)
// summing in f32 from the bias, SiLU then the conversion back, and the
// last k - 1 padded positions as the new state.

// CHECK-DAG: #[[$PAD:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, d3)>
// CHECK-LABEL: func.func @causal_conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4x8xf16>, %[[W:[^:]+]]: tensor<4x1x3xf16>, %[[B:[^:]+]]: tensor<4xf16>, %[[P:[^:]+]]: tensor<2x4x2xf16>
// CHECK:         %[[PADDED:.+]] = tensor.insert_slice %[[X]] into %{{.+}}[0, 0, 2] [2, 4, 8] [1, 1, 1] : tensor<2x4x8xf16> into tensor<2x4x10xf16>
// CHECK:         %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf16>) outs(%{{.+}} : tensor<2x4x8xf32>)
// CHECK:         %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[$PAD]], #[[$W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PADDED]], %[[W]] : tensor<2x4x10xf16>, tensor<4x1x3xf16>) outs(%[[INIT]] : tensor<2x4x8xf32>)
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[Y:.+]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<2x4x8xf32>) outs(%{{.+}} : tensor<2x4x8xf16>)
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:           arith.truncf
// CHECK:         %[[S:.+]] = tensor.extract_slice %[[PADDED]][0, 0, 8] [2, 4, 2] [1, 1, 1] : tensor<2x4x10xf16> to tensor<2x4x2xf16>
// CHECK:         return %[[Y]], %[[S]]
func.func @causal_conv(%x: tensor<2x4x8xf16>, %w: tensor<4x1x3xf16>, %b: tensor<4xf16>, %p: tensor<2x4x2xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x2xf16>) {
  %y, %s = kiln.causal_conv_with_state(%x, %w, %b, %p) {activation = "silu"} : (tensor<2x4x8xf16>, tensor<4x1x3xf16>, tensor<4xf16>, tensor<2x4x2xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x2xf16>)
  return %y, %s : tensor<2x4x8xf16>, tensor<2x4x2xf16>
}

// -----

// Without a past state the input follows zeros; one tap leaves an empty
// state and no padding.

// CHECK-LABEL: func.func @causal_conv_no_state
// CHECK:         linalg.fill
// CHECK:         tensor.insert_slice
// CHECK-NOT:     math.exp
// CHECK-LABEL: func.func @causal_conv_one_tap
// CHECK-NOT:     tensor.insert_slice
// CHECK:         tensor.empty() : tensor<1x2x0xf32>
func.func @causal_conv_no_state(%x: tensor<1x2x5xf32>, %w: tensor<2x1x4xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x3xf32>) {
  %y, %s = kiln.causal_conv_with_state(%x, %w, none, none) : (tensor<1x2x5xf32>, tensor<2x1x4xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x3xf32>)
  return %y, %s : tensor<1x2x5xf32>, tensor<1x2x3xf32>
}
func.func @causal_conv_one_tap(%x: tensor<1x2x5xf32>, %w: tensor<2x1x1xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x0xf32>) {
  %y, %s = kiln.causal_conv_with_state(%x, %w, none, none) : (tensor<1x2x5xf32>, tensor<2x1x1xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x0xf32>)
  return %y, %s : tensor<1x2x5xf32>, tensor<1x2x0xf32>
}

// -----

// LinearAttention (gated delta, 4 query heads on 2 KV heads of d_k = 2,
// d_v = 3, decay per head, beta per head): an scf.for over the 5 tokens
// carrying the f32 state and the output; per token the state decays by
// exp(g), S^T k is read back (a reduction over d_k), beta * (v - S^T k)
// is added as k ⊗ that, and each query head reads its KV head's state
// (loops b, h, g, m, d), scaled by 1/sqrt(d_k) and written at the token.

// CHECK-LABEL: func.func @linear_attention
// CHECK:         %[[S0:.+]] = linalg.fill {{.*}} -> tensor<1x2x2x3xf32>
// CHECK:         %[[LOOP:.+]]:2 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[S:.+]] = %[[S0]], %[[O:.+]] = %{{.+}}) -> (tensor<1x2x2x3xf32>, tensor<1x5x12xf32>)
// CHECK:           tensor.extract_slice %{{.+}}[0, %[[T]], 0] [1, 1, 4] [1, 1, 1] : tensor<1x5x4xf32> to tensor<1x1x4xf32>
// CHECK:           math.exp
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:           arith.subf
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.+}} : tensor<1x2x2x3xf32>)
// CHECK:           arith.constant 0.707106769 : f32
// CHECK:           tensor.insert_slice %{{.+}} into %[[O]][0, %[[T]], 0] [1, 1, 12] [1, 1, 1] : tensor<1x1x12xf32> into tensor<1x5x12xf32>
// CHECK:           linalg.copy {{.*}} outs(%[[S]] : tensor<1x2x2x3xf32>)
// CHECK:         return %[[LOOP]]#1, %[[LOOP]]#0
func.func @linear_attention(%q: tensor<1x5x8xf32>, %k: tensor<1x5x4xf32>, %v: tensor<1x5x6xf32>, %g: tensor<1x5x2xf32>, %beta: tensor<1x5x2xf32>) -> (tensor<1x5x12xf32>, tensor<1x2x2x3xf32>) {
  %o, %s = kiln.linear_attention(%q, %k, %v, none, %g, %beta) {q_num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<1x5x8xf32>, tensor<1x5x4xf32>, tensor<1x5x6xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> (tensor<1x5x12xf32>, tensor<1x2x2x3xf32>)
  return %o, %s : tensor<1x5x12xf32>, tensor<1x2x2x3xf32>
}

// -----

// The linear rule neither decays nor reads the state back.

// CHECK-LABEL: func.func @linear_attention_linear
// CHECK:         scf.for
// CHECK-NOT:       math.exp
// CHECK-NOT:       arith.subf
// CHECK:         scf.yield
func.func @linear_attention_linear(%q: tensor<2x1x4xf32>, %k: tensor<2x1x4xf32>, %v: tensor<2x1x4xf32>, %p: tensor<2x2x2x2xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x2x2xf32>) {
  %o, %s = kiln.linear_attention(%q, %k, %v, %p, none, none) {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, update_rule = "linear"} : (tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x2x2x2xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x2x2xf32>)
  return %o, %s : tensor<2x1x4xf32>, tensor<2x2x2x2xf32>
}

// -----

// TensorScatter: one generic over the cache; inside a row's write window
// (from write_indices[b], modulo the cache length when circular) the
// update's element, else the cache's.

// CHECK-LABEL: func.func @tensor_scatter
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x1x4x5xf32>, tensor<2xi64>) outs(%{{.+}} : tensor<2x1x4x5xf32>)
// CHECK:           linalg.index 2 : index
// CHECK:           arith.remsi
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x1x2x5xf32>
// CHECK:           arith.select
func.func @tensor_scatter(%c: tensor<2x1x4x5xf32>, %u: tensor<2x1x2x5xf32>, %i: tensor<2xi64>) -> tensor<2x1x4x5xf32> {
  %0 = kiln.tensor_scatter(%c, %u, %i) {mode = "circular"} : (tensor<2x1x4x5xf32>, tensor<2x1x2x5xf32>, tensor<2xi64>) -> tensor<2x1x4x5xf32>
  return %0 : tensor<2x1x4x5xf32>
}

