// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// DeformConv: one generic over the sampled columns [N, C, kH, kW, oH, oW]
// reading the offsets' row and column channels 2 * (g * taps + tap) and
// + 1, X at the four corners of each sample (zero outside) and the mask;
// then the columns expanded to [N, G, C / G, ...] contracted with W
// expanded to [G, F / G, ...] over (c, kh, kw); then the bias.

// CHECK-LABEL: func.func @deform_conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x6x6xf32>, %[[W:[^:]+]]: tensor<6x2x3x3xf32>, %[[O:[^:]+]]: tensor<1x36x4x4xf32>, %[[B:[^:]+]]: tensor<6xf32>, %[[M:[^:]+]]: tensor<1x18x4x4xf32>
// CHECK:         %[[S:.+]] = linalg.generic
// CHECK-SAME:      outs(%{{.+}} : tensor<1x4x3x3x4x4xf32>)
// CHECK:           arith.divui %{{.+}}, %{{.+}} : index
// CHECK:           tensor.extract %[[O]]
// CHECK:           tensor.extract %[[O]]
// CHECK:           math.floor
// CHECK-COUNT-4:   tensor.extract %[[X]]
// CHECK:           tensor.extract %[[M]]
// CHECK:         %[[SG:.+]] = tensor.expand_shape %[[S]] {{.+}} into tensor<1x2x2x3x3x4x4xf32>
// CHECK:         %[[WG:.+]] = tensor.expand_shape %[[W]] {{.+}} into tensor<2x3x2x3x3xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME:      ins(%[[SG]], %[[WG]] :
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         tensor.collapse_shape
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.+}}, %[[B]] :
func.func @deform_conv(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>, %o: tensor<1x36x4x4xf32>, %b: tensor<6xf32>, %m: tensor<1x18x4x4xf32>) -> tensor<1x6x4x4xf32> {
  %0 = kiln.deform_conv(%x, %w, %o, %b, %m) {group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<1x36x4x4xf32>, tensor<6xf32>, tensor<1x18x4x4xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// No mask: the columns are the bilinear samples alone.

// CHECK-LABEL: func.func @no_mask
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x5x5xf32>
// CHECK:         linalg.generic
// CHECK-COUNT-4:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
func.func @no_mask(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x2x2xf32>, %o: tensor<1x8x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %0 = kiln.deform_conv(%x, %w, %o, none, none) : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>, tensor<1x8x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
