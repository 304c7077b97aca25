// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(kiln-gpu-split-k)' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(kiln-gpu-split-k{target-blocks=0})' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(kiln-gpu-split-k{target-blocks=132 min-k=1024})' | FileCheck %s --check-prefix=MINK
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(kiln-gpu-split-k{last-block-sum=false})' | FileCheck %s --check-prefix=NOSUM

// BERT's output projection at 128 tokens: 2x12 = 24 tiles of 64x64 on 132
// multiprocessors. K = 3072 splits in 6 (the least divisor giving 132
// blocks), each split keeping 512 >= min-k steps: the inputs expanded, the
// partials a zero-filled [6, 128, 768], and the bias (the output's initial
// value, an input of the sum) added to the six partials elementwise. The
// module gets the zero counters with which kiln-gpu-contractions sums the
// partials in the last block of each tile: one per 16x16 tile of the
// output, 8 x 48 (none with last-block-sum=false).

// OFF-NOT:   memref.global
// NOSUM-NOT: memref.global
// NOSUM:     linalg.generic

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2, d1)>
// CHECK-DAG: #[[$P:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1)>
// CHECK-DAG: #[[$P0:.+]] = affine_map<(d0, d1) -> (0, d0, d1)>
// CHECK-DAG: #[[$P5:.+]] = affine_map<(d0, d1) -> (5, d0, d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK:       memref.global "private" @kiln_split_k_counters : memref<384xi32> = dense<0>
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME:    (%[[X:.+]]: tensor<128x3072xf32>, %[[W:.+]]: tensor<3072x768xf32>, %[[BIAS:.+]]: tensor<128x768xf32>)
// CHECK-DAG:     %[[XE:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [128, 6, 512]
// CHECK-DAG:     %[[WE:.+]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [6, 512, 768]
// CHECK:         %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x128x768xf32>)
// CHECK:         %[[PART:.+]] = linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$P]]],
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[XE]], %[[WE]] : tensor<128x6x512xf32>, tensor<6x512x768xf32>) outs(%[[ZERO]] : tensor<6x128x768xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$P0]], {{.*}}, #[[$P5]], #[[$ID]], #[[$ID]]],
// CHECK-SAME:      ins(%[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[BIAS]] :
// CHECK:         ^bb0(%[[P0:[a-z0-9_]+]]: f32, %[[P1:[a-z0-9_]+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %[[P5:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, %{{.+}}: f32):
// CHECK:           %[[S0:.+]] = arith.addf %[[B]], %[[P0]]
// CHECK:           %[[S1:.+]] = arith.addf %[[S0]], %[[P1]]
// CHECK:           %[[S5:.+]] = arith.addf %{{.+}}, %[[P5]]
// CHECK:           linalg.yield %[[S5]]
// CHECK:         return %[[SUM]]
// OFF-LABEL: func.func @matmul_bias
// OFF-NOT:     tensor.expand_shape
// OFF:         linalg.matmul
// MINK-LABEL: func.func @matmul_bias
// MINK:        output_shape [128, 3, 1024]
func.func @matmul_bias(%a: tensor<128x3072xf32>, %b: tensor<3072x768xf32>, %bias: tensor<128x768xf32>) -> tensor<128x768xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<128x3072xf32>, tensor<3072x768xf32>) outs(%bias : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}

// -----

// ResNet-50's layer4 3x3 convolution: 8 tiles. The input channels (the
// longest reduction dim, 512) split in 16, leaving 32 x 3 x 3 = 288 steps
// per split (32 splits would leave 144 < min-k). The zero padding is
// rebuilt around the expanded input, so that the tiled kernel still reads
// the unpadded input in place; the old pad goes. The initial value is a
// zero fill: the sum adds only the partials. Counters for 512 / 16 x
// ceil(49 / 16) = 128 tiles.

// CHECK:         memref.global "private" @kiln_split_k_counters : memref<128xi32> = dense<0>

// CHECK-LABEL: func.func @conv_padded
// CHECK-SAME:    (%[[X:.+]]: tensor<1x512x7x7xf32>, %[[W:.+]]: tensor<512x512x3x3xf32>)
// CHECK:         %[[XE:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 16, 32, 7, 7]
// CHECK:         %[[XP:.+]] = tensor.pad %[[XE]] low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1]
// CHECK:         } : tensor<1x16x32x7x7xf32> to tensor<1x16x32x9x9xf32>
// CHECK:         %[[WE:.+]] = tensor.expand_shape %[[W]] {{\[}}[0], [1, 2], [3], [4]] output_shape [512, 16, 32, 3, 3]
// CHECK:         %[[PART:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[XP]], %[[WE]] : tensor<1x16x32x9x9xf32>, tensor<512x16x32x3x3xf32>) outs(%{{.+}} : tensor<16x1x512x7x7xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[PART]], {{.*}} : tensor<16x1x512x7x7xf32>, {{.*}}) outs(%{{.+}} : tensor<1x512x7x7xf32>)
// CHECK:         ^bb0(%[[P0:[a-z0-9_]+]]: f32, %[[P1:[a-z0-9_]+]]: f32,
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[P0]], %[[P1]]
// CHECK-NOT:     tensor.pad
// CHECK:         return
// OFF-LABEL: func.func @conv_padded
// OFF:         linalg.conv_2d_nchw_fchw
func.func @conv_padded(%x: tensor<1x512x7x7xf32>, %w: tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x512x7x7xf32> to tensor<1x512x9x9xf32>
  %e = tensor.empty() : tensor<1x512x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x512x9x9xf32>, tensor<512x512x3x3xf32>) outs(%f : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  return %y : tensor<1x512x7x7xf32>
}

// -----

// Not split: enough tiles already (16 x 16 = 256 blocks); a short
// reduction (K 256 leaves no split min-k steps); an f16 output (partials
// would round to f16); a narrow product (N 8, a loop kernel's).

// CHECK-NOT:     memref.global
// CHECK-LABEL: func.func @not_split
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT:     linalg.generic
func.func @not_split(%a: tensor<1024x2048xf32>, %b: tensor<2048x1024xf32>, %c: tensor<1024x1024xf32>,
                     %d: tensor<64x256xf32>, %e: tensor<256x64xf32>, %f: tensor<64x64xf32>,
                     %g: tensor<64x2048xf16>, %h: tensor<2048x64xf16>, %i: tensor<64x64xf16>,
                     %j: tensor<64x2048xf32>, %k: tensor<2048x8xf32>, %l: tensor<64x8xf32>)
    -> (tensor<1024x1024xf32>, tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x8xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<1024x2048xf32>, tensor<2048x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = linalg.matmul ins(%d, %e : tensor<64x256xf32>, tensor<256x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = linalg.matmul ins(%g, %h : tensor<64x2048xf16>, tensor<2048x64xf16>) outs(%i : tensor<64x64xf16>) -> tensor<64x64xf16>
  %3 = linalg.matmul ins(%j, %k : tensor<64x2048xf32>, tensor<2048x8xf32>) outs(%l : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %0, %1, %2, %3 : tensor<1024x1024xf32>, tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x8xf32>
}
