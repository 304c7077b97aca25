// RUN: kiln-opt %s -split-input-file -kiln-cpu-amx-tiles | FileCheck %s

// A marked tile product over memrefs: 48 rows and 48 columns (a pair of
// 16-row tiles and a single one each way), 32 k quads (two steps of 64
// bytes). Each block of accumulator tiles is loaded from c, carried through
// the loop over k as !llvm.x86_amx values and stored back; per step, one
// tile of x per row of tiles and one of y per column, one product per
// accumulator: signed x by unsigned y is tdpbsud (zext on the right).

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @tiles
// CHECK-SAME:    %[[X:[^:]+]]: memref<48x32x4xi8>, %[[Y:[^:]+]]: memref<3x32x16x4xi8>, %[[C:[^:]+]]: memref<48x48xi32>
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %c32
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %c32
// CHECK-COUNT-4:     amx.tile_load %[[C]][%{{.+}}, %{{.+}}], %{{.+}} : memref<48x48xi32> into !amx.tile<16x16xi32>
// CHECK:             %[[K:.+]]:4 = scf.for %[[KQ:.+]] = %{{.+}} to %c32{{.*}} step %c16{{.*}} iter_args({{.+}}) -> (!llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx)
// CHECK-COUNT-2:       amx.tile_load %[[X]][%{{.+}}, %[[KQ]], %{{.+}}], %c128{{.*}} : memref<48x32x4xi8> into !amx.tile<16x64xi8>
// CHECK-COUNT-2:       amx.tile_load %[[Y]][%{{.+}}, %[[KQ]], %{{.+}}, %{{.+}}], %c64{{.*}} : memref<3x32x16x4xi8> into !amx.tile<16x64xi8>
// CHECK-COUNT-4:       amx.tile_muli %{{.+}}, %{{.+}} zext, %{{.+}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK:               scf.yield {{.+}} : !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx
// CHECK-COUNT-4:     amx.tile_store %[[C]]
// A single column tile where 16 columns are left, then the single row of
// tiles in the same way.
// CHECK:           scf.if
// CHECK-COUNT-2:     amx.tile_load %[[C]]
// CHECK-NOT:         amx.tile_load %[[C]]
// CHECK:         scf.if
// CHECK-NOT:     linalg.generic
func.func @tiles(%x: memref<48x32x4xi8>, %y: memref<3x32x16x4xi8>, %c: memref<48x48xi32>) {
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<48x32x4xi8>, memref<3x32x16x4xi8>) outs(%c : memref<48x48xi32>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extui %b : i8 to i32
    %m = arith.muli %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A block of a larger product (subviews with a dynamic offset and rows,
// the outer strides read from the type): unsigned x by signed y is
// tdpbusd (zext on the left), both signed tdpbssd (no zext).

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @blocks
// CHECK:         amx.tile_load %{{.+}}, %c64{{.*}} : memref<?x64xi32, strided<[64, 1], offset: ?>> into !amx.tile<16x16xi32>
// CHECK:         amx.tile_muli %{{.+}} zext, %{{[^ ]+}}, %{{[^ ]+}} :
// CHECK-LABEL: func.func @signed
// CHECK:         amx.tile_muli %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} :
func.func @blocks(%x: memref<128x16x4xi8>, %y: memref<4x16x16x4xi8>, %c: memref<128x64xi32>, %i: index, %r: index) {
  %xs = memref.subview %x[%i, 0, 0] [%r, 16, 4] [1, 1, 1] : memref<128x16x4xi8> to memref<?x16x4xi8, strided<[64, 4, 1], offset: ?>>
  %cs = memref.subview %c[%i, 0] [%r, 64] [1, 1] : memref<128x64xi32> to memref<?x64xi32, strided<[64, 1], offset: ?>>
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%xs, %y : memref<?x16x4xi8, strided<[64, 4, 1], offset: ?>>, memref<4x16x16x4xi8>) outs(%cs : memref<?x64xi32, strided<[64, 1], offset: ?>>)
      attrs = {kiln.amx_tiles} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %ae = arith.extui %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.muli %ae, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }
  return
}
func.func @signed(%x: memref<16x16x4xi8>, %y: memref<1x16x16x4xi8>, %c: memref<16x16xi32>) {
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xi8>, memref<1x16x16x4xi8>) outs(%c : memref<16x16xi32>)
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

// c filled with zeros before the product (a view of y between): the
// accumulators start as zero tiles and the fill goes. A fill with another
// value stays, and the tiles load c.

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT:     linalg.fill
// CHECK:         amx.tile_zero : !amx.tile<16x16xi32>
// CHECK-NOT:     amx.tile_load %{{.+}} : memref<16x16xi32>
// CHECK:         amx.tile_store
// CHECK-LABEL: func.func @other_fill
// CHECK:         linalg.fill
// CHECK-NOT:     amx.tile_zero
// CHECK:         amx.tile_load %{{.+}} : memref<16x16xi32> into !amx.tile<16x16xi32>
func.func @zero_fill(%x: memref<16x16x4xi8>, %y: memref<2x16x16x4xi8>, %c: memref<16x16xi32>) {
  %z = arith.constant 0 : i32
  linalg.fill ins(%z : i32) outs(%c : memref<16x16xi32>)
  %v = memref.subview %y[1, 0, 0, 0] [1, 16, 16, 4] [1, 1, 1, 1] : memref<2x16x16x4xi8> to memref<1x16x16x4xi8, strided<[1024, 64, 4, 1], offset: 1024>>
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %v : memref<16x16x4xi8>, memref<1x16x16x4xi8, strided<[1024, 64, 4, 1], offset: 1024>>) outs(%c : memref<16x16xi32>)
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
func.func @other_fill(%x: memref<16x16x4xi8>, %y: memref<1x16x16x4xi8>, %c: memref<16x16xi32>) {
  %z = arith.constant 7 : i32
  linalg.fill ins(%z : i32) outs(%c : memref<16x16xi32>)
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xi8>, memref<1x16x16x4xi8>) outs(%c : memref<16x16xi32>)
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

// A fill of c with zeros, then a store to c before the product: the fill
// stays and the tiles load c.

// CHECK-LABEL: func.func @fill_then_store
// CHECK:         linalg.fill
// CHECK:         memref.store
// CHECK-NOT:     amx.tile_zero
// CHECK:         amx.tile_load %{{.+}} : memref<16x16xi32> into !amx.tile<16x16xi32>
func.func @fill_then_store(%x: memref<16x16x4xi8>, %y: memref<1x16x16x4xi8>, %c: memref<16x16xi32>) {
  %z = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %i = arith.constant 3 : index
  linalg.fill ins(%z : i32) outs(%c : memref<16x16xi32>)
  memref.store %one, %c[%i, %i] : memref<16x16xi32>
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<16x16x4xi8>, memref<1x16x16x4xi8>) outs(%c : memref<16x16xi32>)
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

// A bf16 product summed in f32 (kiln-cpu-amx-bf16's): x [32, 32, 2] and
// y [2, 32, 16, 2] are 32 pairs of k (two steps of 16 pairs, 64 bytes per
// tile row), after a zero fill of c: the accumulators start as zero tiles
// (the fill goes), each product is tdpbf16ps (amx.tile_mulf) on tiles of
// 16 x 32 bf16, y's tile rows 32 elements apart.

#x = affine_map<(i, j, kq, kr) -> (i, kq, kr)>
#y = affine_map<(i, j, kq, kr) -> (j floordiv 16, kq, j mod 16, kr)>
#c = affine_map<(i, j, kq, kr) -> (i, j)>

// CHECK-LABEL: func.func @bf16
// CHECK-SAME:    %[[X:[^:]+]]: memref<32x32x2xbf16>, %[[Y:[^:]+]]: memref<2x32x16x2xbf16>, %[[C:[^:]+]]: memref<32x32xf32>
// CHECK-NOT:     linalg.fill
// CHECK-COUNT-4: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK:         scf.for %[[KQ:.+]] = %{{.+}} to %c32{{.*}} step %c16{{.*}} iter_args({{.+}}) -> (!llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx)
// CHECK-COUNT-2:   amx.tile_load %[[X]][%{{.+}}, %[[KQ]], %{{.+}}], %c64{{.*}} : memref<32x32x2xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-2:   amx.tile_load %[[Y]][%{{.+}}, %[[KQ]], %{{.+}}, %{{.+}}], %c32{{.*}} : memref<2x32x16x2xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-4:   amx.tile_mulf %{{.+}}, %{{.+}}, %{{.+}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-NOT:       amx.tile_muli
// CHECK-COUNT-4: amx.tile_store %[[C]]
// CHECK-NOT:     linalg.generic
func.func @bf16(%x: memref<32x32x2xbf16>, %y: memref<2x32x16x2xbf16>, %c: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#x, #y, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %y : memref<32x32x2xbf16>, memref<2x32x16x2xbf16>) outs(%c : memref<32x32xf32>)
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
