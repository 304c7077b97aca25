// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes | FileCheck %s

// Static argument shapes flow through a CNN: every `?` that the operands
// determine becomes static, and the function result type follows.

// CHECK-LABEL: func.func @cnn
// CHECK-SAME:    -> tensor<2x10xf32>
// CHECK:         kiln.conv{{.*}} -> tensor<2x8x16x16xf32>
// CHECK:         kiln.relu{{.*}} -> tensor<2x8x16x16xf32>
// CHECK:         kiln.max_pool{{.*}} -> tensor<2x8x8x8xf32>
// CHECK:         kiln.global_average_pool{{.*}} -> tensor<2x8x1x1xf32>
// CHECK:         kiln.flatten{{.*}} -> tensor<2x8xf32>
// CHECK:         kiln.gemm{{.*}} -> tensor<2x10xf32>
func.func @cnn(%x: tensor<2x3x32x32xf32>, %w: tensor<8x3x3x3xf32>, %fc: tensor<10x8xf32>) -> tensor<?x?xf32> {
  %0 = kiln.conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %1 = kiln.relu(%0) : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x?xf32>
  %2 = kiln.max_pool(%1) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %3 = kiln.global_average_pool(%2) : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %4 = kiln.flatten(%3) : (tensor<?x?x?x?xf32>) -> tensor<?x?xf32>
  %5 = kiln.gemm(%4, %fc) {transB = 1 : i64} : (tensor<?x?xf32>, tensor<10x8xf32>) -> tensor<?x?xf32>
  return %5 : tensor<?x?xf32>
}

// -----

// Broadcasting: a `?` against a known extent > 1 takes that extent.

// CHECK-LABEL: func.func @broadcast
// CHECK:         kiln.add{{.*}} -> tensor<4x3xf32>
// CHECK:         kiln.matmul{{.*}} -> tensor<5x4x7xf32>
func.func @broadcast(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>, %c: tensor<5x4x3xf32>, %d: tensor<3x7xf32>) -> tensor<?x?xf32> {
  %0 = kiln.add(%a, %b) : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<?x?xf32>
  %1 = kiln.matmul(%c, %d) : (tensor<5x4x3xf32>, tensor<3x7xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Shape-carrying operands are read when they are constants.

// CHECK-LABEL: func.func @shape_operands
// CHECK:         kiln.reshape{{.*}} -> tensor<3x8xf32>
// CHECK:         kiln.unsqueeze{{.*}} -> tensor<1x2x3x1x4xf32>
// CHECK:         kiln.slice{{.*}} -> tensor<2x2x4xf32>
// CHECK:         kiln.reduce_mean{{.*}} -> tensor<2x1x1xf32>
// CHECK:         kiln.transpose{{.*}} -> tensor<4x2x3xf32>
// CHECK:         kiln.concat{{.*}} -> tensor<2x6x4xf32>
// CHECK:         kiln.gather{{.*}} -> tensor<2x5x4xf32>
func.func @shape_operands(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>) -> tensor<?x?xf32> {
  %s = kiln.constant dense<[3, -1]> : tensor<2xi64>
  %0 = kiln.reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %axes = kiln.constant dense<[0, -2]> : tensor<2xi64>
  %1 = kiln.unsqueeze(%x, %axes) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  %st = kiln.constant dense<[1]> : tensor<1xi64>
  %en = kiln.constant dense<[100]> : tensor<1xi64>
  %ax = kiln.constant dense<[1]> : tensor<1xi64>
  %2 = kiln.slice(%x, %st, %en, %ax) : (tensor<2x3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %raxes = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %3 = kiln.reduce_mean(%x, %raxes) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  %4 = kiln.transpose(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<?x?x?xf32>
  %5 = kiln.concat(%x, %x) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<?x?x?xf32>
  %6 = kiln.gather(%x, %i) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<*xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// The torch-exported Expand idiom: the target shape goes through
// ConstantOfShape, Mul, Equal and Where. Each op is folded as soon as its
// types are known, so the Expand after it sees a constant shape in the
// same pass, and a Range and Slice on constants get static lengths.

// CHECK-LABEL: func.func @expand_idiom
// CHECK-SAME:    -> (tensor<3x4xf32>, tensor<5xi64>, tensor<2xi64>)
// CHECK-DAG:     %[[SL:.+]] = kiln.constant dense<[4, 3]> : tensor<2xi64>
// CHECK-DAG:     %[[R:.+]] = kiln.constant dense<[2, 5, 8, 11, 14]> : tensor<5xi64>
// CHECK-DAG:     %[[SHAPE:.+]] = kiln.constant dense<[3, 1]> : tensor<2xi64>
// CHECK-NOT:     kiln.constant_of_shape
// CHECK-NOT:     kiln.equal
// CHECK-NOT:     kiln.where
// CHECK:         %[[Y:.+]] = kiln.expand(%{{.+}}, %[[SHAPE]]){{.*}} -> tensor<3x4xf32>
// CHECK:         return %[[Y]], %[[R]], %[[SL]]
func.func @expand_idiom(%x: tensor<1x4xf32>) -> (tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>) {
  %two = kiln.constant dense<2> : tensor<1xi64>
  %m1 = kiln.constant dense<-1> : tensor<i64>
  %target = kiln.constant dense<[3, -1]> : tensor<2xi64>
  %ones = kiln.constant_of_shape(%two) {value = dense<1> : tensor<1xi64>} : (tensor<1xi64>) -> tensor<?xi64>
  %neg = kiln.mul(%ones, %m1) : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %eq = kiln.equal(%target, %neg) : (tensor<2xi64>, tensor<?xi64>) -> tensor<?xi1>
  %shape = kiln.where(%eq, %ones, %target) : (tensor<?xi1>, tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
  %y = kiln.expand(%x, %shape) : (tensor<1x4xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %s = kiln.constant dense<2> : tensor<i64>
  %l = kiln.constant dense<16> : tensor<i64>
  %d = kiln.constant dense<3> : tensor<i64>
  %r = kiln.range(%s, %l, %d) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %v = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %st = kiln.constant dense<-1> : tensor<1xi64>
  %en = kiln.constant dense<-5> : tensor<1xi64>
  %ax = kiln.constant dense<0> : tensor<1xi64>
  %sp = kiln.constant dense<-1> : tensor<1xi64>
  %sl = kiln.slice(%v, %st, %en, %ax, %sp) : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %sl2 = kiln.slice(%sl, %ax, %two, %ax, %one) : (tensor<?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  return %y, %r, %sl2 : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>
}

// -----

// Control flow: a Scan's body arguments take the slices' types, its body is
// inferred, and its results follow what the body yields (scan outputs
// stacked along their axis, as long as the scan inputs).

// CHECK-LABEL: func.func @scan_types
// CHECK:         kiln.scan(%{{.+}}, %{{.+}}) {{.+}} -> (tensor<4xf32>, tensor<4x6xf32>)
// CHECK:         ^bb0(%{{.+}}: tensor<4xf32>, %{{.+}}: tensor<4xf32>):
// CHECK:           kiln.add({{.+}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return {{.+}} : tensor<4xf32>, tensor<4x6xf32>
func.func @scan_types(%s0: tensor<4xf32>, %x: tensor<6x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0:2 = kiln.scan(%s0, %x) {num_scan_inputs = 1 : i64, scan_output_axes = array<i64: 1>} : (tensor<4xf32>, tensor<6x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  ^bb0(%s: tensor<?xf32>, %xt: tensor<?xf32>):
    %1 = kiln.add(%s, %xt) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    kiln.yield %1, %1 : tensor<?xf32>, tensor<?xf32>
  }
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// A Loop with a constant trip count and no condition: its scan output is
// M rows long. Its carried value keeps its type.

// CHECK-LABEL: func.func @loop_types
// CHECK:         kiln.loop({{.+}}) : (tensor<i64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<5x3xf32>)
// CHECK:         ^bb0(%{{.+}}: tensor<i64>, %{{.+}}: tensor<i1>, %{{.+}}: tensor<3xf32>):
func.func @loop_types(%x: tensor<3xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %m = kiln.constant dense<5> : tensor<i64>
  %0:2 = kiln.loop(%m, none, %x) : (tensor<i64>, tensor<3xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<?xf32>):
    %1 = kiln.tanh(%v) : (tensor<?xf32>) -> tensor<?xf32>
    kiln.yield %c, %1, %1 : tensor<i1>, tensor<?xf32>, tensor<?xf32>
  }
  return %0#0, %0#1 : tensor<?xf32>, tensor<?x?xf32>
}

// -----

// A Loop whose body computes its condition: the scan output's length is
// known only at run time.

// CHECK-LABEL: func.func @while_types
// CHECK:         -> (tensor<3xf32>, tensor<?x3xf32>)
func.func @while_types(%x: tensor<3xf32>, %c: tensor<i1>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %m = kiln.constant dense<5> : tensor<i64>
  %0:2 = kiln.loop(%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<?xf32>):
    %1 = kiln.less(%i, %m) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    kiln.yield %1, %v, %v : tensor<i1>, tensor<?xf32>, tensor<?xf32>
  }
  return %0#0, %0#1 : tensor<?xf32>, tensor<?x?xf32>
}

// -----

// An If on a constant condition is replaced by the branch it takes; an If
// on an input stays, its result typed by its branches.

// CHECK-LABEL: func.func @if_constant
// CHECK-NOT:     kiln.if
// CHECK:         %[[S:.+]] = kiln.sigmoid(%{{.+}}) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[R:.+]] = kiln.if(%{{.+}}) : (tensor<i1>) -> tensor<2xf32>
// CHECK:         return %[[S]], %[[R]] : tensor<2xf32>, tensor<2xf32>
func.func @if_constant(%x: tensor<2xf32>, %c: tensor<i1>) -> (tensor<*xf32>, tensor<*xf32>) {
  %f = kiln.constant dense<false> : tensor<i1>
  %0 = kiln.if(%f) : (tensor<i1>) -> tensor<*xf32> {
    %1 = kiln.tanh(%x) : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %1 : tensor<2xf32>
  } {
    %1 = kiln.sigmoid(%x) : (tensor<2xf32>) -> tensor<?xf32>
    kiln.yield %1 : tensor<?xf32>
  }
  %2 = kiln.if(%c) : (tensor<i1>) -> tensor<*xf32> {
    kiln.yield %x : tensor<2xf32>
  } {
    %1 = kiln.neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %1 : tensor<2xf32>
  }
  return %0, %2 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Sequences of known length (constant positions) are resolved: SequenceAt
// becomes the element, SequenceLength a constant, ConcatFromSequence a
// Concat (with new_axis, of the elements unsqueezed); the sequence ops
// left without uses go. A position known only at run time (wrapped when
// negative) chooses among elements of one type by Where.

// CHECK-LABEL: func.func @sequences
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>, %[[P:.+]]: tensor<i64>)
// CHECK-DAG:     %[[N:.+]] = kiln.constant dense<3> : tensor<i64>
// CHECK:         %[[UA:.+]] = kiln.unsqueeze(%[[A]], %{{.+}}) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
// CHECK:         %[[UB:.+]] = kiln.unsqueeze(%[[B]], %{{.+}}) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x2x3xf32>
// CHECK:         %[[CAT:.+]] = kiln.concat(%[[UA]], %{{.+}}, %[[UB]]) {axis = 0 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<3x2x3xf32>
// CHECK:         %[[NEG:.+]] = kiln.less(%[[P]], %{{.+}})
// CHECK:         %[[WRAP:.+]] = kiln.add(%[[P]], %{{.+}})
// CHECK:         %[[PN:.+]] = kiln.where(%[[NEG]], %[[WRAP]], %[[P]])
// CHECK:         %[[IS0:.+]] = kiln.equal(%[[PN]], %{{.+}})
// CHECK:         %[[IS1:.+]] = kiln.equal(%[[PN]], %{{.+}})
// CHECK:         %[[W1:.+]] = kiln.where(%[[IS1]], %[[A]], %[[B]]) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[DYN:.+]] = kiln.where(%[[IS0]], %[[A]], %[[W1]])
// CHECK-NOT:     kiln.sequence_at
// CHECK:         return %[[B]], %[[N]], %[[CAT]], %[[DYN]] : tensor<2x3xf32>, tensor<i64>, tensor<3x2x3xf32>, tensor<2x3xf32>
func.func @sequences(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %p: tensor<i64>) -> (tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>) {
  %s0 = kiln.sequence_construct(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> !kiln.seq<tensor<*xf32>>
  %c0 = kiln.constant dense<0> : tensor<i64>
  %s1 = kiln.sequence_insert(%s0, %a, %c0) : (!kiln.seq<tensor<*xf32>>, tensor<2x3xf32>, tensor<i64>) -> !kiln.seq<tensor<*xf32>>
  %c2 = kiln.constant dense<-1> : tensor<i64>
  %e = kiln.sequence_at(%s1, %c2) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  %n = kiln.sequence_length(%s1) : (!kiln.seq<tensor<*xf32>>) -> tensor<*xi64>
  %cat = kiln.concat_from_sequence(%s1) {axis = 0 : i64, new_axis = 1 : i64} : (!kiln.seq<tensor<*xf32>>) -> tensor<*xf32>
  %dyn = kiln.sequence_at(%s1, %p) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  return %e, %n, %cat, %dyn : tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>
}

// -----

// SplitToSequence of a static tensor: a Split (and, without keepdims and
// a split, a Squeeze of each part); SequenceErase with a constant position.

// CHECK-LABEL: func.func @split_to_sequence
// CHECK:         %[[S:.+]]:3 = kiln.split(%{{.+}}, %{{.+}}) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK:         %[[Q:.+]] = kiln.squeeze(%[[S]]#2, %{{.+}}) : (tensor<2x1xf32>, tensor<1xi64>) -> tensor<2xf32>
// CHECK:         return %[[Q]] : tensor<2xf32>
func.func @split_to_sequence(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %s = kiln.split_to_sequence(%x) {axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x3xf32>) -> !kiln.seq<tensor<*xf32>>
  %c0 = kiln.constant dense<0> : tensor<i64>
  %t = kiln.sequence_erase(%s, %c0) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> !kiln.seq<tensor<*xf32>>
  %c1 = kiln.constant dense<1> : tensor<i64>
  %e = kiln.sequence_at(%t, %c1) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// SequenceInsert at a run-time position into elements whose shapes differ
// along one axis: each result element is a run-time Slice of its
// candidates' concatenation (element 0: xs[0] after the position, else t),
// of data-dependent extent; @main's sequence result becomes those elements.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<?x3xf32> {kiln.name = "ys[0]"}, tensor<?x3xf32> {kiln.name = "ys[1]"}, tensor<?x3xf32> {kiln.name = "ys[2]"})
// CHECK-SAME:    kiln.composites = [{element_type = f32, first = 0 : i64, kind = "sequence", length = 3 : i64, name = "ys", output}]
// CHECK:         %[[P:.+]] = kiln.reshape(%arg3, %{{.+}}) : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
// CHECK:         %[[PN:.+]] = kiln.where(%{{.+}}, %{{.+}}, %[[P]])
// CHECK:         %[[AFTER0:.+]] = kiln.greater(%[[PN]], %{{.+}})
// CHECK:         %[[POOL0:.+]] = kiln.concat(%arg0, %arg2) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
// CHECK-DAG:     %[[T0:.+]] = kiln.constant dense<2> : tensor<1xi64>
// CHECK-DAG:     %[[X0:.+]] = kiln.constant dense<0> : tensor<1xi64>
// CHECK:         %[[S0:.+]] = kiln.where(%[[AFTER0]], %[[X0]], %[[T0]])
// CHECK:         %[[E0:.+]] = kiln.where(%[[AFTER0]], %{{.+}}, %{{.+}})
// CHECK:         %[[Y0:.+]] = kiln.slice(%[[POOL0]], %[[S0]], %[[E0]], %{{.+}}) : (tensor<6x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
// CHECK:         kiln.concat(%arg1, %arg2, %arg0) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<11x3xf32>
// CHECK:         kiln.concat(%arg2, %arg1) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<9x3xf32>
// CHECK:         return %[[Y0]], %{{.+}}, %{{.+}} : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<5x3xf32>, %t: tensor<4x3xf32>, %p: tensor<1xi64>) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "ys"}) {
  %s = kiln.sequence_construct(%a, %b) : (tensor<2x3xf32>, tensor<5x3xf32>) -> !kiln.seq<tensor<*xf32>>
  %r = kiln.sequence_insert(%s, %t, %p) : (!kiln.seq<tensor<*xf32>>, tensor<4x3xf32>, tensor<1xi64>) -> !kiln.seq<tensor<*xf32>>
  return %r : !kiln.seq<tensor<*xf32>>
}

// -----

// SplitToSequence by a split of run-time values: part k is the Slice from
// the running sum of the first k sizes (cast to i64) to that plus size k.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<?x6xf32> {kiln.name = "parts[0]"}, tensor<?x6xf32> {kiln.name = "parts[1]"})
// CHECK:         %[[SPLIT:.+]] = kiln.cast(%arg1) {to = i64} : (tensor<2xi32>) -> tensor<2xi64>
// CHECK:         %[[Z:.+]] = kiln.constant dense<0> : tensor<1xi64>
// CHECK:         %[[N0:.+]] = kiln.slice(%[[SPLIT]], %{{.+}}, %{{.+}}) : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         %[[END0:.+]] = kiln.add(%[[Z]], %[[N0]])
// CHECK:         %[[P0:.+]] = kiln.slice(%arg0, %[[Z]], %[[END0]], %{{.+}}) : (tensor<3x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x6xf32>
// CHECK:         %[[N1:.+]] = kiln.slice(%[[SPLIT]], %{{.+}}, %{{.+}})
// CHECK:         %[[END1:.+]] = kiln.add(%[[END0]], %[[N1]])
// CHECK:         %[[P1:.+]] = kiln.slice(%arg0, %[[END0]], %[[END1]], %{{.+}})
// CHECK:         return %[[P0]], %[[P1]]
func.func @main(%x: tensor<3x6xf32>, %split: tensor<2xi32>) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "parts"}) {
  %s = kiln.split_to_sequence(%x, %split) {axis = 0 : i64} : (tensor<3x6xf32>, tensor<2xi32>) -> !kiln.seq<tensor<*xf32>>
  return %s : !kiln.seq<tensor<*xf32>>
}

// -----

// By a scalar split of run-time value: as many parts as the axis has
// entries (part k from k * size), a run-time length ceil(4 / size) (the
// size at least 1) that SequenceLength reads, and @main's result gives the
// parts and then `chunks.length`.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<2x?xf32> {kiln.name = "chunks[0]"}, tensor<2x?xf32> {kiln.name = "chunks[1]"}, tensor<2x?xf32> {kiln.name = "chunks[2]"}, tensor<2x?xf32> {kiln.name = "chunks[3]"}, tensor<i64> {kiln.name = "chunks.length"}, tensor<i64>)
// CHECK-SAME:    kiln.composites = [{element_type = f32, first = 0 : i64, kind = "sequence", length = 4 : i64, name = "chunks", output, run_time_count}]
// CHECK:         %[[S:.+]] = kiln.max(%arg1, %{{.+}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[R:.+]] = kiln.add(%[[S]], %{{.+}})
// CHECK:         %[[LEN:.+]] = kiln.div(%[[R]], %[[S]])
// CHECK:         %[[STEP:.+]] = kiln.reshape(%[[S]], %{{.+}}) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-COUNT-4: kiln.slice(%arg0, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
// CHECK:         return {{.*}}, %[[LEN]], %[[LEN]] :
func.func @main(%x: tensor<2x4xf32>, %size: tensor<i64>) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "chunks"}, tensor<*xi64>) {
  %s = kiln.split_to_sequence(%x, %size) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<i64>) -> !kiln.seq<tensor<*xf32>>
  %n = kiln.sequence_length(%s) : (!kiln.seq<tensor<*xf32>>) -> tensor<*xi64>
  return %s, %n : !kiln.seq<tensor<*xf32>>, tensor<*xi64>
}

// -----

// An If whose branches give an optional present in one only: the If yields
// the tensor (zeros from the absent branch) and a presence, 1 or 0, that
// OptionalHasElement reads; @main's optional result becomes the tensor and
// `o.present`. An optional graph input passed through Identity becomes its
// elements.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<3xf32> {kiln.name = "o"}, tensor<i64> {kiln.name = "o.present"}, tensor<i1>, tensor<2xf32> {kiln.name = "i[0]"})
// CHECK-SAME:    kiln.composites = [{element_type = f32, first = 0 : i64, kind = "optional_tensor", length = 1 : i64, name = "o", output, run_time_count}, {element_type = f32, first = 3 : i64, kind = "optional_sequence", length = 1 : i64, name = "i", output}]
// CHECK:         %[[IF:.+]]:2 = kiln.if(%arg0) : (tensor<i1>) -> (tensor<3xf32>, tensor<i64>)
// CHECK:           %[[R:.+]] = kiln.relu(%arg1)
// CHECK:           %[[ONE:.+]] = kiln.constant dense<1> : tensor<i64>
// CHECK:           kiln.yield %[[R]], %[[ONE]] : tensor<3xf32>, tensor<i64>
// CHECK:           %[[Z:.+]] = kiln.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK:           %[[NONE:.+]] = kiln.constant dense<0> : tensor<i64>
// CHECK:           kiln.yield %[[Z]], %[[NONE]] : tensor<3xf32>, tensor<i64>
// CHECK:         %[[HAS:.+]] = kiln.cast(%[[IF]]#1) {to = i1} : (tensor<i64>) -> tensor<i1>
// CHECK:         return %[[IF]]#0, %[[IF]]#1, %[[HAS]], %arg2
func.func @main(%c: tensor<i1>, %x: tensor<3xf32>, %e: tensor<2xf32>) -> (!kiln.opt<tensor<3xf32>> {kiln.name = "o"}, tensor<*xi1>, !kiln.opt<!kiln.seq<tensor<2xf32>>> {kiln.name = "i"}) {
  %o = kiln.if(%c) : (tensor<i1>) -> !kiln.opt<tensor<3xf32>> {
    %r = kiln.relu(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %0 = kiln.optional(%r) : (tensor<3xf32>) -> !kiln.opt<tensor<3xf32>>
    kiln.yield %0 : !kiln.opt<tensor<3xf32>>
  } {
    %0 = kiln.optional() {type_ = tensor<3xf32>} : () -> !kiln.opt<tensor<3xf32>>
    kiln.yield %0 : !kiln.opt<tensor<3xf32>>
  }
  %has = kiln.optional_has_element(%o) : (!kiln.opt<tensor<3xf32>>) -> tensor<*xi1>
  %s = kiln.sequence_construct(%e) : (tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  %i = kiln.optional(%s) : (!kiln.seq<tensor<2xf32>>) -> !kiln.opt<!kiln.seq<tensor<2xf32>>>
  %j = kiln.identity(%i) : (!kiln.opt<!kiln.seq<tensor<2xf32>>>) -> !kiln.opt<!kiln.seq<tensor<2xf32>>>
  return %o, %has, %j : !kiln.opt<tensor<3xf32>>, tensor<*xi1>, !kiln.opt<!kiln.seq<tensor<2xf32>>>
}

// -----

// In @main, a Loop of run-time trip count M that appends to a sequence it
// returns is unrolled max-sequence-loop-trips times (3 here, from the
// module attribute): iteration i runs where i - 1 did, its condition held
// and i < M; a carried tensor is taken where it runs, the length counted
// where it appends; past the bound the length is 4, one more than the
// elements, which the runtime refuses.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<2xf32> {kiln.name = "s[0]"}, tensor<2xf32> {kiln.name = "s[1]"}, tensor<2xf32> {kiln.name = "s[2]"}, tensor<i64> {kiln.name = "s.length"}, tensor<2xf32>)
// CHECK-SAME:    kiln.composites = [{element_type = f32, first = 0 : i64, kind = "sequence", length = 3 : i64, name = "s", output, run_time_count}]
// CHECK-NOT:     kiln.loop
// CHECK:         %[[RUN0:.+]] = kiln.less(%{{.+}}, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK:         %[[A0:.+]] = kiln.and(%arg2, %[[RUN0]])
// CHECK:         %[[Y0:.+]] = kiln.add(%arg0, %arg0)
// CHECK:         %[[N1:.+]] = kiln.add(%{{.+}}, %{{.+}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[L1:.+]] = kiln.where(%[[A0]], %[[N1]], %{{.+}}) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[V1:.+]] = kiln.where(%[[A0]], %[[Y0]], %arg0) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[A1:.+]] = kiln.and(%[[A0]], %arg2)
// CHECK:         kiln.add(%[[V1]], %[[V1]])
// CHECK:         kiln.add(%{{.+}}, %{{.+}}) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[THREE:.+]] = kiln.constant dense<3> : tensor<i64>
// CHECK:         kiln.less(%[[THREE]], %arg1)
// CHECK:         %[[OVER:.+]] = kiln.and(
// CHECK:         %[[FOUR:.+]] = kiln.constant dense<4> : tensor<i64>
// CHECK:         %[[LEN:.+]] = kiln.where(%[[OVER]], %[[FOUR]], %{{.+}}) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         return %[[Y0]], %{{.+}}, %{{.+}}, %[[LEN]], %{{.+}} :
module attributes {kiln.max_sequence_loop_trips = 3 : i64} {
func.func @main(%x: tensor<2xf32>, %m: tensor<i64>, %c: tensor<i1>) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "s"}, tensor<*xf32>) {
  %e = kiln.sequence_empty() {dtype = 1 : i64} : () -> !kiln.seq<tensor<*xf32>>
  %r:2 = kiln.loop(%m, %c, %e, %x) : (tensor<i64>, tensor<i1>, !kiln.seq<tensor<*xf32>>, tensor<2xf32>) -> (!kiln.seq<tensor<*xf32>>, tensor<*xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %acc: !kiln.seq<tensor<*xf32>>, %v: tensor<2xf32>):
    %0 = kiln.add(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %1 = kiln.sequence_insert(%acc, %0) : (!kiln.seq<tensor<*xf32>>, tensor<2xf32>) -> !kiln.seq<tensor<*xf32>>
    kiln.yield %ci, %1, %0 : tensor<i1>, !kiln.seq<tensor<*xf32>>, tensor<2xf32>
  }
  return %r#0, %r#1 : !kiln.seq<tensor<*xf32>>, tensor<*xf32>
}
}

// -----

// OptionalHasElement and OptionalGetElement whose answer the graph states
// are resolved: no input (false), a plain tensor (true; the element is the
// tensor), an Optional op with its input (true; the element is that input)
// or without (false). An optional graph input stays: only a run knows.

// CHECK-LABEL: func.func @optionals
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4xf32>, %[[O:[^:]+]]: !kiln.opt<tensor<4xf32>>)
// CHECK-NOT:     kiln.optional_get_element
// CHECK:         %[[F0:.+]] = kiln.constant dense<false> : tensor<i1>
// CHECK:         %[[T1:.+]] = kiln.constant dense<true> : tensor<i1>
// CHECK:         %[[T2:.+]] = kiln.constant dense<true> : tensor<i1>
// CHECK:         %[[F3:.+]] = kiln.constant dense<false> : tensor<i1>
// CHECK:         %[[H:.+]] = kiln.optional_has_element(%[[O]])
// CHECK-NOT:     kiln.optional_get_element
// CHECK:         return %[[X]], %[[X]], %[[F0]], %[[T1]], %[[T2]], %[[F3]], %[[H]]
func.func @optionals(%x: tensor<4xf32>, %o: !kiln.opt<tensor<4xf32>>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>) {
  %g0 = kiln.optional_get_element(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %some = kiln.optional(%x) : (tensor<4xf32>) -> !kiln.opt<tensor<4xf32>>
  %none = kiln.optional() {type_ = tensor<4xf32>} : () -> !kiln.opt<tensor<4xf32>>
  %g1 = kiln.optional_get_element(%some) : (!kiln.opt<tensor<4xf32>>) -> tensor<4xf32>
  %h0 = kiln.optional_has_element() : () -> tensor<i1>
  %h1 = kiln.optional_has_element(%x) : (tensor<4xf32>) -> tensor<i1>
  %h2 = kiln.optional_has_element(%some) : (!kiln.opt<tensor<4xf32>>) -> tensor<i1>
  %h3 = kiln.optional_has_element(%none) : (!kiln.opt<tensor<4xf32>>) -> tensor<i1>
  %h4 = kiln.optional_has_element(%o) : (!kiln.opt<tensor<4xf32>>) -> tensor<i1>
  return %g0, %g1, %h0, %h1, %h2, %h3, %h4 : tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>
}

// -----

// SequenceMap over a known sequence: its body once per element, each copy
// inferred with the element's type (each Shape folds to its element's);
// a tensor operand is passed to every copy as it is.

// CHECK-LABEL: func.func @sequence_map
// CHECK-NOT:     kiln.sequence_map
// CHECK-DAG:     kiln.constant dense<3> : tensor<1xi64>
// CHECK-DAG:     kiln.constant dense<5> : tensor<1xi64>
// CHECK:         %[[A0:.+]] = kiln.add(%arg0, %arg2) : (tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>
// CHECK:         %[[A1:.+]] = kiln.add(%arg1, %arg2) : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
// CHECK-NOT:     kiln.shape
// CHECK:         return %[[A1]] : tensor<3xf32>
func.func @sequence_map(%a: tensor<5xf32>, %b: tensor<3xf32>, %t: tensor<1xf32>) -> tensor<*xf32> {
  %s = kiln.sequence_construct(%a, %b) : (tensor<5xf32>, tensor<3xf32>) -> !kiln.seq<tensor<?xf32>>
  %m:2 = kiln.sequence_map(%s, %t) : (!kiln.seq<tensor<?xf32>>, tensor<1xf32>) -> (!kiln.seq<tensor<?xf32>>, !kiln.seq<tensor<1xi64>>) {
  ^bb0(%e: tensor<?xf32>, %u: tensor<1xf32>):
    %0 = kiln.add(%e, %u) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    %1 = kiln.shape(%e) : (tensor<?xf32>) -> tensor<1xi64>
    kiln.yield %0, %1 : tensor<?xf32>, tensor<1xi64>
  }
  %c1 = kiln.constant dense<1> : tensor<i64>
  %r = kiln.sequence_at(%m#0, %c1) : (!kiln.seq<tensor<?xf32>>, tensor<i64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// An If whose branches build sequences of one length yields their
// elements; one whose branches' lengths differ keeps its sequence.

// CHECK-LABEL: func.func @if_sequences
// CHECK:         %[[IF:.+]]:2 = kiln.if(%arg0) : (tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK:           kiln.yield %{{.+}}, %{{.+}} : tensor<2xf32>, tensor<2xf32>
// CHECK:         %[[KEPT:.+]] = kiln.if(%arg0) : (tensor<i1>) -> !kiln.seq<tensor<2xf32>>
// CHECK:         return %[[IF]]#1, %[[KEPT]]
func.func @if_sequences(%c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<*xf32>, !kiln.seq<tensor<2xf32>>) {
  %s = kiln.if(%c) : (tensor<i1>) -> !kiln.seq<tensor<2xf32>> {
    %0 = kiln.neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %1 = kiln.sequence_construct(%x, %0) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
    kiln.yield %1 : !kiln.seq<tensor<2xf32>>
  } {
    %0 = kiln.abs(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %1 = kiln.sequence_construct(%0, %x) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
    kiln.yield %1 : !kiln.seq<tensor<2xf32>>
  }
  %c1 = kiln.constant dense<1> : tensor<i64>
  %r = kiln.sequence_at(%s, %c1) : (!kiln.seq<tensor<2xf32>>, tensor<i64>) -> tensor<*xf32>
  %k = kiln.if(%c) : (tensor<i1>) -> !kiln.seq<tensor<2xf32>> {
    %1 = kiln.sequence_construct(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
    kiln.yield %1 : !kiln.seq<tensor<2xf32>>
  } {
    %1 = kiln.sequence_construct(%x) : (tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
    kiln.yield %1 : !kiln.seq<tensor<2xf32>>
  }
  return %r, %k : tensor<*xf32>, !kiln.seq<tensor<2xf32>>
}

// -----

// A Loop over a known sequence with a constant trip count is unrolled;
// one whose trip count is an argument stays outside @main (whose results
// alone can carry a run-time length).

// CHECK-LABEL: func.func @loop_over_sequence
// CHECK:         %[[E0:.+]] = kiln.sigmoid(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[E1:.+]] = kiln.sigmoid(%arg1) : (tensor<6xf32>) -> tensor<6xf32>
// CHECK:         %[[L:.+]] = kiln.loop(%arg2,
// CHECK:         return %[[E1]], %[[L]]
func.func @loop_over_sequence(%a: tensor<4xf32>, %b: tensor<6xf32>, %m: tensor<i64>) -> (tensor<*xf32>, !kiln.seq<tensor<*xf32>>) {
  %s = kiln.sequence_construct(%a, %b) : (tensor<4xf32>, tensor<6xf32>) -> !kiln.seq<tensor<?xf32>>
  %n = kiln.sequence_length(%s) : (!kiln.seq<tensor<?xf32>>) -> tensor<i64>
  %t = kiln.constant dense<true> : tensor<i1>
  %e = kiln.sequence_empty() {dtype = 1 : i64} : () -> !kiln.seq<tensor<*xf32>>
  %r = kiln.loop(%n, %t, %e) : (tensor<i64>, tensor<i1>, !kiln.seq<tensor<*xf32>>) -> !kiln.seq<tensor<*xf32>> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: !kiln.seq<tensor<*xf32>>):
    %0 = kiln.sequence_at(%s, %i) : (!kiln.seq<tensor<?xf32>>, tensor<i64>) -> tensor<*xf32>
    %1 = kiln.sigmoid(%0) : (tensor<*xf32>) -> tensor<*xf32>
    %2 = kiln.sequence_insert(%acc, %1) : (!kiln.seq<tensor<*xf32>>, tensor<*xf32>) -> !kiln.seq<tensor<*xf32>>
    kiln.yield %c, %2 : tensor<i1>, !kiln.seq<tensor<*xf32>>
  }
  %c1 = kiln.constant dense<1> : tensor<i64>
  %last = kiln.sequence_at(%r, %c1) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  %kept = kiln.loop(%m, %t, %e) : (tensor<i64>, tensor<i1>, !kiln.seq<tensor<*xf32>>) -> !kiln.seq<tensor<*xf32>> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: !kiln.seq<tensor<*xf32>>):
    %2 = kiln.sequence_insert(%acc, %a) : (!kiln.seq<tensor<*xf32>>, tensor<4xf32>) -> !kiln.seq<tensor<*xf32>>
    kiln.yield %c, %2 : tensor<i1>, !kiln.seq<tensor<*xf32>>
  }
  return %last, %kept : tensor<*xf32>, !kiln.seq<tensor<*xf32>>
}

// -----

// @main's known sequence results become their elements, named NAME[i] and
// recorded in kiln.composites after the inputs' entries; a sequence whose
// elements are not known stays a sequence result.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<3xf32> {kiln.name = "ys[0]"}, tensor<2xf32> {kiln.name = "ys[1]"}, tensor<i64> {kiln.name = "n"})
// CHECK-SAME:    kiln.composites = [{element_type = f32, first = 0 : i64, kind = "sequence", length = 1 : i64, name = "xs"}, {element_type = f32, first = 0 : i64, kind = "sequence", length = 2 : i64, name = "ys", output}]
// CHECK:         return %{{.+}}, %arg0, %{{.+}} : tensor<3xf32>, tensor<2xf32>, tensor<i64>
func.func @main(%a: tensor<2xf32> {kiln.name = "xs[0]"}) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "ys"}, tensor<*xi64> {kiln.name = "n"}) attributes {kiln.composites = [{element_type = f32, first = 0 : i64, kind = "sequence", length = 1 : i64, name = "xs"}]} {
  %xs = kiln.sequence_construct(%a) : (tensor<2xf32>) -> !kiln.seq<tensor<*xf32>>
  %b = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c0 = kiln.constant dense<0> : tensor<i64>
  %ys = kiln.sequence_insert(%xs, %b, %c0) : (!kiln.seq<tensor<*xf32>>, tensor<3xf32>, tensor<i64>) -> !kiln.seq<tensor<*xf32>>
  %n = kiln.sequence_length(%ys) : (!kiln.seq<tensor<*xf32>>) -> tensor<*xi64>
  return %ys, %n : !kiln.seq<tensor<*xf32>>, tensor<*xi64>
}

// -----

// A Gather along axis 0 of a Flatten by the row-major positions of a
// broadcast of the Flatten's input (a padding mask read as
// flat[b * 3 + k], as transformers' exports write it) becomes that
// broadcast: a Reshape and an Expand, no gather.
// CHECK-LABEL: func.func @gather_as_view
// CHECK-SAME:    (%[[M:.+]]: tensor<2x3xi1>)
// CHECK-NOT:     kiln.gather
// CHECK:         %[[R:.+]] = kiln.reshape(%[[M]], %{{.+}}) : (tensor<2x3xi1>, tensor<5xi64>) -> tensor<2x1x1x3x1xi1>
// CHECK:         %[[E:.+]] = kiln.expand(%[[R]], %{{.+}}) : (tensor<2x1x1x3x1xi1>, tensor<5xi64>) -> tensor<2x1x4x3x1xi1>
// CHECK:         return %[[E]]
func.func @gather_as_view(%m: tensor<2x3xi1>) -> tensor<?x?x?x?x?xi1> {
  %f = kiln.flatten(%m) {axis = 2 : i64} : (tensor<2x3xi1>) -> tensor<?x?xi1>
  %i = kiln.constant dense<[[[[0, 1, 2], [0, 1, 2], [0, 1, 2], [0, 1, 2]]], [[[3, 4, 5], [3, 4, 5], [3, 4, 5], [3, 4, 5]]]]> : tensor<2x1x4x3xi64>
  %g = kiln.gather(%f, %i) : (tensor<?x?xi1>, tensor<2x1x4x3xi64>) -> tensor<?x?x?x?x?xi1>
  return %g : tensor<?x?x?x?x?xi1>
}

// -----

// Indices that are not such positions (the rows swapped) stay a Gather.
// CHECK-LABEL: func.func @gather_not_a_view
// CHECK:         kiln.gather
func.func @gather_not_a_view(%m: tensor<2x3xi1>) -> tensor<?x?x?xi1> {
  %f = kiln.flatten(%m) {axis = 2 : i64} : (tensor<2x3xi1>) -> tensor<?x?xi1>
  %i = kiln.constant dense<[[3, 4, 5], [0, 1, 2]]> : tensor<2x3xi64>
  %g = kiln.gather(%f, %i) : (tensor<?x?xi1>, tensor<2x3xi64>) -> tensor<?x?x?xi1>
  return %g : tensor<?x?x?xi1>
}

// -----

// CenterCropPad, AffineGrid and BitCast (opsets 18, 20 and 26, past the
// ONNX library's own shape inference): a constant `shape` sets the dims
// its axes list (the others stay), a constant `size` sets the grid's
// batch and spatial dims ([N, H, W, 2] for 2-D, [N, D, H, W, 3] for 3-D),
// and BitCast keeps the shape with the type `to` names. A `shape` or
// `size` known only at run time leaves those dims dynamic, the rank still
// known.

// CHECK-LABEL: func.func @crop_grid_bitcast
// CHECK:         kiln.center_crop_pad({{.+}}) {axes = array<i64: 1, 2>} : (tensor<3x9x5xf32>, tensor<2xi64>) -> tensor<3x6x8xf32>
// CHECK:         kiln.center_crop_pad({{.+}}) {axes = array<i64: -1>} : (tensor<3x9x5xf32>, tensor<1xi64>) -> tensor<3x9x?xf32>
// CHECK:         kiln.affine_grid({{.+}}) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x5x6x2xf32>
// CHECK:         kiln.affine_grid({{.+}}) : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x?x?x?x3xf32>
// CHECK:         kiln.bit_cast({{.+}}) {to = 12 : i64} : (tensor<3x9x5xf32>) -> tensor<3x9x5xui32>
// CHECK:         return {{.+}} : tensor<3x6x8xf32>, tensor<3x9x?xf32>, tensor<2x5x6x2xf32>, tensor<2x?x?x?x3xf32>, tensor<3x9x5xui32>
func.func @crop_grid_bitcast(%x: tensor<3x9x5xf32>, %theta: tensor<2x2x3xf32>, %theta3: tensor<2x3x4xf32>,
                             %w: tensor<1xi64>, %size3: tensor<5xi64>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xui32>) {
  %s = kiln.constant dense<[6, 8]> : tensor<2xi64>
  %size = kiln.constant dense<[2, 1, 5, 6]> : tensor<4xi64>
  %0 = kiln.center_crop_pad(%x, %s) {axes = array<i64: 1, 2>} : (tensor<3x9x5xf32>, tensor<2xi64>) -> tensor<*xf32>
  %1 = kiln.center_crop_pad(%x, %w) {axes = array<i64: -1>} : (tensor<3x9x5xf32>, tensor<1xi64>) -> tensor<*xf32>
  %2 = kiln.affine_grid(%theta, %size) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  %3 = kiln.affine_grid(%theta3, %size3) : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<*xf32>
  %4 = kiln.bit_cast(%x) {to = 12 : i64} : (tensor<3x9x5xf32>) -> tensor<*xui32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xui32>
}

// -----

// Backward: where an op that keeps its operand's shape has a static
// result (a declared graph output), its operand is given that shape, up
// the chain: ONNX's expanded ReduceL2 sums over axes that are a run-time
// input, whose result the forward pass cannot know, then Cast, Sqrt and
// CastLike into the declared [3, 1, 2].

// CHECK-LABEL: func.func @backward_unary
// CHECK:         kiln.reduce_sum{{.*}} -> tensor<3x1x2xf32>
// CHECK:         kiln.cast{{.*}} -> tensor<3x1x2xf64>
// CHECK:         kiln.sqrt{{.*}} -> tensor<3x1x2xf64>
// CHECK:         kiln.cast_like{{.*}} -> tensor<3x1x2xf32>
func.func @backward_unary(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x1x2xf32> {
  %0 = kiln.mul(%x, %x) : (tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %1 = kiln.reduce_sum(%0, %axes) {keepdims = 1 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %2 = kiln.cast(%1) {to = f64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf64>
  %3 = kiln.sqrt(%2) : (tensor<?x?x?xf64>) -> tensor<?x?x?xf64>
  %4 = kiln.cast_like(%3, %x) : (tensor<?x?x?xf64>, tensor<3x2x2xf32>) -> tensor<3x1x2xf32>
  return %4 : tensor<3x1x2xf32>
}

// -----

// Through a broadcasting op: a result dim of 1 is 1 in every operand of
// the result's rank; a dim where the other operand has 1 (or lacks the
// dim) is the result's. Where both operands are unknown at an extent over
// 1 nothing is refined (either may broadcast), and neither an argument
// nor a constant changes.

// CHECK-LABEL: func.func @backward_broadcast
// CHECK:         %[[A:.+]] = kiln.reduce_max{{.*}} -> tensor<3x1x2xf32>
// CHECK:         %[[B:.+]] = kiln.reduce_sum{{.*}} -> tensor<?x1x?xf32>
// CHECK:         %[[C:.+]] = kiln.reduce_min{{.*}} -> tensor<?x1x?xf32>
// CHECK:         kiln.add(%[[A]], %{{.+}}) : (tensor<3x1x2xf32>, tensor<1x1x1xf32>) -> tensor<3x1x2xf32>
// CHECK:         kiln.add(%[[B]], %[[C]]) : (tensor<?x1x?xf32>, tensor<?x1x?xf32>) -> tensor<3x1x2xf32>
func.func @backward_broadcast(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> (tensor<3x1x2xf32>, tensor<3x1x2xf32>) {
  %c = kiln.constant dense<1.0> : tensor<1x1x1xf32>
  %a = kiln.reduce_max(%x, %axes) {keepdims = 1 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %b = kiln.reduce_sum(%x, %axes) {keepdims = 1 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %m = kiln.reduce_min(%x, %axes) {keepdims = 1 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %0 = kiln.add(%a, %c) : (tensor<?x?x?xf32>, tensor<1x1x1xf32>) -> tensor<3x1x2xf32>
  %1 = kiln.add(%b, %m) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<3x1x2xf32>
  return %0, %1 : tensor<3x1x2xf32>, tensor<3x1x2xf32>
}

// -----

// Backward inside a Loop's body: the body's Add yields the declared [1]
// every iteration, so the Slice at run-time positions it adds (ONNX's
// test_loop11) is [1] too and lowers as a slice at run-time offsets.
// Outside the body's op, the loop's own results are left to the body.

// CHECK-LABEL: func.func @backward_loop_body
// CHECK:         kiln.loop
// CHECK:           kiln.slice{{.*}} -> tensor<1xf32>
// CHECK:           kiln.add{{.*}} : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
func.func @backward_loop_body(%m: tensor<i64>, %cond: tensor<i1>, %y: tensor<1xf32>) -> (tensor<1xf32>, tensor<5x1xf32>) {
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<i64>
  %x = kiln.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %r:2 = kiln.loop(%m, %cond, %y) : (tensor<i64>, tensor<i1>, tensor<1xf32>) -> (tensor<1xf32>, tensor<5x1xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %yin: tensor<1xf32>):
    %end = kiln.add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %s = kiln.unsqueeze(%i, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %e = kiln.unsqueeze(%end, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %slice = kiln.slice(%x, %s, %e) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    %yout = kiln.add(%yin, %slice) : (tensor<1xf32>, tensor<?xf32>) -> tensor<1xf32>
    kiln.yield %c, %yout, %yout : tensor<i1>, tensor<1xf32>, tensor<1xf32>
  }
  return %r#0, %r#1 : tensor<1xf32>, tensor<5x1xf32>
}

// -----

// Not refined: a body value whose user broadcasts it to a result dim over
// 1 that the other operand also has (it could be 1 or that extent).

// CHECK-LABEL: func.func @backward_loop_body_ambiguous
// CHECK:           kiln.slice{{.*}} -> tensor<?xf32>
func.func @backward_loop_body_ambiguous(%m: tensor<i64>, %cond: tensor<i1>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %x = kiln.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %r = kiln.loop(%m, %cond, %y) : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %yin: tensor<3xf32>):
    %s = kiln.unsqueeze(%i, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %slice = kiln.slice(%x, %zero, %s) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    %yout = kiln.add(%yin, %slice) : (tensor<3xf32>, tensor<?xf32>) -> tensor<3xf32>
    kiln.yield %c, %yout : tensor<i1>, tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

// DeformConv: Conv's window arithmetic, or the offsets' spatial dims
// where the input's are unknown.

// CHECK-LABEL: func.func @deform_conv
// CHECK:         kiln.deform_conv{{.*}} -> tensor<1x8x7x4xf32>
// CHECK:         kiln.deform_conv{{.*}} -> tensor<1x8x5x6xf32>
func.func @deform_conv(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %o: tensor<1x18x7x4xf32>, %y: tensor<1x4x?x?xf32>, %o2: tensor<1x18x5x6xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = kiln.deform_conv(%x, %w, %o, none, none) {group = 2 : i64, strides = array<i64: 1, 2>} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<1x18x7x4xf32>) -> tensor<?x?x?x?xf32>
  %1 = kiln.deform_conv(%y, %w, %o2, none, none) {group = 2 : i64} : (tensor<1x4x?x?xf32>, tensor<8x2x3x3xf32>, tensor<1x18x5x6xf32>) -> tensor<?x?x?x?xf32>
  return %0, %1 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----

// Recurrent ops get their result types from their operands whether or not
// the model declares them: the sequence and batch from X (batch first with
// layout 1), the directions from the attribute, the hidden size from R.
// DynamicQuantizeLinear gives X's shape in uint8 and scalar parameters.

// CHECK-LABEL: func.func @recurrent
// CHECK:         kiln.lstm{{.*}} -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// CHECK:         kiln.gru{{.*}} -> (none, tensor<3x1x4xf32>)
// CHECK:         kiln.rnn{{.*}} -> tensor<5x1x3x6xf32>
// CHECK:         kiln.dynamic_quantize_linear{{.*}} -> (tensor<5x3x8xui8>, tensor<f32>, tensor<ui8>)
func.func @recurrent(%x: tensor<5x3x8xf32>, %w: tensor<2x16x8xf32>, %r: tensor<2x16x4xf32>, %xb: tensor<3x5x8xf32>, %wg: tensor<1x12x8xf32>, %rg: tensor<1x12x4xf32>, %wr: tensor<1x6x8xf32>, %rr: tensor<1x6x6xf32>) -> (tensor<?x?x?x?xf32>, tensor<*xf32>, tensor<?x?x?xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xui8>) {
  %y, %yh, %yc = kiln.lstm(%x, %w, %r) {direction = "bidirectional"} : (tensor<5x3x8xf32>, tensor<2x16x8xf32>, tensor<2x16x4xf32>) -> (tensor<?x?x?x?xf32>, tensor<*xf32>, tensor<?x?x?xf32>)
  %gh = kiln.gru(%xb, %wg, %rg) {layout = 1 : i64, hidden_size = 4 : i64} : (tensor<3x5x8xf32>, tensor<1x12x8xf32>, tensor<1x12x4xf32>) -> (none, tensor<*xf32>)
  %ry = kiln.rnn(%x, %wr, %rr) {direction = "reverse"} : (tensor<5x3x8xf32>, tensor<1x6x8xf32>, tensor<1x6x6xf32>) -> (tensor<*xf32>, none)
  %q, %s, %z = kiln.dynamic_quantize_linear(%x) : (tensor<5x3x8xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>)
  return %y, %yh, %yc, %gh, %ry, %q : tensor<?x?x?x?xf32>, tensor<*xf32>, tensor<?x?x?xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xui8>
}

// -----

// Einsum's result follows its equation: explicit, implicit (the labels
// used once, in order) and with an ellipsis broadcast across the inputs.
// The integer and quantized products and convolutions follow MatMul's and
// Conv's shapes with their own element types.

// CHECK-LABEL: func.func @einsum_and_integer
// CHECK:         kiln.einsum{{.*}} -> tensor<2x3x5xf32>
// CHECK:         kiln.einsum{{.*}} -> tensor<3x5xf32>
// CHECK:         kiln.einsum{{.*}} -> tensor<7x3x5xf32>
// CHECK:         kiln.matmul_integer{{.*}} -> tensor<4x6xi32>
// CHECK:         kiln.conv_integer{{.*}} -> tensor<1x4x6x6xi32>
func.func @einsum_and_integer(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4xf32>, %n: tensor<4x5xf32>, %e: tensor<7x3x4xf32>, %qa: tensor<4x8xui8>, %qb: tensor<8x6xi8>, %qx: tensor<1x2x8x8xui8>, %qw: tensor<4x1x3x3xi8>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi32>, tensor<*xi32>) {
  %0 = kiln.einsum(%a, %b) {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<*xf32>
  %1 = kiln.einsum(%m, %n) {equation = "ij,jk"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  %2 = kiln.einsum(%e, %n) {equation = "...ij, ...jk -> ...ik"} : (tensor<7x3x4xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  %3 = kiln.matmul_integer(%qa, %qb) : (tensor<4x8xui8>, tensor<8x6xi8>) -> tensor<*xi32>
  %4 = kiln.conv_integer(%qx, %qw) {group = 2 : i64} : (tensor<1x2x8x8xui8>, tensor<4x1x3x3xi8>) -> tensor<*xi32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi32>, tensor<*xi32>
}

// -----

// Pads computed from a constant table as PyTorch's exporter writes
// F.pad(mode="reflect"): reshape to pairs, reverse with a Slice of step -1,
// transpose, flatten. The chain is evaluated as it is inferred, so the Pad
// gets static pads and a static result.

// CHECK-LABEL: func.func @computed_pads
// CHECK-NOT:     kiln.slice
// CHECK-NOT:     kiln.transpose
// CHECK:         kiln.pad{{.*}} -> tensor<1x3x10x12xf32>
func.func @computed_pads(%x: tensor<1x3x8x8xf32>) -> tensor<?x?x?x?xf32> {
  %p = kiln.constant dense<[2, 2, 1, 1, 0, 0, 0, 0]> : tensor<8xi64>
  %s = kiln.constant dense<[-1, 2]> : tensor<2xi64>
  %r = kiln.reshape(%p, %s) : (tensor<8xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %st = kiln.constant dense<-1> : tensor<1xi64>
  %en = kiln.constant dense<-9223372036854775807> : tensor<1xi64>
  %ax = kiln.constant dense<0> : tensor<1xi64>
  %sp = kiln.constant dense<-1> : tensor<1xi64>
  %rev = kiln.slice(%r, %st, %en, %ax, %sp) : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
  %t = kiln.transpose(%rev) {perm = array<i64: 1, 0>} : (tensor<?x?xi64>) -> tensor<?x?xi64>
  %m1 = kiln.constant dense<-1> : tensor<1xi64>
  %flat = kiln.reshape(%t, %m1) : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %y = kiln.pad(%x, %flat) {mode = "reflect"} : (tensor<1x3x8x8xf32>, tensor<?xi64>) -> tensor<?x?x?x?xf32>
  return %y : tensor<?x?x?x?xf32>
}
