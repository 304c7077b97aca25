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

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// n = 144, nine 16-lane vectors, which two-vector (32-wide) tiles do not
// divide: the weight, however small, is packed in 32-wide panels padded
// with zero columns to 160, the accumulator padded to match and the
// product's first 144 columns sliced out.

// CHECK-LABEL: func.func @whole_vectors_padded
// CHECK:         %[[W:.+]] = arith.constant dense_resource<{{.+}}> : tensor<5x2x32xf32>
// CHECK:         %[[ACC:.+]] = tensor.pad %{{.+}} low[0, 0] high[0, 16]
// CHECK:         tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2]] output_shape [3, 5, 32] : tensor<3x160xf32> into tensor<3x5x32xf32>
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %[[W]] : tensor<3x2xf32>, tensor<5x2x32xf32>)
// CHECK:         tensor.extract_slice %{{.+}}[0, 0] [3, 144] [1, 1] : tensor<3x160xf32> to tensor<3x144xf32>
func.func @whole_vectors_padded(%x: tensor<3x2xf32>, %acc: tensor<3x144xf32>) -> tensor<3x144xf32> {
  %w = arith.constant dense<[[0., 1.], [2., 3.], [4., 5.], [6., 7.], [8., 9.], [10., 11.], [12., 13.], [14., 15.], [16., 17.], [18., 19.], [20., 21.], [22., 23.], [24., 25.], [26., 27.], [28., 29.], [30., 31.], [32., 33.], [34., 35.], [36., 37.], [38., 39.], [40., 41.], [42., 43.], [44., 45.], [46., 47.], [48., 49.], [50., 51.], [52., 53.], [54., 55.], [56., 57.], [58., 59.], [60., 61.], [62., 63.], [64., 65.], [66., 67.], [68., 69.], [70., 71.], [72., 73.], [74., 75.], [76., 77.], [78., 79.], [80., 81.], [82., 83.], [84., 85.], [86., 87.], [88., 89.], [90., 91.], [92., 93.], [94., 95.], [96., 97.], [98., 99.], [100., 101.], [102., 103.], [104., 105.], [106., 107.], [108., 109.], [110., 111.], [112., 113.], [114., 115.], [116., 117.], [118., 119.], [120., 121.], [122., 123.], [124., 125.], [126., 127.], [128., 129.], [130., 131.], [132., 133.], [134., 135.], [136., 137.], [138., 139.], [140., 141.], [142., 143.], [144., 145.], [146., 147.], [148., 149.], [150., 151.], [152., 153.], [154., 155.], [156., 157.], [158., 159.], [160., 161.], [162., 163.], [164., 165.], [166., 167.], [168., 169.], [170., 171.], [172., 173.], [174., 175.], [176., 177.], [178., 179.], [180., 181.], [182., 183.], [184., 185.], [186., 187.], [188., 189.], [190., 191.], [192., 193.], [194., 195.], [196., 197.], [198., 199.], [200., 201.], [202., 203.], [204., 205.], [206., 207.], [208., 209.], [210., 211.], [212., 213.], [214., 215.], [216., 217.], [218., 219.], [220., 221.], [222., 223.], [224., 225.], [226., 227.], [228., 229.], [230., 231.], [232., 233.], [234., 235.], [236., 237.], [238., 239.], [240., 241.], [242., 243.], [244., 245.], [246., 247.], [248., 249.], [250., 251.], [252., 253.], [254., 255.], [256., 257.], [258., 259.], [260., 261.], [262., 263.], [264., 265.], [266., 267.], [268., 269.], [270., 271.], [272., 273.], [274., 275.], [276., 277.], [278., 279.], [280., 281.], [282., 283.], [284., 285.], [286., 287.]]> : tensor<144x2xf32>
  %0 = linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x2xf32>, tensor<144x2xf32>) outs(%acc : tensor<3x144xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x144xf32>
  return %0 : tensor<3x144xf32>
}
