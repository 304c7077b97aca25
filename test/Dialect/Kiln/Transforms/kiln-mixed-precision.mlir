// RUN: kiln-opt %s -split-input-file -kiln-mixed-precision | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-mixed-precision=type=bf16 | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s -split-input-file -kiln-mixed-precision="keep-ops=kiln.relu" | FileCheck %s --check-prefix=KEEPOP
// RUN: not kiln-opt %s -split-input-file -kiln-mixed-precision="keep-nodes=nowhere" 2>&1 | FileCheck %s --check-prefix=NONODE
// RUN: not kiln-opt %s -split-input-file -kiln-mixed-precision="type=f64" 2>&1 | FileCheck %s --check-prefix=BADTYPE

// A MatMul and the Relu after it run in f16: the input is cast once, the
// weights are converted when compiled (0.1 rounds to the nearest f16,
// 0.0999755859), the two ops pass f16 between them, and the result is
// cast back to the signature's f32. The Softmax stays f32.

// CHECK-LABEL: func.func @chain
// CHECK-DAG:     %[[W:.+]] = kiln.constant dense<9.997550e-02> : tensor<8x16xf16>
// CHECK-DAG:     %[[X:.+]] = kiln.cast(%arg0) {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK:         %[[Y:.+]] = kiln.matmul(%[[X]], %[[W]]) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// CHECK:         %[[R:.+]] = kiln.relu(%[[Y]]) : (tensor<4x16xf16>) -> tensor<4x16xf16>
// CHECK:         %[[B:.+]] = kiln.cast(%[[R]]) {to = f32} : (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK:         %[[S:.+]] = kiln.softmax(%[[B]]) {{.*}}: (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK:         return %[[S]]
// BF16-LABEL: func.func @chain
// BF16-DAG:     kiln.constant dense<1.000980e-01> : tensor<8x16xbf16>
// BF16:         kiln.matmul({{.*}}) : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// BF16:         kiln.relu({{.*}}) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
// BF16:         kiln.softmax({{.*}}: (tensor<4x16xf32>) -> tensor<4x16xf32>
// KEEPOP-LABEL: func.func @chain
// KEEPOP:         kiln.matmul({{.*}}) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// KEEPOP:         kiln.cast({{.*}}) {to = f32}
// KEEPOP:         kiln.relu({{.*}}) : (tensor<4x16xf32>) -> tensor<4x16xf32>
// NONODE: error: kiln-mixed-precision: keep-nodes names 'nowhere', which is no node of the graph
// BADTYPE: error: kiln-mixed-precision: type must be f16 or bf16, not 'f64'
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = kiln.constant dense<0.1> : tensor<8x16xf32>
  %y = kiln.matmul(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = kiln.relu(%y) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %s = kiln.softmax(%r) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %s : tensor<4x16xf32>
}

// -----

// Integer operands (Gather's indices) keep their type; the f32 data is cast.
// A value already in f16 is left alone.

// CHECK-LABEL: func.func @mixed_operands
// CHECK:         %[[D:.+]] = kiln.cast(%arg0) {to = f16}
// CHECK:         %[[G:.+]] = kiln.gather(%[[D]], %arg1) {{.*}}: (tensor<10x4xf16>, tensor<3xi64>) -> tensor<3x4xf16>
// CHECK:         kiln.cast(%[[G]]) {to = f32}
// CHECK:         kiln.add(%arg2, %arg2) : (tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<3x4xf16>
func.func @mixed_operands(%d: tensor<10x4xf32>, %i: tensor<3xi64>, %h: tensor<3x4xf16>) -> (tensor<3x4xf32>, tensor<3x4xf16>) {
  %g = kiln.gather(%d, %i) : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %a = kiln.add(%h, %h) : (tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<3x4xf16>
  return %g, %a : tensor<3x4xf32>, tensor<3x4xf16>
}

// -----

// An op off the list (LayerNormalization, ReduceMean) between converted
// ones: casts on both sides of it, none elsewhere.

// CHECK-LABEL: func.func @island
// CHECK:         kiln.add({{.*}}) : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK:         kiln.cast({{.*}}) {to = f32}
// CHECK:         kiln.layer_normalization({{.*}}) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK:         kiln.cast({{.*}}) {to = f16}
// CHECK:         kiln.mul({{.*}}) : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK:         kiln.cast({{.*}}) {to = f32}
// CHECK-NOT:     kiln.cast
// CHECK:         return
func.func @island(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = kiln.constant dense<1.0> : tensor<8xf32>
  %a = kiln.add(%x, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %n = kiln.layer_normalization(%a, %s) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %m = kiln.mul(%n, %a) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %m : tensor<2x8xf32>
}
