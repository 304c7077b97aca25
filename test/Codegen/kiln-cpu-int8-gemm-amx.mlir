// RUN: kiln-opt %s -split-input-file -kiln-cpu-int8-gemm="amx=true parallel-chunks=2" --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// With amx, an int8 GEMM of 16 rows or more (here 18 = 2 x 9, K = 5, N =
// 32) becomes an scf.forall whose blocks each hold one tile product
// marked for kiln-cpu-amx-tiles: the activations as the tiles' rows,
// padded with zeros to whole tiles (32 rows, K to 64) and viewed as [M,
// K / 4, 4]; the weight packed as [N / 16, K / 4, 16, 4] (zeros past K);
// the accumulator padded to 32 rows and sliced back to 18 after. Both
// sides are multiplied as they are: no flip and no weight sums.

#a = affine_map<(b, m, k, n) -> (b, m, k)>
#w = affine_map<(b, m, k, n) -> (k, n)>
#c = affine_map<(b, m, k, n) -> (b, m, n)>

// CHECK-DAG:   #[[$XMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG:   #[[$YMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, d1 mod 16, d3)>
// CHECK-DAG:   #[[$CMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x9x5xi8>, %[[ACC:[^:]+]]: tensor<2x9x32xi32>
// CHECK-DAG:     %[[PACKED:.+]] = arith.constant dense_resource<kiln_vnni> : tensor<2x16x16x4xi8>
// CHECK-DAG:     %[[A:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x9x5xi8> into tensor<18x5xi8>
// CHECK-DAG:     %[[O:.+]] = tensor.collapse_shape %[[ACC]] {{\[}}[0, 1], [2]] : tensor<2x9x32xi32> into tensor<18x32xi32>
// CHECK-DAG:     %[[PA:.+]] = tensor.pad %[[A]] low[0, 0] high[14, 59]
// CHECK-DAG:     %[[A3:.+]] = tensor.expand_shape %[[PA]] {{\[}}[0], [1, 2]] output_shape [32, 16, 4] : tensor<32x64xi8> into tensor<32x16x4xi8>
// CHECK-DAG:     %[[PO:.+]] = tensor.pad %[[O]] low[0, 0] high[14, 0]
// CHECK:         %[[R:.+]] = scf.forall (%{{.+}}, %{{.+}}) in (1, 1) shared_outs(%[[S:.+]] = %[[PO]]) -> (tensor<32x32xi32>)
// CHECK:           %[[CS:.+]] = tensor.extract_slice %[[S]]{{.+}} to tensor<?x32xi32>
// CHECK:           %[[XS:.+]] = tensor.extract_slice %[[A3]]{{.+}} to tensor<?x16x4xi8>
// CHECK:           %[[YS:.+]] = tensor.extract_slice %[[PACKED]]{{.+}} to tensor<2x16x16x4xi8>
// CHECK:           %[[P:.+]] = linalg.generic {indexing_maps = [#[[$XMAP]], #[[$YMAP]], #[[$CMAP]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[XS]], %[[YS]] : tensor<?x16x4xi8>, tensor<2x16x16x4xi8>) outs(%[[CS]] : tensor<?x32xi32>) attrs =  {kiln.amx_tiles}
// CHECK:             arith.extsi
// CHECK:             arith.extsi
// CHECK:             arith.muli
// CHECK:             arith.addi
// CHECK-NOT:         arith.xori
// CHECK:           tensor.parallel_insert_slice %[[P]] into %[[S]]
// CHECK:         %[[SL:.+]] = tensor.extract_slice %[[R]][0, 0] [18, 32] [1, 1] : tensor<32x32xi32> to tensor<18x32xi32>
// CHECK:         tensor.expand_shape %[[SL]] {{\[}}[0, 1], [2]] output_shape [2, 9, 32]
func.func @gemm(%x: tensor<2x9x5xi8>, %acc: tensor<2x9x32xi32>) -> tensor<2x9x32xi32> {
  %w = arith.constant dense<[[43,78,-123,78,-8,3,33,-55,122,-115,-57,-30,18,-24,-95,-117,-128,-116,-90,127,-80,39,64,-68,-56,-17,-61,121,-83,101,76,88],[-99,-28,32,-2,42,45,41,-113,117,14,103,-59,-36,97,-81,-112,-33,45,-97,94,-41,-70,11,101,98,95,-50,-124,71,53,69,-128],[-119,0,-43,-17,110,-76,7,-45,-53,78,-89,-47,-98,-90,-57,50,20,-14,-85,76,76,-68,-113,-47,-91,76,5,1,-54,1,119,-68],[68,-125,-48,110,95,-107,87,88,-12,-34,122,115,45,-26,-75,111,-60,14,44,-67,-48,61,-78,44,113,47,37,-10,119,-72,-37,36],[39,-101,-87,49,87,34,110,-32,-44,76,-118,-79,-79,-29,-88,76,88,-31,-121,54,-101,28,-85,112,45,125,29,57,-32,79,-100,-89]]> : tensor<5x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x9x5xi8>, tensor<5x32xi8>) outs(%acc : tensor<2x9x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<2x9x32xi32>
  return %0 : tensor<2x9x32xi32>
}

// -----

// Unsigned activations stay unsigned (extui in the tile product:
// tdpbusd); 16 rows need no row padding (K still is); fewer than 16 rows
// keep the vpdpbusd register tiles.

#a = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// CHECK-LABEL: func.func @unsigned_rows16
// CHECK-SAME:    %[[X:[^:]+]]: tensor<16x8xi8>, %[[ACC:[^:]+]]: tensor<16x32xi32>
// CHECK:         tensor.pad %[[X]] low[0, 0] high[0, 56]
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall {{.+}} shared_outs(%{{.+}} = %[[ACC]])
// CHECK:         linalg.generic
// CHECK-DAG:       arith.extui %{{.+}} : i8 to i32
// CHECK-DAG:       arith.extsi %{{.+}} : i8 to i32
// CHECK:           arith.muli
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT:     kiln.amx_tiles
// CHECK:         scf.for {{.+}} -> (vector<16xi32>
func.func @unsigned_rows16(%x: tensor<16x8xi8>, %acc: tensor<16x32xi32>) -> tensor<16x32xi32> {
  %w1 = arith.constant dense<[[52,-101,123,93,68,-57,-16,-14,-49,-114,62,-128,67,-79,36,-41,-68,109,-7,99,-80,-5,-40,-12,-125,42,-40,91,-74,-42,-117,75],[8,-26,106,24,118,60,21,0,-77,48,74,50,-23,-127,60,-118,77,-90,-50,-74,10,-76,-62,-116,123,-73,-79,25,-92,98,72,-39],[-26,-35,60,-22,-55,46,-93,73,-19,112,-62,-32,95,52,-118,-41,-124,82,-22,-69,57,94,-102,1,-35,57,110,8,63,-48,20,-2],[59,-116,-68,-117,122,7,-3,-6,-120,85,88,-123,31,14,-31,-3,97,25,-3,58,49,6,84,16,30,-3,23,29,102,-65,-35,13],[-42,44,83,-80,-114,125,2,63,66,116,-120,-53,123,-15,-27,-62,-123,-117,121,-124,-93,-65,-56,92,-45,-87,-28,48,-14,-65,-98,-112],[-3,-79,21,45,-31,0,-114,12,-82,-12,-100,-58,-22,-3,-121,108,-21,-77,-78,59,-16,-64,-13,-79,-87,-46,118,-105,11,111,-10,-35],[14,-83,50,-128,16,-113,-123,-74,56,-22,-21,26,-111,123,-4,99,65,-66,-51,28,87,107,-4,-102,126,90,54,-27,-94,72,-76,-46],[93,32,-52,1,28,-102,-58,66,32,82,60,-5,-52,-29,-77,114,-121,-33,-111,97,39,-21,74,-33,-9,-36,66,-113,12,-58,121,-70]]> : tensor<8x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w1 : tensor<16x8xi8>, tensor<8x32xi8>) outs(%acc : tensor<16x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extui %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<16x32xi32>
  return %0 : tensor<16x32xi32>
}
func.func @few_rows(%x: tensor<3x8xi8>, %acc: tensor<3x32xi32>) -> tensor<3x32xi32> {
  %w1 = arith.constant dense<[[-26,-113,-1,10,64,-15,-65,-122,105,-89,69,107,-46,-94,49,-33,-119,115,104,-99,58,-24,-112,77,90,-124,-101,-111,117,110,86,47],[-105,-62,4,-6,-102,-65,51,100,-101,115,-47,-110,106,6,41,-81,104,-25,-33,61,64,54,-69,-80,17,-43,-120,-20,70,-30,-23,46],[120,73,-91,-43,9,-16,-70,-111,38,-35,-47,114,84,0,104,14,107,27,-38,17,49,77,120,-62,-102,-47,19,99,105,-1,-117,117],[-69,-93,-72,72,8,-7,-39,-7,55,97,115,-95,61,3,-33,-65,-112,-41,-69,81,100,-27,-29,72,-89,-125,-75,127,-15,116,-120,45],[-61,-78,34,40,72,-80,87,-33,-113,-120,-106,-111,38,-88,7,-82,64,86,86,-66,-16,83,79,-127,42,-114,34,-113,20,110,-24,81],[-53,-125,4,110,56,-71,-62,-61,17,21,24,-76,60,121,-76,-35,-11,18,99,18,120,-56,40,60,86,126,-7,24,62,-107,57,78],[15,42,77,-3,-111,39,29,-62,-19,-51,-97,3,-21,-111,-55,22,-113,-82,-59,-64,127,102,-42,22,-15,-66,-88,50,54,127,-38,101],[108,76,80,-43,25,21,-22,21,-14,-106,-17,49,87,5,-124,5,-31,60,43,-109,112,-74,7,124,-106,-52,75,-63,35,-110,-92,-49]]> : tensor<8x32xi8>
  %0 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w1 : tensor<3x8xi8>, tensor<8x32xi8>) outs(%acc : tensor<3x32xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<3x32xi32>
  return %0 : tensor<3x32xi32>
}

// -----

// A quantized convolution (3 output channels, a 5 x 5 plane, K = 2 x 3 x
// 3 = 18): its windows copied as they are (no xor) into [n, 2, 16, 64]
// bytes (K padded to 64, the input's channels with zeros to cover it)
// and viewed as [n, 2, 16, 16, 4]; the weights as [16, 16, 4] (channels
// and K padded with zeros); the init padded to [1, 16, 32]; one marked
// tile product per block of (image, channels, positions); the result
// sliced back to [1, 3, 25].

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x7x7xi8>, %[[INIT:[^:]+]]: tensor<1x3x5x5xi32>
// CHECK-DAG:     %[[W:.+]] = arith.constant dense_resource<kiln_vnni> : tensor<16x16x4xi8>
// CHECK:         tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 6, 2, 0]
// CHECK:         %[[PACKED:.+]] = scf.forall ({{.+}}) in (1, 2) shared_outs({{.+}}) -> (tensor<1x2x16x64xi8>)
// CHECK-NOT:       arith.xori
// CHECK:         %[[COL:.+]] = tensor.expand_shape %[[PACKED]] {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 2, 16, 16, 4]
// CHECK:         %[[OUT:.+]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1], [2, 3]] : tensor<1x3x5x5xi32> into tensor<1x3x25xi32>
// CHECK:         %[[PO:.+]] = tensor.pad %[[OUT]] low[0, 0, 0] high[0, 13, 7]
// CHECK:         %[[R:.+]] = scf.forall ({{.+}}) in (1, 1, 1) shared_outs(%[[S:.+]] = %[[PO]]) -> (tensor<1x16x32xi32>)
// CHECK:           tensor.extract_slice %[[S]]{{.+}} to tensor<?x?xi32>
// CHECK:           tensor.extract_slice %[[W]]{{.+}} to tensor<?x16x4xi8>
// CHECK:           tensor.extract_slice %[[COL]]{{.+}} to tensor<?x16x16x4xi8>
// CHECK:           linalg.generic
// CHECK-SAME:        attrs =  {kiln.amx_tiles}
// CHECK:         %[[SL:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 3, 25] [1, 1, 1]
// CHECK:         tensor.expand_shape %[[SL]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 5, 5]
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<1x2x7x7xi8>, %init: tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[-36,54,-4],[88,113,-26],[-20,13,37]],[[-6,26,117],[59,-47,-20],[-26,-90,-128]]],[[[74,-21,-38],[33,16,111],[29,108,20]],[[-45,-46,125],[22,-80,84],[82,-126,-88]]],[[[49,-25,-41],[-110,-80,91],[85,84,18]],[[-93,-46,6],[126,-62,12],[-3,0,13]]]]> : tensor<3x2x3x3xi8>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}

// -----

// QLinearConv's form: the init is the bias broadcast along the channels,
// and a requantization reads the sums. The tiles start at zero (a fill of
// each block, which kiln-cpu-amx-tiles turns into zero tiles), the
// broadcast is never written, and the requantization is rebuilt over the
// sums with the bias (a [3] constant) added first.

#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#one = affine_map<(d0, d1, d2, d3) -> (0)>
// CHECK-DAG:   #[[$CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv_requantized
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x7x7xi8>, %[[SCALE:[^:]+]]: tensor<3xf32>, %[[ZP:[^:]+]]: tensor<1xf32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x16x32xi32>
// CHECK:         %[[R:.+]] = scf.forall ({{.+}}) in (1, 1, 1) shared_outs(%[[S:.+]] = %[[E]]) -> (tensor<1x16x32xi32>)
// CHECK:           %[[CS:.+]] = tensor.extract_slice %[[S]]
// CHECK:           %[[F:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%[[CS]] : tensor<?x?xi32>)
// CHECK:           linalg.generic {{.+}} outs(%[[F]] : tensor<?x?xi32>) attrs =  {kiln.amx_tiles}
// CHECK:         %[[SL:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 3, 25] [1, 1, 1]
// CHECK:         %[[SUMS:.+]] = tensor.expand_shape %[[SL]]
// CHECK:         %[[BIAS:.+]] = arith.constant dense_resource<kiln_vnni{{.*}}> : tensor<3xi32>
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #[[$CHAN]], #{{.+}}], {{.+}} ins(%[[SUMS]], %[[SCALE]], %[[ZP]], %[[BIAS]] : tensor<1x3x5x5xi32>, tensor<3xf32>, tensor<1xf32>, tensor<3xi32>) outs(%{{.+}} : tensor<1x3x5x5xi8>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: i32, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %[[B:[^:]+]]: i32, %{{[^:]+}}: i8):
// CHECK-NEXT:      %[[ADD:.+]] = arith.addi %[[IN]], %[[B]] : i32
// CHECK-NEXT:      arith.sitofp %[[ADD]] : i32 to f32
// CHECK:           arith.fptosi
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
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

// The start's other forms: a constant fill (ConvInteger's start, here 5)
// with no requantization is added in an elementwise pass of its own; a
// start of zeros adds nothing (the sums are the result); a bias read at
// run time (a [3] argument broadcast) is added as that argument.

#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv_fill_start
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.fill
// CHECK:         kiln.amx_tiles
// CHECK:         %[[SUMS:.+]] = tensor.expand_shape
// CHECK:         %[[FIVE:.+]] = arith.constant dense_resource<kiln_vnni{{.*}}> : tensor<3xi32>
// CHECK:         %[[ADD:.+]] = linalg.generic {{.+}} ins(%[[SUMS]], %[[FIVE]] : tensor<1x3x5x5xi32>, tensor<3xi32>)
// CHECK:           arith.addi
// CHECK:         return %[[ADD]]
// CHECK-LABEL: func.func @conv_zero_start
// CHECK:         kiln.amx_tiles
// CHECK:         %[[SUMS:.+]] = tensor.expand_shape
// CHECK-NEXT:    return %[[SUMS]]
// CHECK-LABEL: func.func @conv_runtime_bias
// CHECK-SAME:    %[[B:[^:]+]]: tensor<3xi32>
// CHECK:         kiln.amx_tiles
// CHECK:         %[[SUMS:.+]] = tensor.expand_shape
// CHECK:         linalg.generic {{.+}} ins(%[[SUMS]], %[[B]] : tensor<1x3x5x5xi32>, tensor<3xi32>)
func.func @conv_fill_start(%x: tensor<1x2x7x7xi8>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %five = arith.constant 5 : i32
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.fill ins(%five : i32) outs(%e : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}
func.func @conv_zero_start(%x: tensor<1x2x7x7xi8>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}
func.func @conv_runtime_bias(%x: tensor<1x2x7x7xi8>, %bias: tensor<3xi32>) -> tensor<1x3x5x5xi32> {
  %w = arith.constant dense<[[[[86,-62,-101],[-52,-23,80],[-13,-105,-43]],[[25,80,58],[126,-80,97],[-114,14,-58]]],[[[-77,40,-50],[15,-62,-90],[63,-18,45]],[[43,113,-20],[-72,34,111],[119,94,46]]],[[[-31,-28,-118],[-81,-43,-40],[20,2,49]],[[100,96,70],[122,-47,104],[108,-71,-8]]]]> : tensor<3x2x3x3xi8>
  %e = tensor.empty() : tensor<1x3x5x5xi32>
  %init = linalg.generic {indexing_maps = [#chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<3xi32>) outs(%e : tensor<1x3x5x5xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x3x5x5xi32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xi8>, tensor<3x2x3x3xi8>) outs(%init : tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}
