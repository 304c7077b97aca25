// RUN: kiln-opt %s -split-input-file -kiln-cpu-int8-gemm="register-tile-m=4 parallel-chunks=2" --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// An int8 GEMM with a constant [K, N] weight (K = 5, N = 32) becomes an
// scf.forall over blocks of rows whose register tiles (4 rows, then single
// rows, by two 16-lane vectors) carry their accumulators through a loop
// over whole groups of four k, then one group with k past K read as zero.
// The weight is packed as [N / 16, ceil(K / 4), 64] bytes; a signed
// activation is flipped (xor 0x80808080 on the broadcast word) and the
// accumulators start lower by 128 times the column sums (a [N] constant).

#a = affine_map<(b, m, k, n) -> (b, m, k)>
#w = affine_map<(b, m, k, n) -> (k, n)>
#c = affine_map<(b, m, k, n) -> (b, m, n)>

// CHECK-LABEL: func.func @signed_activations
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x5xi8>, %[[ACC:[^:]+]]: tensor<2x3x32xi32>
// CHECK-DAG:     %[[PACKED:.+]] = arith.constant dense_resource<kiln_vnni> : tensor<2x2x64xi8>
// CHECK-DAG:     %[[CORR:.+]] = arith.constant dense_resource<kiln_vnni{{.*}}> : tensor<32xi32>
// CHECK-DAG:     %[[A:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x5xi8> into tensor<6x5xi8>
// CHECK-DAG:     %[[O:.+]] = tensor.collapse_shape %[[ACC]] {{\[}}[0, 1], [2]] : tensor<2x3x32xi32> into tensor<6x32xi32>
// CHECK:         %[[R:.+]] = scf.forall (%{{.+}}, %{{.+}}) in (2, 1) shared_outs(%{{.+}} = %[[O]]) -> (tensor<6x32xi32>)
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               vector.transfer_read %[[CORR]]
// CHECK:               scf.for {{.+}} iter_args({{.+}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:                 vector.transfer_read %[[PACKED]]{{.+}} : tensor<2x2x64xi8>, vector<64xi8>
// CHECK:                 vector.transfer_read %[[A]]{{.+}} {in_bounds = [true]} : tensor<6x5xi8>, vector<4xi8>
// CHECK:                 vector.bitcast %{{.+}} : vector<4xi8> to vector<1xi32>
// CHECK:                 %[[FLIP:.+]] = arith.constant dense<-2139062144> : vector<16xi32>
// CHECK-NEXT:            arith.xori %{{.+}}, %[[FLIP]] : vector<16xi32>
// CHECK:                 vector.shuffle %{{.+}} [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
// CHECK:                 arith.extui %{{.+}} : vector<16xi8> to vector<16xi32>
// CHECK:                 arith.extsi %{{.+}} : vector<16xi8> to vector<16xi32>
// CHECK:               vector.transfer_read %[[A]][%{{[^]]+}}], %{{[^ ]+}} : tensor<6x5xi8>, vector<4xi8>
// CHECK:               vector.transfer_write
// CHECK:         scf.forall.in_parallel
// CHECK:           tensor.parallel_insert_slice
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [2, 3, 32] : tensor<6x32xi32> into tensor<2x3x32xi32>
// CHECK:         return %[[E]]
// CHECK-NOT:     linalg.generic
func.func @signed_activations(%x: tensor<2x3x5xi8>, %acc: tensor<2x3x32xi32>) -> tensor<2x3x32xi32> {
  %w = arith.constant dense<[[-7,3,65,115,-120,-92,82,114,-65,-49,94,-20,-59,83,-63,-24,36,12,-107,-121,93,64,86,9,81,-44,-13,73,-97,-51,-97,-12],[122,-94,-30,-25,103,-76,0,-61,-123,64,-113,-57,-1,-4,-99,123,63,118,-105,57,-53,10,108,-58,57,-87,-46,120,-21,4,-54,-99],[-20,31,-12,70,-36,28,69,106,-19,-118,55,7,95,-11,-34,-113,-11,36,69,90,-73,23,77,-62,-40,87,20,2,44,2,123,64],[-115,-91,11,81,-111,46,66,73,95,-79,14,77,-37,-80,-6,-108,-72,90,42,92,87,96,-49,-8,30,-58,107,-127,86,37,-64,56],[-23,85,127,-56,-8,-73,49,35,88,78,122,118,101,-90,-118,-5,-40,101,76,-20,19,22,100,-122,-3,44,-13,107,115,83,-10,98]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<2x3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<2x3x32xi32>
  return %0 : tensor<2x3x32xi32>
}

// -----

// Unsigned activations (extui) need neither the flip nor the correction.

#a = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// CHECK-LABEL: func.func @unsigned_activations
// CHECK-NOT:     arith.xori
// CHECK-NOT:     tensor<32xi32>
// CHECK:         scf.forall
// CHECK-NOT:     linalg.generic
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

// -----

// Left alone: N = 10 fills no 16-lane vector; a weight that is not a
// constant; an unsigned weight (vpdpbusd's second operand is signed).

#a = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#w = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @narrow
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @narrow(%x: tensor<3x5xi8>, %acc: tensor<3x10xi32>) -> tensor<3x10xi32> {
  %w = arith.constant dense<[[-110,41,-60,-66,45],[68,99,-74,95,84],[-48,-112,69,83,-11],[-86,-91,-32,65,-47],[-120,48,62,-83,15],[-27,0,-127,34,-61],[13,-21,28,-101,-35],[34,68,-31,-122,57],[1,39,-88,-18,98],[94,-48,33,-107,79]]> : tensor<10x5xi8>
  %0 = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x5xi8>, tensor<10x5xi8>) outs(%acc : tensor<3x10xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x10xi32>
  return %0 : tensor<3x10xi32>
}

// CHECK-LABEL: func.func @runtime_weight
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @runtime_weight(%x: tensor<3x5xi8>, %w: tensor<5x32xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

// CHECK-LABEL: func.func @unsigned_weight
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @unsigned_weight(%x: tensor<3x5xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %w = arith.constant dense<[[-7,3,65,115,-120,-92,82,114,-65,-49,94,-20,-59,83,-63,-24,36,12,-107,-121,93,64,86,9,81,-44,-13,73,-97,-51,-97,-12],[122,-94,-30,-25,103,-76,0,-61,-123,64,-113,-57,-1,-4,-99,123,63,118,-105,57,-53,10,108,-58,57,-87,-46,120,-21,4,-54,-99],[-20,31,-12,70,-36,28,69,106,-19,-118,55,7,95,-11,-34,-113,-11,36,69,90,-73,23,77,-62,-40,87,20,2,44,2,123,64],[-115,-91,11,81,-111,46,66,73,95,-79,14,77,-37,-80,-6,-108,-72,90,42,92,87,96,-49,-8,30,-58,107,-127,86,37,-64,56],[-23,85,127,-56,-8,-73,49,35,88,78,122,118,101,-90,-118,-5,-40,101,76,-20,19,22,100,-122,-3,44,-13,107,115,83,-10,98]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extui %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

// -----

// A quantized convolution (int8 input and constant weights, int32 bias
// init), 3 output channels over a 5x5 plane (P = 25): written in NCHW with
// the plane along the vectors. The weights become [F, K] rows padded to a
// multiple of four (K = 18 -> 20), with -128 times each row's sum; the
// input is padded (one channel for k up to 20, two rows for positions up
// to 32, a whole register tile of two vectors) and its windows copied,
// flipped, into [n, p / 16, k / 4, 64] by a loop over the two panels of 16
// positions: a panel's positions cycle through 5 layouts of output rows (5
// wide), one switch case each (the two panels use the first two); per k, each row's run of positions is one
// load of the flattened input shuffled into its lanes (16 bytes where that
// stays inside the input, else only the run's), the four k of a group
// interleaved byte by byte; the plane's last, partial tile reads and
// writes masked.

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x7x7xi8>, %[[INIT:[^:]+]]: tensor<1x3x5x5xi32>
// CHECK-DAG:     %[[W:.+]] = arith.constant dense_resource<kiln_vnni> : tensor<3x20xi8>
// CHECK-DAG:     %[[CORR:.+]] = arith.constant dense_resource<kiln_vnni{{.*}}> : tensor<3xi32>
// CHECK:         %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 1, 2, 0]
// CHECK:         } : tensor<1x2x7x7xi8> to tensor<1x3x9x7xi8>
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2, 3]] : tensor<1x3x9x7xi8> into tensor<189xi8>
// CHECK:         %[[PACKED:.+]] = scf.forall ({{.+}}) in (1, 2) shared_outs({{.+}}) -> (tensor<1x2x5x64xi8>)
// CHECK:           scf.index_switch %{{.+}} -> tensor<5x64xi8>
// CHECK-NEXT:      case 0 {
// CHECK:             arith.cmpi ule, %{{.+}}, %{{.+}} : index
// CHECK:             scf.if %{{.+}} -> (tensor<5x64xi8>) {
// CHECK:               scf.for {{.+}} -> (tensor<5x64xi8>)
// CHECK:                 vector.transfer_read %[[FLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<189xi8>, vector<16xi8>
// CHECK:                 vector.shuffle %{{.+}}, %{{.+}} [16, 17, 18, 19, 20, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi8>, vector<16xi8>
// CHECK:                 vector.shuffle %{{.+}}, %{{.+}} [0, 16, 32, 48, 1, 17, 33, 49, {{.+}}] : vector<32xi8>, vector<32xi8>
// CHECK:                 %[[FLIP:.+]] = arith.constant dense<-128> : vector<64xi8>
// CHECK-NEXT:            arith.xori %{{.+}}, %[[FLIP]] : vector<64xi8>
// CHECK:                 vector.transfer_write %{{.+}} {in_bounds = [true]} : vector<64xi8>, tensor<5x64xi8>
// CHECK:             } else {
// CHECK:                 vector.transfer_read %[[FLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<189xi8>, vector<5xi8>
// CHECK-NOT:       case 1 {
// CHECK:           default {
// CHECK:           tensor.parallel_insert_slice
// CHECK:         %[[OUT:.+]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1], [2, 3]] : tensor<1x3x5x5xi32> into tensor<1x3x25xi32>
// CHECK:         %[[R:.+]] = scf.forall ({{.+}}) in (1, 1, 1) shared_outs(%{{.+}} = %[[OUT]]) -> (tensor<1x3x25xi32>)
// CHECK:           tensor.extract %[[CORR]]
// CHECK:           vector.transfer_read %[[W]]{{.+}} {in_bounds = [true]} : tensor<3x20xi8>, vector<4xi8>
// CHECK:           vector.transfer_read %[[PACKED]]{{.+}} {in_bounds = [true]} : tensor<1x2x5x64xi8>, vector<64xi8>
// CHECK:           scf.if
// CHECK:             vector.transfer_write %{{.+}}, %{{.+}}[%{{[^]]+}}] : vector<16xi32>, tensor<?x?xi32>
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 5, 5] : tensor<1x3x25xi32> into tensor<1x3x5x5xi32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<1x2x7x7xi8>, %init: tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}

// A float convolution and one whose weights are not a constant are left
// alone.

// CHECK-LABEL: func.func @conv_runtime_weight
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-NOT:     scf.forall
func.func @conv_runtime_weight(%x: tensor<1x2x7x7xi8>, %w: tensor<3x2x3x3xi8>, %init: tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}

// CHECK-LABEL: func.func @conv_float
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-NOT:     scf.forall
func.func @conv_float(%x: tensor<1x2x7x7xf32>, %w: tensor<3x2x3x3xf32>, %init: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

// QLinearConv's form: the accumulators start at the bias broadcast along
// the channels (a constant, added to the -128 * weight sums at compile
// time: nothing reads the init), and the requantization after the
// convolution (a scale per channel, rounding, saturation to int8) is
// applied to each register tile as it is written: the tiles write int8
// into a new tensor, and neither the int32 sums nor the broadcast are
// stored.

#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#one = affine_map<(d0, d1, d2, d3) -> (0)>
// CHECK-LABEL: func.func @conv_requantized
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x7x7xi8>, %[[SCALE:[^:]+]]: tensor<3xf32>, %[[ZP:[^:]+]]: tensor<1xf32>
// CHECK-DAG:     %[[CORR:.+]] = arith.constant dense_resource<kiln_vnni{{.*}}> : tensor<3xi32>
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x3x5x5xi8>
// CHECK:         %[[OUT:.+]] = tensor.collapse_shape %[[E]] {{\[}}[0], [1], [2, 3]] : tensor<1x3x5x5xi8> into tensor<1x3x25xi8>
// CHECK:         %[[R:.+]] = scf.forall ({{.+}}) in (1, 1, 1) shared_outs(%{{.+}} = %[[OUT]]) -> (tensor<1x3x25xi8>)
// CHECK:           %[[C:.+]] = tensor.extract %[[CORR]]
// CHECK-NEXT:      vector.broadcast %[[C]] : i32 to vector<16xi32>
// CHECK-NOT:       vector.transfer_read {{.+}} : tensor<?x?xi32>
// CHECK:           tensor.extract %[[SCALE]]
// CHECK:           tensor.extract %[[ZP]][%c0
// CHECK:           arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK:           math.roundeven %{{.+}} : vector<16xf32>
// CHECK:           arith.fptosi %{{.+}} : vector<16xf32> to vector<16xi8>
// CHECK:           vector.transfer_write %{{.+}} : vector<16xi8>, tensor<?x?xi8>
// CHECK:         %[[Y:.+]] = tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 5, 5] : tensor<1x3x25xi8> into tensor<1x3x5x5xi8>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         return %[[Y]]
func.func @conv_requantized(%x: tensor<1x2x7x7xi8>, %scale: tensor<3xf32>, %zp: tensor<1xf32>) -> tensor<1x3x5x5xi8> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %bias = arith.constant dense<[100, -200, 300]> : tensor<3xi32>
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.generic {indexing_maps = [#chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<3xi32>) outs(%e : tensor<1x3x5x5xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %e8 = tensor.empty() : tensor<1x3x5x5xi8>
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %1 = linalg.generic {indexing_maps = [#id, #chan, #one, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %scale, %zp : tensor<1x3x5x5xi32>, tensor<3xf32>, tensor<1xf32>) outs(%e8 : tensor<1x3x5x5xi8>) {
  ^bb0(%in: i32, %s: f32, %z: f32, %out: i8):
    %f = arith.sitofp %in : i32 to f32
    %m = arith.mulf %f, %s : f32
    %r = math.roundeven %m : f32
    %a = arith.addf %r, %z : f32
    %c = arith.maximumf %a, %lo : f32
    %d = arith.minimumf %c, %hi : f32
    %q = arith.fptosi %d : f32 to i8
    linalg.yield %q : i8
  } -> tensor<1x3x5x5xi8>
  return %1 : tensor<1x3x5x5xi8>
}

// -----

// Not applied: a requantization that also reads a tensor element by
// element (a residual), and one whose convolution's sums have a second
// user; the accumulators still start at the bias.

#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv_residual
// CHECK:         %[[R:.+]] = scf.forall {{.+}} -> (tensor<1x3x25xi32>)
// CHECK-NOT:       vector.transfer_read {{.+}} : tensor<?x?xi32>
// CHECK:         %[[S:.+]] = tensor.expand_shape %[[R]]
// CHECK:         linalg.generic {{.+}} ins(%[[S]], %{{.+}} : tensor<1x3x5x5xi32>, tensor<1x3x5x5xi32>)
func.func @conv_residual(%x: tensor<1x2x7x7xi8>, %res: tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi8> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %bias = arith.constant dense<[100, -200, 300]> : tensor<3xi32>
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.generic {indexing_maps = [#chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<3xi32>) outs(%e : tensor<1x3x5x5xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %e8 = tensor.empty() : tensor<1x3x5x5xi8>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %res : tensor<1x3x5x5xi32>, tensor<1x3x5x5xi32>) outs(%e8 : tensor<1x3x5x5xi8>) {
  ^bb0(%in: i32, %r: i32, %out: i8):
    %s = arith.addi %in, %r : i32
    %q = arith.trunci %s : i32 to i8
    linalg.yield %q : i8
  } -> tensor<1x3x5x5xi8>
  return %1 : tensor<1x3x5x5xi8>
}

// CHECK-LABEL: func.func @conv_second_user
// CHECK:         %[[R:.+]] = scf.forall {{.+}} -> (tensor<1x3x25xi32>)
// CHECK:         %[[S:.+]] = tensor.expand_shape %[[R]]
// CHECK:         linalg.generic {{.+}} ins(%[[S]] : tensor<1x3x5x5xi32>)
// CHECK:         return %{{.+}}, %[[S]]
func.func @conv_second_user(%x: tensor<1x2x7x7xi8>) -> (tensor<1x3x5x5xi8>, tensor<1x3x5x5xi32>) {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %e8 = tensor.empty() : tensor<1x3x5x5xi8>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0 : tensor<1x3x5x5xi32>) outs(%e8 : tensor<1x3x5x5xi8>) {
  ^bb0(%in: i32, %out: i8):
    %q = arith.trunci %in : i32 to i8
    linalg.yield %q : i8
  } -> tensor<1x3x5x5xi8>
  return %1, %0 : tensor<1x3x5x5xi8>, tensor<1x3x5x5xi32>
}
