// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// GridSample is one linalg.generic over the output with no inputs: the body
// reads the point from the grid (its last dim lists x first, so H reads
// component 1), scales it to X's elements, and gathers the taps with
// tensor.extract. Bilinear with zero padding: two taps per dim, each masked
// to zero outside X.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @grid_sample_bilinear_zeros
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x5xf32>, %[[G:[^:]+]]: tensor<1x3x3x2xf32>
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<1x2x3x3xf32>)
// CHECK:           %[[N:.+]] = linalg.index 0
// CHECK:           %[[H:.+]] = linalg.index 2
// CHECK:           %[[W:.+]] = linalg.index 3
// CHECK:           %[[C1:.+]] = arith.constant 1 : index
// CHECK:           tensor.extract %[[G]][%[[N]], %[[H]], %[[W]], %[[C1]]]
// CHECK:           math.floor
// CHECK:           arith.cmpf oge
// CHECK:           arith.cmpf ole
// CHECK:           %[[C0:.+]] = arith.constant 0 : index
// CHECK:           tensor.extract %[[G]][%[[N]], %[[H]], %[[W]], %[[C0]]]
// CHECK:           math.floor
// CHECK-COUNT-4:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
// CHECK:         return %[[R]]
func.func @grid_sample_bilinear_zeros(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = kiln.grid_sample(%x, %g) {mode = "bilinear"} : (tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Nearest rounds half to even and gathers one element; reflection mirrors
// the index into X (floor of the distance over a period), so no mask. It
// moves integers unchanged.

// CHECK-LABEL: func.func @grid_sample_nearest_reflection
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x5xi32>
// CHECK:         linalg.generic
// CHECK:           math.roundeven
// CHECK:           math.floor
// CHECK:           math.roundeven
// CHECK:           math.floor
// CHECK-NOT:       arith.select {{.*}} : i32
// CHECK:           %[[V:.+]] = tensor.extract %[[X]]
// CHECK-NEXT:      linalg.yield %[[V]] : i32
func.func @grid_sample_nearest_reflection(%x: tensor<1x2x4x5xi32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xi32> {
  %0 = kiln.grid_sample(%x, %g) {mode = "nearest", padding_mode = "reflection", align_corners = 1 : i64} : (tensor<1x2x4x5xi32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xi32>
  return %0 : tensor<1x2x3x3xi32>
}

// -----

// Bicubic takes 4 x 4 taps; border padding clamps each tap's index.

// CHECK-LABEL: func.func @grid_sample_bicubic_border
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x5xf32>
// CHECK:         linalg.generic
// CHECK-NOT:       arith.cmpf
// CHECK-COUNT-16:  tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
func.func @grid_sample_bicubic_border(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = kiln.grid_sample(%x, %g) {mode = "bicubic", padding_mode = "border"} : (tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Any number of spatial dims: one (a 3-D input) interpolates two taps, three
// (5-D) eight.

// CHECK-LABEL: func.func @grid_sample_nd
// CHECK-SAME:    %[[X1:[^:]+]]: tensor<2x3x7xf32>, %[[G1:[^:]+]]: tensor<2x5x1xf32>, %[[X3:[^:]+]]: tensor<1x2x3x4x5xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-COUNT-2:   tensor.extract %[[X1]]
// CHECK:           linalg.yield
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-COUNT-8:   tensor.extract %[[X3]]
// CHECK:           linalg.yield
func.func @grid_sample_nd(%x1: tensor<2x3x7xf32>, %g1: tensor<2x5x1xf32>, %x3: tensor<1x2x3x4x5xf32>, %g3: tensor<1x2x2x2x3xf32>) -> (tensor<2x3x5xf32>, tensor<1x2x2x2x2xf32>) {
  %0 = kiln.grid_sample(%x1, %g1) {mode = "linear"} : (tensor<2x3x7xf32>, tensor<2x5x1xf32>) -> tensor<2x3x5xf32>
  %1 = kiln.grid_sample(%x3, %g3) {mode = "linear", padding_mode = "border"} : (tensor<1x2x3x4x5xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x2x2xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<1x2x2x2x2xf32>
}

// -----

// RoiAlign is a generic over (roi, channel, bin row, bin column) that reads
// the region and its batch index, then averages the bilinear samples of the
// bin in two nested scf.for loops: with sampling_ratio 0 their trip counts
// are ceil(bin size), known only at run time.

// CHECK-LABEL: func.func @roi_align_adaptive
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x8x8xf32>, %[[R:[^:]+]]: tensor<4x4xf32>, %[[B:[^:]+]]: tensor<4xi64>
// CHECK:         linalg.generic
// CHECK:           %[[ROI:.+]] = linalg.index 0
// CHECK:           %[[C:.+]] = linalg.index 1
// CHECK-COUNT-4:   tensor.extract %[[R]][%[[ROI]], %{{.+}}]
// CHECK:           %[[CH:.+]] = math.ceil
// CHECK:           %[[GH:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:           %[[CW:.+]] = math.ceil
// CHECK:           %[[GW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:           %[[BI:.+]] = tensor.extract %[[B]][%[[ROI]]]
// CHECK:           %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[GH]] step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32) {
// CHECK:             %[[ROW:.+]] = scf.for %{{.+}} = %{{.+}} to %[[GW]] step %{{.+}} iter_args(%[[ACC2:.+]] = %[[ACC]]) -> (f32) {
// CHECK-COUNT-4:       tensor.extract %[[X]][%{{.+}}, %[[C]], %{{.+}}, %{{.+}}]
// CHECK:               %[[NEXT:.+]] = arith.addf %[[ACC2]], %{{.+}} : f32
// CHECK:               scf.yield %[[NEXT]] : f32
// CHECK:             scf.yield %[[ROW]] : f32
// CHECK:           %[[COUNT:.+]] = arith.muli %[[GH]], %[[GW]] : index
// CHECK:           arith.maxsi %[[COUNT]]
// CHECK:           %[[AVG:.+]] = arith.divf %[[SUM]], %{{.+}} : f32
// CHECK:           linalg.yield %[[AVG]] : f32
func.func @roi_align_adaptive(%x: tensor<2x3x8x8xf32>, %r: tensor<4x4xf32>, %b: tensor<4xi64>) -> tensor<4x3x2x2xf32> {
  %0 = kiln.roi_align(%x, %r, %b) {output_height = 2 : i64, output_width = 2 : i64, spatial_scale = 5.000000e-01 : f32} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x3x2x2xf32>
  return %0 : tensor<4x3x2x2xf32>
}

// -----

// A fixed sampling_ratio bounds the loops by a constant; max mode keeps
// the largest weighted corner value and gives zero for an empty grid.

// CHECK-LABEL: func.func @roi_align_max
// CHECK:         linalg.generic
// CHECK-NOT:       math.ceil
// CHECK:           %[[TWO:.+]] = arith.constant 2 : index
// CHECK:           %[[M:.+]] = scf.for %{{.+}} = %{{.+}} to %[[TWO]]
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[TWO]]
// CHECK-COUNT-4:       arith.maximumf
// CHECK:           %[[NONE:.+]] = arith.cmpi eq
// CHECK:           %[[R:.+]] = arith.select %[[NONE]], %{{.+}}, %[[M]] : f32
// CHECK:           linalg.yield %[[R]] : f32
func.func @roi_align_max(%x: tensor<2x3x8x8xf32>, %r: tensor<4x4xf32>, %b: tensor<4xi64>) -> tensor<4x3x2x2xf32> {
  %0 = kiln.roi_align(%x, %r, %b) {mode = "max", sampling_ratio = 2 : i64, coordinate_transformation_mode = "output_half_pixel", output_height = 2 : i64, output_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x3x2x2xf32>
  return %0 : tensor<4x3x2x2xf32>
}

// -----

// MaxUnpool gathers rather than scatters: each output element compares its
// flat index with the indices of the X elements whose windows cover it
// (one here, kernel = stride) and takes the value of a match, else zero.
// The output_shape constant zero-extends the unpooled 4x4 to 5x5.

// CHECK-LABEL: func.func @max_unpool_output_shape
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x2x2xf32>, %[[I:[^:]+]]: tensor<1x1x2x2xi64>
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x1x5x5xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<1x1x5x5xf32>)
// CHECK:           %[[FLAT:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:           arith.divui
// CHECK:           arith.remui
// CHECK:           %[[T:.+]] = tensor.extract %[[I]]
// CHECK:           %[[EQ:.+]] = arith.cmpi eq, %[[T]], %[[FLAT]] : i64
// CHECK:           %[[HIT:.+]] = arith.andi %{{.+}}, %[[EQ]] : i1
// CHECK:           %[[V:.+]] = tensor.extract %[[X]]
// CHECK:           %[[R:.+]] = arith.select %[[HIT]], %[[V]], %{{.+}} : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
func.func @max_unpool_output_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  %s = kiln.constant dense<[1, 1, 5, 5]> : tensor<4xi64>
  %0 = kiln.max_unpool(%x, %i, %s) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// Overlapping windows (kernel 3, stride 2) give 2 x 2 candidates, taken in
// X's order so that a later window's value wins, as a sequential scatter's.

// CHECK-LABEL: func.func @max_unpool_overlap
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x3x3xf32>, %[[I:[^:]+]]: tensor<1x2x3x3xi64>
// CHECK:         linalg.generic
// CHECK:           %[[V0:.+]] = tensor.extract %[[X]]
// CHECK:           %[[A0:.+]] = arith.select %{{.+}}, %[[V0]], %{{.+}} : f32
// CHECK:           %[[V1:.+]] = tensor.extract %[[X]]
// CHECK:           %[[A1:.+]] = arith.select %{{.+}}, %[[V1]], %[[A0]] : f32
// CHECK:           %[[V2:.+]] = tensor.extract %[[X]]
// CHECK:           %[[A2:.+]] = arith.select %{{.+}}, %[[V2]], %[[A1]] : f32
// CHECK:           %[[V3:.+]] = tensor.extract %[[X]]
// CHECK:           %[[A3:.+]] = arith.select %{{.+}}, %[[V3]], %[[A2]] : f32
// CHECK-NEXT:      linalg.yield %[[A3]] : f32
func.func @max_unpool_overlap(%x: tensor<1x2x3x3xf32>, %i: tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32> {
  %0 = kiln.max_unpool(%x, %i) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}
