// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// If: scf.if on the condition's element; each branch's lowered ops move
// into the scf.if's region and its kiln.yield becomes an scf.yield. The
// branches use values from outside (%x).

// CHECK-LABEL: func.func @if
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf32>, %[[C:.+]]: tensor<i1>)
// CHECK:         %[[B:.+]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK:         %[[R:.+]] = scf.if %[[B]] -> (tensor<2x3xf32>) {
// CHECK:           %[[T:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<2x3xf32>)
// CHECK:             math.tanh
// CHECK:           scf.yield %[[T]] : tensor<2x3xf32>
// CHECK:         } else {
// CHECK:           %[[E:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[X]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:             arith.addf
// CHECK:           scf.yield %[[E]] : tensor<2x3xf32>
// CHECK:         }
// CHECK:         return %[[R]]
// CHECK-NOT:     kiln.
func.func @if(%x: tensor<2x3xf32>, %c: tensor<i1>) -> tensor<2x3xf32> {
  %0 = kiln.if(%c) : (tensor<i1>) -> tensor<2x3xf32> {
    %1 = kiln.tanh(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    kiln.yield %1 : tensor<2x3xf32>
  } {
    %1 = kiln.add(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    kiln.yield %1 : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// Loop with a condition the body computes: scf.while carrying the state
// (a copy of the input, updated in place by a linalg.copy), the iteration
// count and the condition; the body's iteration_num and cond arguments
// are tensors rebuilt from them. It stops at M or when the condition is
// false.

// CHECK-LABEL: func.func @while
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf32>, %[[L:.+]]: tensor<i64>)
// CHECK-DAG:     %[[M:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK-DAG:     %[[C0:.+]] = tensor.extract %{{.+}}[] : tensor<i1>
// CHECK:         %[[INIT:.+]] = linalg.copy ins(%[[X]] : tensor<2x3xf32>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK:         %[[W:.+]]:3 = scf.while (%[[V:.+]] = %[[INIT]], %[[I:.+]] = %{{.+}}, %[[C:.+]] = %[[C0]]) : (tensor<2x3xf32>, i64, i1) -> (tensor<2x3xf32>, i64, i1) {
// CHECK:           %[[LT:.+]] = arith.cmpi slt, %[[I]], %[[M]] : i64
// CHECK:           %[[GO:.+]] = arith.andi %[[C]], %[[LT]] : i1
// CHECK:           scf.condition(%[[GO]]) %[[V]], %[[I]], %[[C]]
// CHECK:         } do {
// CHECK:         ^bb0(%[[V2:.+]]: tensor<2x3xf32>, %[[I2:.+]]: i64, %[[C2:.+]]: i1):
// CHECK:           %[[IT:.+]] = tensor.from_elements %[[I2]] : tensor<i64>
// CHECK:           %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[V2]], %[[V2]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:           %[[LESS:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[L]] : tensor<i64>, tensor<i64>)
// CHECK:           %[[NEXT:.+]] = linalg.copy ins(%[[SUM]] : tensor<2x3xf32>) outs(%[[V2]] : tensor<2x3xf32>)
// CHECK:           %[[I3:.+]] = arith.addi %[[I2]], %{{.+}} : i64
// CHECK:           %[[C3:.+]] = tensor.extract %[[LESS]][] : tensor<i1>
// CHECK:           scf.yield %[[NEXT]], %[[I3]], %[[C3]]
// CHECK:         return %[[W]]#0
func.func @while(%x: tensor<2x3xf32>, %limit: tensor<i64>) -> tensor<2x3xf32> {
  %m = kiln.constant dense<10> : tensor<i64>
  %t = kiln.constant dense<true> : tensor<i1>
  %0 = kiln.loop(%m, %t, %x) : (tensor<i64>, tensor<i1>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2x3xf32>):
    %1 = kiln.add(%v, %v) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %2 = kiln.add(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %3 = kiln.less(%2, %limit) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    kiln.yield %3, %1 : tensor<i1>, tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// Loop without a condition operand (a for loop: the body's condition is
// ignored) and a scan output: an accumulator [M, ...] (zeros) carried by
// the loop, each iteration's slice inserted at its row; the loop stops
// after as many iterations as the accumulator has rows.

// CHECK-LABEL: func.func @for_scan
// CHECK:         %[[ACC0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK:         scf.while (%{{.+}} = %{{.+}}, %[[ACC:.+]] = %[[ACC0]], %[[I:.+]] = %{{.+}}, %[[C:.+]] = %true)
// CHECK:           arith.cmpi slt, %[[I]], %c4_i64
// CHECK:         } do {
// CHECK:         ^bb0(%{{.+}}: tensor<3xf32>, %[[ACC2:.+]]: tensor<4x3xf32>, %[[I2:.+]]: i64, %[[C2:.+]]: i1):
// CHECK:           %[[ROW:.+]] = arith.index_cast %[[I2]] : i64 to index
// CHECK:           %[[INS:.+]] = tensor.insert_slice %{{.+}} into %[[ACC2]][%[[ROW]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK:           scf.yield %{{.+}}, %[[INS]], %{{.+}}, %[[C2]]
func.func @for_scan(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %m = kiln.constant dense<4> : tensor<i64>
  %0:2 = kiln.loop(%m, none, %x) : (tensor<i64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %1 = kiln.sigmoid(%v) : (tensor<3xf32>) -> tensor<3xf32>
    kiln.yield %c, %1, %1 : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<4x3xf32>
}

// -----

// Scan: scf.for over the scan length; the scan inputs' slices taken along
// their axes (axis 1 reversed: row 5 - i), the state updated in place, the
// scan outputs' slices inserted (axis 1 reversed), and last the new state
// copied into the loop's.

// CHECK-LABEL: func.func @scan
// CHECK-SAME:    (%[[S0:.+]]: tensor<4xf32>, %[[X:.+]]: tensor<6x4xf32>, %[[Y:.+]]: tensor<4x6xf32>)
// CHECK:         %[[INIT:.+]] = linalg.copy ins(%[[S0]] : tensor<4xf32>)
// CHECK:         %[[R:.+]]:3 = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[S:.+]] = %[[INIT]], %[[O:.+]] = %{{.+}}, %[[D:.+]] = %{{.+}}) -> (tensor<4xf32>, tensor<6x4xf32>, tensor<4x6xf32>)
// CHECK:           %[[REV:.+]] = arith.subi %{{.+}}, %[[I]] : index
// CHECK:           %[[XT:.+]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<4xf32>
// CHECK:           %[[YT:.+]] = tensor.extract_slice %[[Y]][0, %[[REV]]] [4, 1] [1, 1] : tensor<4x6xf32> to tensor<4xf32>
// CHECK:           %[[P:.+]] = linalg.generic {{.+}} ins(%[[XT]], %[[YT]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:           %[[S2:.+]] = linalg.generic {{.+}} ins(%[[S]], %[[P]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:           %[[O2:.+]] = tensor.insert_slice %[[S2]] into %[[O]][%[[I]], 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<6x4xf32>
// CHECK:           %[[D2:.+]] = tensor.insert_slice %{{.+}} into %[[D]][0, %[[REV]]] [4, 1] [1, 1] : tensor<4xf32> into tensor<4x6xf32>
// CHECK:           %[[NEXT:.+]] = linalg.copy ins(%[[S2]] : tensor<4xf32>) outs(%[[S]] : tensor<4xf32>)
// CHECK:           scf.yield %[[NEXT]], %[[O2]], %[[D2]]
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @scan(%s0: tensor<4xf32>, %x: tensor<6x4xf32>, %y: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<6x4xf32>, tensor<4x6xf32>) {
  %0:3 = kiln.scan(%s0, %x, %y) {num_scan_inputs = 2 : i64, scan_input_axes = array<i64: 0, 1>, scan_input_directions = array<i64: 0, 1>, scan_output_axes = array<i64: 0, 1>, scan_output_directions = array<i64: 0, 1>} : (tensor<4xf32>, tensor<6x4xf32>, tensor<4x6xf32>) -> (tensor<4xf32>, tensor<6x4xf32>, tensor<4x6xf32>) {
  ^bb0(%s: tensor<4xf32>, %xt: tensor<4xf32>, %yt: tensor<4xf32>):
    %1 = kiln.mul(%xt, %yt) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = kiln.add(%s, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = kiln.sub(%xt, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %2, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<6x4xf32>, tensor<4x6xf32>
}
