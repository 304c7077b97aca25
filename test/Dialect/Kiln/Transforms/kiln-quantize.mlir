// RUN: kiln-opt %s -kiln-expose-calibration-tensors | FileCheck %s --check-prefix=EXPOSE
// RUN: kiln-opt %s -kiln-quantize=ranges=%S/Inputs/quantize-ranges.txt | FileCheck %s
// RUN: kiln-opt %s -kiln-quantize=ranges=%S/Inputs/quantize-ranges.txt -kiln-fold-qdq -canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: not kiln-opt %s -kiln-quantize=ranges=%t.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf 'x\t1\n' > %t.bad && not kiln-opt %s -kiln-quantize=ranges=%t.bad 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kiln-opt %s -kiln-quantize="ranges=%S/Inputs/quantize-ranges.txt expose-outputs=true" | FileCheck %s --check-prefix=OUTPUTS
// RUN: kiln-opt %s -kiln-quantize="ranges=%S/Inputs/quantize-ranges.txt type=fp8" | FileCheck %s --check-prefix=FP8
// RUN: kiln-opt %s -kiln-quantize="ranges=%S/Inputs/quantize-ranges.txt type=fp8" -kiln-fold-qdq | FileCheck %s --check-prefix=FP8FOLD
// RUN: not kiln-opt %s -kiln-quantize="ranges=%S/Inputs/quantize-ranges.txt type=int4" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: printf 'x\t-1\t1\n' > %t.partial && kiln-opt %s -kiln-quantize=ranges=%t.partial | FileCheck %s --check-prefix=PARTIAL

// A Conv + Relu, a Reshape and a Gemm (transB, bias). Exposed for
// calibration: the conv's input (the graph input x), its output through
// the Relu it absorbs (relu#0), the Gemm's input (reshape#0) and output
// (the Gemm becomes MatMul(A, B^T as a constant) + C: fc#0 is the
// MatMul's).

// EXPOSE-LABEL: func.func @main
// EXPOSE-SAME:    -> (tensor<1x2xf32> {kiln.name = "y"}, tensor<1x2x4x4xf32> {kiln.name = "x"}, tensor<1x3x2x2xf32> {kiln.name = "relu#0"}, tensor<1x12xf32> {kiln.name = "reshape#0"}, tensor<1x2xf32> {kiln.name = "fc#0"})
// EXPOSE:         %[[R:.+]] = kiln.relu
// EXPOSE:         %[[F:.+]] = kiln.reshape
// EXPOSE:         %[[M:.+]] = kiln.matmul(%[[F]], %{{.+}}) : (tensor<1x12xf32>, tensor<12x2xf32>)
// EXPOSE:         %[[Y:.+]] = kiln.add(%[[M]]
// EXPOSE:         return %[[Y]], %arg0, %[[R]], %[[F]], %[[M]]

// Quantized from the ranges: x in [-1, 1] symmetric (scale 1/127, zero
// point 0); the Relu's [0, 2] from zero point -128 (scale 2/255), the Relu
// gone; the weights per output channel (0.5 / 127; the Gemm's 0.25 / 127
// per column); the Conv bias 0.1, 0.2, 0.3 as int32 at 1/127 * 0.5/127;
// fc#0's [-3, 3] symmetric (3/127); the bias add stays float.

// CHECK-LABEL: func.func @main
// CHECK:         %[[XS:.+]] = kiln.constant dense<0.00787401571> : tensor<f32>
// CHECK:         %[[XZ:.+]] = kiln.constant dense<0> : tensor<i8>
// CHECK:         %[[XQ:.+]] = kiln.quantize_linear(%arg0, %[[XS]], %[[XZ]])
// CHECK:         %[[XD:.+]] = kiln.dequantize_linear(%[[XQ]], %[[XS]], %[[XZ]])
// CHECK:         %[[WS:.+]] = kiln.constant dense<0.00393700786> : tensor<3xf32>
// CHECK:         %[[W:.+]] = kiln.dequantize_linear(%{{.+}}, %[[WS]], %{{.+}}) {axis = 0 : i64} : (tensor<3x2x3x3xi8>
// CHECK:         %[[BQ:.+]] = kiln.constant dense<[3226, 6452, 9677]> : tensor<3xi32>
// CHECK:         %[[B:.+]] = kiln.dequantize_linear(%[[BQ]]
// CHECK:         %[[C:.+]] = kiln.conv(%[[XD]], %[[W]], %[[B]])
// CHECK:         %[[RS:.+]] = kiln.constant dense<0.00784313772> : tensor<f32>
// CHECK:         %[[RZ:.+]] = kiln.constant dense<-128> : tensor<i8>
// CHECK:         %[[RQ:.+]] = kiln.quantize_linear(%[[C]], %[[RS]], %[[RZ]])
// CHECK:         %[[RD:.+]] = kiln.dequantize_linear(%[[RQ]], %[[RS]], %[[RZ]])
// CHECK-NOT:     kiln.relu
// CHECK:         kiln.reshape(%[[RD]]
// CHECK:         kiln.quantize_linear
// CHECK:         %[[FD:.+]] = kiln.dequantize_linear
// CHECK:         kiln.constant dense<0.00196850393> : tensor<2xf32>
// CHECK:         %[[FW:.+]] = kiln.dequantize_linear({{.+}} : (tensor<12x2xi8>
// CHECK:         %[[M:.+]] = kiln.matmul(%[[FD]], %[[FW]])
// CHECK:         kiln.constant dense<0.0236220472> : tensor<f32>
// CHECK:         %[[MQ:.+]] = kiln.quantize_linear(%[[M]]
// CHECK:         %[[MD:.+]] = kiln.dequantize_linear(%[[MQ]]
// CHECK:         %[[Y:.+]] = kiln.add(%[[MD]]
// CHECK:         return %[[Y]]

// kiln-fold-qdq then makes integer ops of both.

// FOLD-LABEL: func.func @main
// FOLD:         kiln.qlinear_conv
// FOLD:         kiln.qlinear_matmul
// FOLD-NOT:     kiln.conv(
// FOLD-NOT:     kiln.matmul(

// The module records each quantized layer (for kiln-compile --report);
// with expose-outputs, each layer's dequantized output is a result.

// OUTPUTS: module attributes {kiln.quantized_layers = [{input_scale = 0.00787401571 : f32, input_zero_point = 0 : i64, name = "relu#0", op = "kiln.conv", output_scale = 0.00784313772 : f32, output_zero_point = -128 : i64, weight_scale_max = 0.00393700786 : f32, weight_scale_min = 0.00393700786 : f32}, {input_scale = 0.00784313772 : f32, input_zero_point = -128 : i64, name = "fc#0", op = "kiln.matmul", output_scale = 0.0236220472 : f32, output_zero_point = 0 : i64, weight_scale_max = 0.00196850393 : f32, weight_scale_min = 0.00196850393 : f32}]}
// OUTPUTS: func.func @main({{.+}}) -> (tensor<1x2xf32> {kiln.name = "y"}, tensor<1x3x2x2xf32> {kiln.name = "relu#0"}, tensor<1x2xf32> {kiln.name = "fc#0"})
// OUTPUTS: %[[RD:.+]] = kiln.dequantize_linear(%{{.+}}) : (tensor<1x3x2x2xi8>
// OUTPUTS: %[[MD:.+]] = kiln.dequantize_linear(%{{.+}}) : (tensor<1x2xi8>
// OUTPUTS: return %{{.+}}, %[[RD]], %[[MD]]

// MISSING: kiln-quantize: cannot read the ranges file
// BAD: a line is not 'name<TAB>min<TAB>max': 'x	1'

// An op without a range for its input or output stays float: only x has
// one here.

// PARTIAL-LABEL: func.func @main
// PARTIAL-NOT:   kiln.quantize_linear
// PARTIAL:       kiln.conv(%arg0
// PARTIAL:       kiln.relu
// PARTIAL:       kiln.matmul

func.func @main(%x: tensor<1x2x4x4xf32> {kiln.name = "x"}) -> (tensor<1x2xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<0.5> : tensor<3x2x3x3xf32> loc("w")
  %b = kiln.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32> loc("b")
  %c = kiln.conv(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32> loc("conv")
  %r = kiln.relu(%c) : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> loc("relu")
  %s = kiln.constant dense<[1, 12]> : tensor<2xi64> loc("shape")
  %f = kiln.reshape(%r, %s) : (tensor<1x3x2x2xf32>, tensor<2xi64>) -> tensor<1x12xf32> loc("reshape")
  %fw = kiln.constant dense<0.25> : tensor<2x12xf32> loc("fw")
  %fb = kiln.constant dense<[1.0, -1.0]> : tensor<2xf32> loc("fb")
  %y = kiln.gemm(%f, %fw, %fb) {transB = 1 : i64} : (tensor<1x12xf32>, tensor<2x12xf32>, tensor<2xf32>) -> tensor<1x2xf32> loc("fc")
  return %y : tensor<1x2xf32>
}

// type=fp8: float8 e4m3 (E4M3FN), symmetric: x's [-1, 1] at scale 1/448
// (448, e4m3's largest value), the weights at 0.5/448 per channel (each
// 448: bits 0x7E), the bias float, the Relu kept and its output [0, 2]
// at 2/448 after it; fc#0's [-3, 3] at 3/448. kiln-fold-qdq leaves float8
// groups alone: they compute in float between the Q/DQ pairs.

// FP8-LABEL: func.func @main
// FP8:         %[[XS:.+]] = kiln.constant dense<0.00223214296> : tensor<f32>
// FP8:         %[[XZ:.+]] = kiln.constant dense<0.000000e+00> : tensor<f8E4M3FN>
// FP8:         %[[XQ:.+]] = kiln.quantize_linear(%arg0, %[[XS]], %[[XZ]]) : {{.+}} -> tensor<1x2x4x4xf8E4M3FN>
// FP8:         %[[XD:.+]] = kiln.dequantize_linear(%[[XQ]], %[[XS]], %[[XZ]])
// FP8:         %[[B:.+]] = kiln.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// FP8:         %[[WQ:.+]] = kiln.constant dense_resource<kiln_quantized> : tensor<3x2x3x3xf8E4M3FN>
// FP8:         %[[WS:.+]] = kiln.constant dense<0.00111607148> : tensor<3xf32>
// FP8:         %[[W:.+]] = kiln.dequantize_linear(%[[WQ]], %[[WS]], %{{.+}}) {axis = 0 : i64}
// FP8:         %[[C:.+]] = kiln.conv(%[[XD]], %[[W]], %[[B]])
// FP8:         %[[R:.+]] = kiln.relu(%[[C]])
// FP8:         kiln.constant dense<0.00446428591> : tensor<f32>
// FP8:         kiln.quantize_linear(%[[R]]
// FP8:         kiln.constant dense<0.00669642864> : tensor<f32>
// FP8:         kiln_quantized_1: "0x010000007E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E7E"
// FP8FOLD-LABEL: func.func @main
// FP8FOLD-NOT:   kiln.qlinear
// FP8FOLD:       kiln.conv(
// FP8FOLD:       kiln.matmul(
// BADTYPE: kiln-quantize: unknown type 'int4' (int8 or fp8)
