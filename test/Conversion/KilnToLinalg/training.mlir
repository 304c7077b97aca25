// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// Adagrad: R / (1 + T * decay_factor) read at run time into a 0-d tensor;
// each optimized tensor is one linalg.generic yielding X_new and H_new,
// and the results come back in ONNX order (X_new..., H_new...).

// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$S1:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$S2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @adagrad
// CHECK-SAME:    (%[[R:[^:]+]]: tensor<f32>, %[[T:[^:]+]]: tensor<i64>, %[[X1:[^:]+]]: tensor<1xf32>, %[[X2:[^:]+]]: tensor<2x3xf32>, %[[G1:[^:]+]]: tensor<1xf32>, %[[G2:[^:]+]]: tensor<2x3xf32>, %[[H1:[^:]+]]: tensor<1xf32>, %[[H2:[^:]+]]: tensor<2x3xf32>)
// CHECK-DAG:     %[[RV:.+]] = tensor.extract %[[R]][] : tensor<f32>
// CHECK-DAG:     %[[TV:.+]] = tensor.extract %[[T]][] : tensor<i64>
// CHECK:         %[[TF:.+]] = arith.sitofp %[[TV]] : i64 to f32
// CHECK:         %[[TD:.+]] = arith.mulf %[[TF]], %{{.+}} : f32
// CHECK:         %[[DEN:.+]] = arith.addf %{{.+}}, %[[TD]] : f32
// CHECK:         %[[RS:.+]] = arith.divf %[[RV]], %[[DEN]] : f32
// CHECK:         %[[RT:.+]] = tensor.from_elements %[[RS]] : tensor<f32>
// CHECK:         %[[A:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]], #[[$S1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[X1]], %[[G1]], %[[H1]], %[[RT]] : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<f32>) outs(%{{.+}}, %{{.+}} : tensor<1xf32>, tensor<1xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: f32, %[[G:[^:]+]]: f32, %[[H:[^:]+]]: f32, %[[RR:[^:]+]]: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK:           %[[NX:.+]] = arith.mulf %{{.+}}, %[[X]] : f32
// CHECK-NEXT:      %[[GR:.+]] = arith.addf %[[NX]], %[[G]] : f32
// CHECK-NEXT:      %[[GSQ:.+]] = arith.mulf %[[GR]], %[[GR]] : f32
// CHECK-NEXT:      %[[HN:.+]] = arith.addf %[[H]], %[[GSQ]] : f32
// CHECK:           %[[SQ:.+]] = math.sqrt %[[HN]] : f32
// CHECK-NEXT:      %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT:      %[[HA:.+]] = arith.addf %[[SQ]], %[[EPS]] : f32
// CHECK-NEXT:      %[[STEP:.+]] = arith.mulf %[[RR]], %[[GR]] : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.divf %[[STEP]], %[[HA]] : f32
// CHECK-NEXT:      %[[XN:.+]] = arith.subf %[[X]], %[[Q]] : f32
// CHECK-NEXT:      linalg.yield %[[XN]], %[[HN]] : f32, f32
// CHECK:         %[[B:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]], #[[$S2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X2]], %[[G2]], %[[H2]], %[[RT]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>)
// CHECK:         return %[[A]]#0, %[[B]]#0, %[[A]]#1, %[[B]]#1
func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<1xf32>, %x2: tensor<2x3xf32>, %g1: tensor<1xf32>, %g2: tensor<2x3xf32>, %h1: tensor<1xf32>, %h2: tensor<2x3xf32>) -> (tensor<1xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>) {
  %0:4 = kiln.adagrad(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {decay_factor = 1.000000e-01 : f32, epsilon = 1.0E-5 : f32, norm_coefficient = 1.0e-3 : f32} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>) -> (tensor<1xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>
}

// -----

// Adam: the learning rate gets the bias correction
// R * sqrt(1 - beta^T) / (1 - alpha^T) only when T > 0; one generic yields
// X_new (scaled by 1 - norm_coefficient_post), V_new and H_new.

// CHECK-LABEL: func.func @adam
// CHECK-SAME:    (%[[R:[^:]+]]: tensor<f32>, %[[T:[^:]+]]: tensor<i64>, %[[X:[^:]+]]: tensor<4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[V:[^:]+]]: tensor<4xf32>, %[[H:[^:]+]]: tensor<4xf32>)
// CHECK-DAG:     %[[RV:.+]] = tensor.extract %[[R]][] : tensor<f32>
// CHECK-DAG:     %[[TV:.+]] = tensor.extract %[[T]][] : tensor<i64>
// CHECK:         %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[TF:.+]] = arith.sitofp %[[TV]] : i64 to f32
// CHECK:         %[[BETA:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:    %[[BP:.+]] = math.powf %[[BETA]], %[[TF]] : f32
// CHECK-NEXT:    %[[BC:.+]] = arith.subf %[[ONE]], %[[BP]] : f32
// CHECK-NEXT:    %[[BS:.+]] = math.sqrt %[[BC]] : f32
// CHECK-NEXT:    %[[NUM:.+]] = arith.mulf %[[RV]], %[[BS]] : f32
// CHECK-NEXT:    %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[AP:.+]] = math.powf %[[ALPHA]], %[[TF]] : f32
// CHECK-NEXT:    %[[AC:.+]] = arith.subf %[[ONE]], %[[AP]] : f32
// CHECK-NEXT:    %[[ADJ:.+]] = arith.divf %[[NUM]], %[[AC]] : f32
// CHECK:         %[[POS:.+]] = arith.cmpi sgt, %[[TV]], %{{.+}} : i64
// CHECK:         %[[SEL:.+]] = arith.select %[[POS]], %[[ADJ]], %[[RV]] : f32
// CHECK:         %[[RT:.+]] = tensor.from_elements %[[SEL]] : tensor<f32>
// CHECK:         %[[U:.+]]:3 = linalg.generic {{.*}} ins(%[[X]], %[[G]], %[[V]], %[[H]], %[[RT]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           %[[XN:.+]] = arith.subf
// CHECK-NEXT:      %[[POST:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[XF:.+]] = arith.mulf %[[POST]], %[[XN]] : f32
// CHECK-NEXT:      linalg.yield %[[XF]], %{{.+}}, %{{.+}} : f32, f32, f32
// CHECK:         return %[[U]]#0, %[[U]]#1, %[[U]]#2
func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<4xf32>, %g: tensor<4xf32>, %v: tensor<4xf32>, %h: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0:3 = kiln.adam(%r, %t, %x, %g, %v, %h) {alpha = 0.5 : f32, beta = 0.25 : f32, norm_coefficient_post = 0.5 : f32} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Momentum, nesterov: beta applies only when T > 0 (else 1), and the step
// is R * (G' + alpha * V_new).

// CHECK-LABEL: func.func @nesterov
// CHECK-SAME:    (%[[R:[^:]+]]: tensor<f32>, %[[T:[^:]+]]: tensor<i64>, %[[X:[^:]+]]: tensor<4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[V:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[TV:.+]] = tensor.extract %[[T]][] : tensor<i64>
// CHECK:         %[[POS:.+]] = arith.cmpi sgt, %[[TV]], %{{.+}} : i64
// CHECK-NEXT:    %[[BETA:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[BA:.+]] = arith.select %[[POS]], %[[BETA]], %[[ONE]] : f32
// CHECK:         %[[BT:.+]] = tensor.from_elements %[[BA]] : tensor<f32>
// CHECK:         %[[RT:.+]] = tensor.from_elements %{{.+}} : tensor<f32>
// CHECK:         %[[U:.+]]:2 = linalg.generic {{.*}} ins(%[[X]], %[[G]], %[[V]], %[[RT]], %[[BT]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[XE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[VE:[^:]+]]: f32, %[[RE:[^:]+]]: f32, %[[BE:[^:]+]]: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK:           %[[GR:.+]] = arith.addf %{{.+}}, %[[GE]] : f32
// CHECK:           %[[AV:.+]] = arith.mulf %{{.+}}, %[[VE]] : f32
// CHECK-NEXT:      %[[BG:.+]] = arith.mulf %[[BE]], %[[GR]] : f32
// CHECK-NEXT:      %[[VN:.+]] = arith.addf %[[AV]], %[[BG]] : f32
// CHECK:           %[[AVN:.+]] = arith.mulf %{{.+}}, %[[VN]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[GR]], %[[AVN]] : f32
// CHECK-NEXT:      %[[RS:.+]] = arith.mulf %[[RE]], %[[S]] : f32
// CHECK-NEXT:      %[[XN:.+]] = arith.subf %[[XE]], %[[RS]] : f32
// CHECK-NEXT:      linalg.yield %[[XN]], %[[VN]] : f32, f32
// CHECK:         return %[[U]]#0, %[[U]]#1
func.func @nesterov(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<4xf32>, %g: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = kiln.momentum(%r, %t, %x, %g, %v) {alpha = 0.5 : f32, beta = 0.25 : f32, mode = "nesterov", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Momentum, standard: the step is R * V_new; R (f64 here) is converted to
// the element type of X.

// CHECK-LABEL: func.func @standard
// CHECK:         %[[RV:.+]] = tensor.extract %{{.+}}[] : tensor<f64>
// CHECK:         %[[RF:.+]] = arith.truncf %[[RV]] : f64 to f32
// CHECK:         tensor.from_elements %[[RF]] : tensor<f32>
// CHECK:         linalg.generic
// CHECK:           %[[GR:.+]] = arith.addf
// CHECK:           %[[VN:.+]] = arith.addf
// CHECK-NEXT:      %[[RS:.+]] = arith.mulf %{{.+}}, %[[VN]] : f32
// CHECK-NEXT:      %[[XN:.+]] = arith.subf %{{.+}}, %[[RS]] : f32
// CHECK-NEXT:      linalg.yield %[[XN]], %[[VN]] : f32, f32
func.func @standard(%r: tensor<f64>, %t: tensor<i64>, %x: tensor<4xf32>, %g: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = kiln.momentum(%r, %t, %x, %g, %v) {alpha = 0.5 : f32, beta = 0.25 : f32, mode = "standard", norm_coefficient = 0.0 : f32} : (tensor<f64>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
