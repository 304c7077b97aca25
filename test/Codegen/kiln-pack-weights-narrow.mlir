// RUN: kiln-opt %s -split-input-file -kiln-pack-weights="vector-bits=512" --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// A weight stored with n outside its innermost dim (Gemm's transB) whose n
// no whole 16-lane vector divides is packed in panels of a half (8) or a
// quarter (4) of a vector, so that the register tile streams it instead of
// gathering it a lane at a time. Stored with n innermost it is left alone
// (its rows are read as vectors, the remainder peeled), and so is an n that
// only vectors under 128 bits divide.

#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @transposed_half
// CHECK:         arith.constant dense_resource<{{.+}}> : tensor<5x2x8xf32>
// CHECK:         linalg.generic
func.func @transposed_half(%x: tensor<3x2xf32>, %acc: tensor<3x40xf32>) -> tensor<3x40xf32> {
  %w = arith.constant dense<[[0., 1.], [2., 3.], [4., 5.], [6., 7.], [8., 9.], [10., 11.], [12., 13.], [14., 15.], [16., 17.], [18., 19.], [20., 21.], [22., 23.], [24., 25.], [26., 27.], [28., 29.], [30., 31.], [32., 33.], [34., 35.], [36., 37.], [38., 39.], [40., 41.], [42., 43.], [44., 45.], [46., 47.], [48., 49.], [50., 51.], [52., 53.], [54., 55.], [56., 57.], [58., 59.], [60., 61.], [62., 63.], [64., 65.], [66., 67.], [68., 69.], [70., 71.], [72., 73.], [74., 75.], [76., 77.], [78., 79.]]> : tensor<40x2xf32>
  %0 = linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x2xf32>, tensor<40x2xf32>) outs(%acc : tensor<3x40xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x40xf32>
  return %0 : tensor<3x40xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @transposed_quarter
// CHECK:         arith.constant dense_resource<{{.+}}> : tensor<9x2x4xf32>
func.func @transposed_quarter(%x: tensor<3x2xf32>, %acc: tensor<3x36xf32>) -> tensor<3x36xf32> {
  %w = arith.constant dense<[[0., 1.], [2., 3.], [4., 5.], [6., 7.], [8., 9.], [10., 11.], [12., 13.], [14., 15.], [16., 17.], [18., 19.], [20., 21.], [22., 23.], [24., 25.], [26., 27.], [28., 29.], [30., 31.], [32., 33.], [34., 35.], [36., 37.], [38., 39.], [40., 41.], [42., 43.], [44., 45.], [46., 47.], [48., 49.], [50., 51.], [52., 53.], [54., 55.], [56., 57.], [58., 59.], [60., 61.], [62., 63.], [64., 65.], [66., 67.], [68., 69.], [70., 71.]]> : tensor<36x2xf32>
  %0 = linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x2xf32>, tensor<36x2xf32>) outs(%acc : tensor<3x36xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x36xf32>
  return %0 : tensor<3x36xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     dense_resource
// CHECK-COUNT-2: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @left_alone(%x: tensor<3x2xf32>, %acc: tensor<3x40xf32>, %acc42: tensor<3x42xf32>) -> (tensor<3x40xf32>, tensor<3x42xf32>) {
  %w = arith.constant dense<[[0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27., 28., 29., 30., 31., 32., 33., 34., 35., 36., 37., 38., 39.], [40., 41., 42., 43., 44., 45., 46., 47., 48., 49., 50., 51., 52., 53., 54., 55., 56., 57., 58., 59., 60., 61., 62., 63., 64., 65., 66., 67., 68., 69., 70., 71., 72., 73., 74., 75., 76., 77., 78., 79.]]> : tensor<2x40xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x2xf32>, tensor<2x40xf32>) outs(%acc : tensor<3x40xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x40xf32>
  %w42 = arith.constant dense<[[0., 1.], [2., 3.], [4., 5.], [6., 7.], [8., 9.], [10., 11.], [12., 13.], [14., 15.], [16., 17.], [18., 19.], [20., 21.], [22., 23.], [24., 25.], [26., 27.], [28., 29.], [30., 31.], [32., 33.], [34., 35.], [36., 37.], [38., 39.], [40., 41.], [42., 43.], [44., 45.], [46., 47.], [48., 49.], [50., 51.], [52., 53.], [54., 55.], [56., 57.], [58., 59.], [60., 61.], [62., 63.], [64., 65.], [66., 67.], [68., 69.], [70., 71.], [72., 73.], [74., 75.], [76., 77.], [78., 79.], [80., 81.], [82., 83.]]> : tensor<42x2xf32>
  %1 = linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w42 : tensor<3x2xf32>, tensor<42x2xf32>) outs(%acc42 : tensor<3x42xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x42xf32>
  return %0, %1 : tensor<3x40xf32>, tensor<3x42xf32>
}
