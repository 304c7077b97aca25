// RUN: kiln-opt %s -split-input-file -kiln-cpu-int8-gemm="register-tile-m=4 tile-vectors=1 signed-dot=true parallel-chunks=2" --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// kiln-cpu-int8-gemm{signed-dot} (AVX2 CPUs): where the weights hold no
// -128, the products are of signed bytes, each chain of four marked
// kiln.avx2_dot, with one 16-lane vector per tile row (tile-vectors=1).
// Signed activations are read as they are, with no correction of the
// accumulators; unsigned ones are flipped (u ^ 0x80 = u - 128) and the
// accumulators start higher by 128 times the column sums (a [N]
// constant); a weight holding a -128 keeps the unsigned form of
// kiln-cpu-vnni-dot; a convolution's windows, packed flipped, are flipped
// back as each panel is loaded, and its accumulators start at zero
// correction.

// CHECK-LABEL: func.func @signed_activations
// CHECK-NOT:     tensor<32xi32>
// CHECK:         scf.forall
// CHECK:           scf.for {{.+}} iter_args({{.+}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK-NOT:         arith.xori
// CHECK-NOT:         arith.extui
// CHECK:             arith.addi %{{.+}}, %{{.+}} {kiln.avx2_dot} : vector<16xi32>
// CHECK-LABEL: func.func @unsigned_activations
// CHECK:         arith.constant dense_resource<{{.+}}> : tensor<32xi32>
// CHECK:         scf.forall
// CHECK:           scf.for {{.+}} iter_args({{.+}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:             arith.xori %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK-NOT:         arith.extui
// CHECK:             arith.addi %{{.+}}, %{{.+}} {kiln.avx2_dot} : vector<16xi32>
// CHECK-LABEL: func.func @min_weight
// CHECK:           scf.for {{.+}} iter_args({{.+}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:             arith.extui
// CHECK-NOT:         kiln.avx2_dot
// CHECK-LABEL: func.func @conv
// CHECK:         scf.forall
// CHECK:           arith.xori %{{.+}}, %{{.+}} : vector<64xi8>
// CHECK:           arith.addi %{{.+}}, %{{.+}} {kiln.avx2_dot} : vector<16xi32>

#a = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

func.func @signed_activations(%x: tensor<3x5xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %w = arith.constant dense<[[-7,3,65,115,-120,-92,82,114,-65,-49,94,-20,-59,83,-63,-24,36,12,-107,-121,93,64,86,9,81,-44,-13,73,-97,-51,-97,-12],[122,-94,-30,-25,103,-76,0,-61,-123,64,-113,-57,-1,-4,-99,123,63,118,-105,57,-53,10,108,-58,57,-87,-46,120,-21,4,-54,-99],[-20,31,-12,70,-36,28,69,106,-19,-118,55,7,95,-11,-34,-113,-11,36,69,90,-73,23,77,-62,-40,87,20,2,44,2,123,64],[-115,-91,11,81,-111,46,66,73,95,-79,14,77,-37,-80,-6,-108,-72,90,42,92,87,96,-49,-8,30,-58,107,-127,86,37,-64,56],[-23,85,127,-56,-8,-73,49,35,88,78,122,118,101,-90,-118,-5,-40,101,76,-20,19,22,100,-122,-3,44,-13,107,115,83,-10,98]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

func.func @unsigned_activations(%x: tensor<3x5xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %w = arith.constant dense<[[-7,3,65,115,-120,-92,82,114,-65,-49,94,-20,-59,83,-63,-24,36,12,-107,-121,93,64,86,9,81,-44,-13,73,-97,-51,-97,-12],[122,-94,-30,-25,103,-76,0,-61,-123,64,-113,-57,-1,-4,-99,123,63,118,-105,57,-53,10,108,-58,57,-87,-46,120,-21,4,-54,-99],[-20,31,-12,70,-36,28,69,106,-19,-118,55,7,95,-11,-34,-113,-11,36,69,90,-73,23,77,-62,-40,87,20,2,44,2,123,64],[-115,-91,11,81,-111,46,66,73,95,-79,14,77,-37,-80,-6,-108,-72,90,42,92,87,96,-49,-8,30,-58,107,-127,86,37,-64,56],[-23,85,127,-56,-8,-73,49,35,88,78,122,118,101,-90,-118,-5,-40,101,76,-20,19,22,100,-122,-3,44,-13,107,115,83,-10,98]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extui %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

func.func @min_weight(%x: tensor<3x5xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %w = arith.constant dense<[[-128,3,65,115,-120,-92,82,114,-65,-49,94,-20,-59,83,-63,-24,36,12,-107,-121,93,64,86,9,81,-44,-13,73,-97,-51,-97,-12],[122,-94,-30,-25,103,-76,0,-61,-123,64,-113,-57,-1,-4,-99,123,63,118,-105,57,-53,10,108,-58,57,-87,-46,120,-21,4,-54,-99],[-20,31,-12,70,-36,28,69,106,-19,-118,55,7,95,-11,-34,-113,-11,36,69,90,-73,23,77,-62,-40,87,20,2,44,2,123,64],[-115,-91,11,81,-111,46,66,73,95,-79,14,77,-37,-80,-6,-108,-72,90,42,92,87,96,-49,-8,30,-58,107,-127,86,37,-64,56],[-23,85,127,-56,-8,-73,49,35,88,78,122,118,101,-90,-118,-5,-40,101,76,-20,19,22,100,-122,-3,44,-13,107,115,83,-10,98]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

func.func @conv(%x: tensor<1x2x7x7xi8>, %init: tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}
