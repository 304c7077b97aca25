// RUN: kiln-opt %s -split-input-file -kiln-cpu-amx-tiles -verify-diagnostics | FileCheck %s

// Marked products not in AMX's layouts are left to their scalar loops,
// unmarked, with a warning: y's k quads 128 bytes apart (a tile row is 64
// contiguous bytes); a body that is not out + ext(x) * ext(y); 24 rows,
// not a whole number of tiles; 8 k quads, not a whole step of 64 bytes.

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @strided_y
// CHECK:         linalg.generic
// CHECK-NOT:     kiln.amx_tiles
// CHECK-NOT:     amx.
func.func @strided_y(%x: memref<16x16x4xi8>, %y: memref<1x16x16x4xi8, strided<[2048, 128, 4, 1]>>, %c: memref<16x16xi32>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xi8>, memref<1x16x16x4xi8, strided<[2048, 128, 4, 1]>>) outs(%c : memref<16x16xi32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.muli %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}

// CHECK-LABEL: func.func @not_a_product
// CHECK:         linalg.generic
// CHECK-NOT:     amx.
func.func @not_a_product(%x: memref<16x16x4xi8>, %y: memref<1x16x16x4xi8>, %c: memref<16x16xi32>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xi8>, memref<1x16x16x4xi8>) outs(%c : memref<16x16xi32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.subi %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}

// CHECK-LABEL: func.func @partial_rows
// CHECK:         linalg.generic
// CHECK-NOT:     amx.
func.func @partial_rows(%x: memref<24x16x4xi8>, %y: memref<1x16x16x4xi8>, %c: memref<24x16xi32>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<24x16x4xi8>, memref<1x16x16x4xi8>) outs(%c : memref<24x16xi32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.muli %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}

// CHECK-LABEL: func.func @partial_k
// CHECK:         linalg.generic
// CHECK-NOT:     amx.
func.func @partial_k(%x: memref<16x8x4xi8>, %y: memref<1x8x16x4xi8>, %c: memref<16x16xi32>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x8x4xi8>, memref<1x8x16x4xi8>) outs(%c : memref<16x16xi32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.muli %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// bf16 in the int8 layout (groups of four k, not AMX-BF16's pairs), and
// bf16 summed in bf16: left alone.

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @bf16_quads
// CHECK-NOT:     amx.
// CHECK-LABEL: func.func @bf16_sums
// CHECK-NOT:     amx.
func.func @bf16_quads(%x: memref<16x16x4xbf16>, %y: memref<1x16x16x4xbf16>, %c: memref<16x16xf32>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xbf16>, memref<1x16x16x4xbf16>) outs(%c : memref<16x16xf32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
func.func @bf16_sums(%x: memref<16x16x2xbf16>, %y: memref<1x16x16x2xbf16>, %c: memref<16x16xbf16>) {
  // expected-warning @+1 {{not in the layout of AMX tile products; left to scalar loops}}
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x2xbf16>, memref<1x16x16x2xbf16>) outs(%c : memref<16x16xbf16>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %m = arith.mulf %a, %b : bf16
    %s = arith.addf %o, %m : bf16
    linalg.yield %s : bf16
  }
  return
}
