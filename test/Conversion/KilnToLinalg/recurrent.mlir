// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// A forward RNN: X * W^T + Wb + Rb for all steps is one matmul before the
// loop; each step of the scf.for accumulates H * R^T into its slice, applies
// tanh, copies the new state into the loop's and writes it to Y.

// CHECK-LABEL: func.func @rnn
// CHECK-SAME:    (%[[X:.+]]: tensor<4x2x3xf32>, %[[W:.+]]: tensor<1x5x3xf32>, %[[R:.+]]: tensor<1x5x5xf32>, %[[B:.+]]: tensor<1x10xf32>)
// CHECK:         %[[RS:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 5, 5] [1, 1, 1] : tensor<1x5x5xf32> to tensor<5x5xf32>
// CHECK:         %[[RT:.+]] = linalg.transpose ins(%[[RS]] : tensor<5x5xf32>) {{.+}} permutation = [1, 0]
// CHECK:         %[[XF:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<4x2x3xf32> into tensor<8x3xf32>
// CHECK:         %[[WB:.+]] = tensor.extract_slice %[[B]][0, 0] [1, 5] [1, 1]
// CHECK:         %[[RB:.+]] = tensor.extract_slice %[[B]][0, 5] [1, 5] [1, 1]
// CHECK:         %[[BIAS:.+]] = linalg.generic {{.+}} ins(%[[WB]], %[[RB]] : tensor<5xf32>, tensor<5xf32>)
// CHECK:           arith.addf
// CHECK:         %[[INIT:.+]] = linalg.generic {{.+}} ins(%[[BIAS]] : tensor<5xf32>) outs(%{{.+}} : tensor<8x5xf32>)
// CHECK:         %[[WT:.+]] = linalg.transpose
// CHECK:         %[[PROJ:.+]] = linalg.matmul ins(%[[XF]], %[[WT]] : tensor<8x3xf32>, tensor<3x5xf32>) outs(%[[INIT]] : tensor<8x5xf32>)
// CHECK:         %[[XW:.+]] = tensor.expand_shape %[[PROJ]] {{\[\[}}0, 1], [2]] output_shape [4, 2, 5]
// CHECK:         %[[H0:.+]] = linalg.fill
// CHECK:         %[[Y0:.+]] = tensor.empty() : tensor<4x2x5xf32>
// CHECK:         %[[LOOP:.+]]:2 = scf.for %[[S:[^ ]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:[^ ]+]] = %[[H0]], %[[Y:[^ ]+]] = %[[Y0]]) -> (tensor<2x5xf32>, tensor<4x2x5xf32>)
// CHECK:           %[[XWS:.+]] = tensor.extract_slice %[[XW]][%[[S]], 0, 0] [1, 2, 5] [1, 1, 1] : tensor<4x2x5xf32> to tensor<2x5xf32>
// CHECK:           %[[PRE:.+]] = linalg.matmul ins(%[[H]], %[[RT]] : tensor<2x5xf32>, tensor<5x5xf32>) outs(%[[XWS]] : tensor<2x5xf32>)
// CHECK:           %[[NEW:.+]] = linalg.generic {{.+}} ins(%[[PRE]] : tensor<2x5xf32>)
// CHECK:             math.tanh
// CHECK:           %[[NEXT:.+]] = linalg.copy ins(%[[NEW]] : tensor<2x5xf32>) outs(%[[H]] : tensor<2x5xf32>)
// CHECK:           %[[YS:.+]] = tensor.insert_slice %[[NEXT]] into %[[Y]][%[[S]], 0, 0] [1, 2, 5] [1, 1, 1]
// CHECK:           scf.yield %[[NEXT]], %[[YS]]
// CHECK:         %[[YOUT:.+]] = tensor.insert_slice %[[LOOP]]#1 into %{{.+}}[0, 0, 0, 0] [4, 1, 2, 5] [1, 1, 1, 1] : tensor<4x2x5xf32> into tensor<4x1x2x5xf32>
// CHECK:         %[[HOUT:.+]] = tensor.insert_slice %[[LOOP]]#0 into %{{.+}}[0, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<2x5xf32> into tensor<1x2x5xf32>
// CHECK:         return %[[YOUT]], %[[HOUT]]
// CHECK-NOT:     kiln.
func.func @rnn(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>) {
  %y, %y_h = kiln.rnn(%x, %w, %r, %b) {hidden_size = 5 : i64} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return %y, %y_h : tensor<4x1x2x5xf32>, tensor<1x2x5xf32>
}

// -----

// A reverse GRU with linear_before_reset walks the steps from the last;
// Rb_h stays out of the input projection (its bias adds Wb + Rb for z and r
// only) and initializes the H * R_h^T matmul. The gates clip, then apply
// the activations with their alpha and beta (HardSigmoid 0.3, 0.6 for f,
// LeakyRelu 0.1 for g), and H = (1 - z) * h~ + z * H. initial_h is copied
// into a tensor of the loop's own.

// CHECK-LABEL: func.func @gru
// CHECK-SAME:    %[[H0:[^:]+]]: tensor<1x2x3xf32>)
// CHECK:         %[[RZR:.+]] = linalg.transpose ins(%{{.+}} : tensor<6x3xf32>)
// CHECK:         %[[RH:.+]] = linalg.transpose ins(%{{.+}} : tensor<3x3xf32>)
// CHECK:         %[[RBH:.+]] = tensor.extract_slice %{{.+}}[0, 15] [1, 3] [1, 1] : tensor<1x18xf32> to tensor<3xf32>
// CHECK:         %[[RBHB:.+]] = linalg.generic {{.+}} ins(%[[RBH]] : tensor<3xf32>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           %[[C6:.+]] = arith.constant 6 : index
// CHECK:           %[[J:.+]] = linalg.index 0 : index
// CHECK:           %[[ZR:.+]] = arith.cmpi slt, %[[J]], %[[C6]] : index
// CHECK:           arith.select %[[ZR]]
// CHECK:         %[[XW:.+]] = tensor.expand_shape
// CHECK:         %[[H0S:.+]] = tensor.extract_slice %[[H0]][0, 0, 0] [1, 2, 3] [1, 1, 1]
// CHECK:         %[[INIT:.+]] = linalg.copy ins(%[[H0S]] : tensor<2x3xf32>)
// CHECK:         scf.for %[[S:[^ ]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:[^ ]+]] = %[[INIT]]) -> (tensor<2x3xf32>)
// CHECK:           %[[C2:.+]] = arith.constant 2 : index
// CHECK:           %[[T:.+]] = arith.subi %[[C2]], %[[S]] : index
// CHECK:           %[[XWT:.+]] = tensor.extract_slice %[[XW]][%[[T]], 0, 0] [1, 2, 9]
// CHECK:           %[[XZR:.+]] = tensor.extract_slice %[[XWT]][0, 0] [2, 6] [1, 1]
// CHECK:           %[[PZR:.+]] = linalg.matmul ins(%[[H]], %[[RZR]] : tensor<2x3xf32>, tensor<3x6xf32>) outs(%[[XZR]] : tensor<2x6xf32>)
// CHECK:           %[[PZ:.+]] = tensor.extract_slice %[[PZR]][0, 0] [2, 3] [1, 1]
// CHECK:           %[[XH:.+]] = tensor.extract_slice %[[XWT]][0, 6] [2, 3] [1, 1]
// CHECK:           %[[PR:.+]] = tensor.extract_slice %[[PZR]][0, 3] [2, 3] [1, 1]
// CHECK:           %[[HR:.+]] = linalg.matmul ins(%[[H]], %[[RH]] : tensor<2x3xf32>, tensor<3x3xf32>) outs(%[[RBHB]] : tensor<2x3xf32>)
// CHECK:           %[[NEW:.+]] = linalg.generic {{.+}} ins(%[[H]], %[[PZ]], %[[PR]], %[[XH]], %[[HR]] :
// CHECK:           ^bb0(%[[HP:[^:]+]]: f32, %[[Z:[^:]+]]: f32, %[[R:[^:]+]]: f32, %[[XHA:[^:]+]]: f32, %[[HRA:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK:             arith.maximumf %[[Z]]
// CHECK:             %[[ZC:.+]] = arith.minimumf
// CHECK:             %[[ZA:.+]] = arith.mulf %[[ZC]], %{{.+}} : f32
// CHECK:             arith.addf %[[ZA]]
// CHECK:             arith.maximumf
// CHECK:             %[[ZT:.+]] = arith.minimumf
// CHECK:             arith.maximumf %[[R]]
// CHECK:             arith.minimumf
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:             %[[RT:.+]] = arith.minimumf
// CHECK:             %[[RG:.+]] = arith.mulf %[[RT]], %[[HRA]] : f32
// CHECK:             %[[HPRE:.+]] = arith.addf %[[XHA]], %[[RG]] : f32
// CHECK:             arith.maximumf %[[HPRE]]
// CHECK:             %[[HC:.+]] = arith.minimumf
// CHECK:             %[[LEAK:.+]] = arith.mulf %[[HC]], %{{.+}} : f32
// CHECK:             %[[NEG:.+]] = arith.cmpf olt, %[[HC]]
// CHECK:             %[[HT:.+]] = arith.select %[[NEG]], %[[LEAK]], %[[HC]] : f32
// CHECK:             %[[ZH:.+]] = arith.mulf %[[ZT]], %[[HP]] : f32
// CHECK:             %[[OMZ:.+]] = arith.subf %{{.+}}, %[[ZT]] : f32
// CHECK:             %[[NH:.+]] = arith.mulf %[[OMZ]], %[[HT]] : f32
// CHECK:             %[[OUT:.+]] = arith.addf %[[NH]], %[[ZH]] : f32
// CHECK:             linalg.yield %[[OUT]] : f32
// CHECK:           %[[NEXT:.+]] = linalg.copy ins(%[[NEW]] : tensor<2x3xf32>) outs(%[[H]] : tensor<2x3xf32>)
// CHECK:           scf.yield %[[NEXT]]
func.func @gru(%x: tensor<3x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>, %b: tensor<1x18xf32>, %h0: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %y_h = kiln.gru(%x, %w, %r, %b, none, %h0) {hidden_size = 3 : i64, direction = "reverse", linear_before_reset = 1 : i64, clip = 2.0 : f32, activations = ["HardSigmoid", "LeakyRelu"], activation_alpha = array<f32: 0.3, 0.1>, activation_beta = array<f32: 0.6>} : (tensor<3x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>) -> (none, tensor<1x2x3xf32>)
  return %y_h : tensor<1x2x3xf32>
}

// -----

// A bidirectional batch-major LSTM (layout 1) with sequence_lens, peepholes
// and coupled input and forget gates, of which only Y_c is used: one loop
// per direction over the time dim (1) of X; the reverse direction's input
// projection is reversed within each sequence's length first. Each step
// computes i, f = 1 - i, c~, C, o (peepholes on C and the new C) and
// h = o * tanh(C) in one generic with two results, keeping both states of
// the entries past their length.

// CHECK-LABEL: func.func @lstm
// CHECK-SAME:    %[[LENS:[^:]+]]: tensor<2xi32>
// CHECK:         %[[PI:.+]] = tensor.extract_slice %{{.+}}[0, 0] [1, 2] [1, 1] : tensor<2x6xf32> to tensor<2xf32>
// CHECK:         %[[PO:.+]] = tensor.extract_slice %{{.+}}[0, 2] [1, 2] [1, 1] : tensor<2x6xf32> to tensor<2xf32>
// CHECK:         %[[PF:.+]] = tensor.extract_slice %{{.+}}[0, 4] [1, 2] [1, 1] : tensor<2x6xf32> to tensor<2xf32>
// CHECK:         %[[XW:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 3, 8]
// CHECK:         %[[FWD:.+]]:2 = scf.for %[[S:[^ ]+]] = {{.+}} iter_args(%[[H:[^ ]+]] = %{{.+}}, %[[C:[^ ]+]] = %{{.+}}) -> (tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK:           %[[XWS:.+]] = tensor.extract_slice %[[XW]][0, %[[S]], 0] [2, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x8xf32>
// CHECK:           %[[PRE:.+]] = linalg.matmul ins(%[[H]], %{{.+}} : tensor<2x2xf32>, tensor<2x8xf32>) outs(%[[XWS]] : tensor<2x8xf32>)
// CHECK:           %[[GI:.+]] = tensor.extract_slice %[[PRE]][0, 0] [2, 2] [1, 1]
// CHECK:           %[[GO:.+]] = tensor.extract_slice %[[PRE]][0, 2] [2, 2] [1, 1]
// CHECK:           %[[GF:.+]] = tensor.extract_slice %[[PRE]][0, 4] [2, 2] [1, 1]
// CHECK:           %[[GC:.+]] = tensor.extract_slice %[[PRE]][0, 6] [2, 2] [1, 1]
// CHECK:           %[[NEW:.+]]:2 = linalg.generic {{.+}} ins(%[[H]], %[[LENS]], %[[GI]], %[[GO]], %[[GF]], %[[GC]], %[[C]], %[[PI]], %[[PO]], %[[PF]] :
// CHECK:           ^bb0(%[[HP:[^:]+]]: f32, %[[LEN:[^:]+]]: i32, %[[I:[^:]+]]: f32, %[[O:[^:]+]]: f32, %{{[^:]+}}: f32, %[[CC:[^:]+]]: f32, %[[CP:[^:]+]]: f32, %[[PIA:[^:]+]]: f32, %[[POA:[^:]+]]: f32, %{{[^:]+}}: f32,
// CHECK:             %[[PEEPI:.+]] = arith.mulf %[[PIA]], %[[CP]] : f32
// CHECK:             arith.addf %[[I]], %[[PEEPI]] : f32
// CHECK:             math.exp
// CHECK:             %[[IT:.+]] = arith.divf
// CHECK:             %[[FT:.+]] = arith.subf %{{.+}}, %[[IT]] : f32
// CHECK:             %[[CT:.+]] = math.tanh %[[CC]] : f32
// CHECK:             %[[ICT:.+]] = arith.mulf %[[IT]], %[[CT]] : f32
// CHECK:             %[[FC:.+]] = arith.mulf %[[FT]], %[[CP]] : f32
// CHECK:             %[[CN:.+]] = arith.addf %[[FC]], %[[ICT]] : f32
// CHECK:             %[[PEEPO:.+]] = arith.mulf %[[POA]], %[[CN]] : f32
// CHECK:             arith.addf %[[O]], %[[PEEPO]] : f32
// CHECK:             math.exp
// CHECK:             %[[OT:.+]] = arith.divf
// CHECK:             %[[TC:.+]] = math.tanh %[[CN]] : f32
// CHECK:             %[[HN:.+]] = arith.mulf %[[OT]], %[[TC]] : f32
// CHECK:             %[[L:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK:             %[[IN:.+]] = arith.cmpi slt, %[[S]], %[[L]] : index
// CHECK:             %[[HK:.+]] = arith.select %[[IN]], %[[HN]], %[[HP]] : f32
// CHECK:             %[[CK:.+]] = arith.select %{{.+}}, %[[CN]], %[[CP]] : f32
// CHECK:             linalg.yield %[[HK]], %[[CK]] : f32, f32
// CHECK:           linalg.copy ins(%[[NEW]]#0 : tensor<2x2xf32>) outs(%[[H]] : tensor<2x2xf32>)
// CHECK:           linalg.copy ins(%[[NEW]]#1 : tensor<2x2xf32>) outs(%[[C]] : tensor<2x2xf32>)
// CHECK:         %[[XWB:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 3, 8]
// CHECK:         %[[XWR:.+]] = linalg.generic {{.+}} ins(%[[LENS]] : tensor<2xi32>) outs(%{{.+}} : tensor<2x3x8xf32>)
// CHECK:           %[[B:.+]] = linalg.index 0 : index
// CHECK:           %[[T:.+]] = linalg.index 1 : index
// CHECK:           %[[G:.+]] = linalg.index 2 : index
// CHECK:           %[[VALID:.+]] = arith.cmpi slt, %[[T]], %{{.+}} : index
// CHECK:           %[[SRC:.+]] = arith.maxsi
// CHECK:           %[[V:.+]] = tensor.extract %[[XWB]][%[[B]], %[[SRC]], %[[G]]] : tensor<2x3x8xf32>
// CHECK:           arith.select %[[VALID]], %[[V]], %{{.+}} : f32
// CHECK:         %[[BWD:.+]]:2 = scf.for %[[S2:[^ ]+]] = {{.+}} -> (tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK:           tensor.extract_slice %[[XWR]][0, %[[S2]], 0] [2, 1, 8] [1, 1, 1]
// CHECK:         %[[YC:.+]] = tensor.insert_slice %[[FWD]]#1 into %{{.+}}[0, 0, 0] [2, 1, 2] [1, 1, 1] : tensor<2x2xf32> into tensor<2x2x2xf32>
// CHECK:         %[[YC2:.+]] = tensor.insert_slice %[[BWD]]#1 into %[[YC]][0, 1, 0] [2, 1, 2] [1, 1, 1] : tensor<2x2xf32> into tensor<2x2x2xf32>
// CHECK:         return %[[YC2]]
func.func @lstm(%x: tensor<2x3x4xf32>, %w: tensor<2x8x4xf32>, %r: tensor<2x8x2xf32>, %lens: tensor<2xi32>, %p: tensor<2x6xf32>) -> tensor<2x2x2xf32> {
  %y_c = kiln.lstm(%x, %w, %r, none, %lens, none, none, %p) {hidden_size = 2 : i64, direction = "bidirectional", layout = 1 : i64, input_forget = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x8x4xf32>, tensor<2x8x2xf32>, tensor<2xi32>, tensor<2x6xf32>) -> (none, none, tensor<2x2x2xf32>)
  return %y_c : tensor<2x2x2xf32>
}
