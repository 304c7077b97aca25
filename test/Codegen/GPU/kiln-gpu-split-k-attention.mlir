// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-gpu-split-k)' | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-gpu-split-k{keep-attention=true})' | FileCheck %s --check-prefix=KEEP

// An attention's context: softmax probabilities (divided by a row sum,
// rounded to f16) times V, one 64x64 output tile and 1024 keys. Split by
// default; with keep-attention (what kiln-gpu-flash-attention needs whole)
// it stays one product. The other product, of a plain input, is split
// either way.
// SPLIT-LABEL: func.func @context
// SPLIT: tensor.expand_shape {{.*}} tensor<64x1024xf16> into tensor<64x{{[0-9]+}}x{{[0-9]+}}xf16>
// KEEP-LABEL: func.func @context
// KEEP-NOT: tensor.expand_shape {{.*}} tensor<64x1024xf16>
// KEEP: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x1024xf16>, tensor<1024x64xf16>)
// KEEP: tensor.expand_shape {{.*}} tensor<64x1024xf16> into
// KEEP: return
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, k) -> (m, k)>
#row = affine_map<(m, k) -> (m)>
func.func @context(%e: tensor<64x1024xf32>, %v: tensor<1024x64xf16>, %x: tensor<64x1024xf16>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<64xf32>
  %rows0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<64x1024xf32>) outs(%rows0 : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %pe = tensor.empty() : tensor<64x1024xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<64x1024xf32>, tensor<64xf32>) outs(%pe : tensor<64x1024xf16>) {
  ^bb0(%a: f32, %s: f32, %o: f16):
    %d = arith.divf %a, %s : f32
    %t = arith.truncf %d : f32 to f16
    linalg.yield %t : f16
  } -> tensor<64x1024xf16>
  %oe = tensor.empty() : tensor<64x64xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%oe : tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<64x1024xf16>, tensor<1024x64xf16>) outs(%o0 : tensor<64x64xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %v : tensor<64x1024xf16>, tensor<1024x64xf16>) outs(%o0 : tensor<64x64xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %o, %y : tensor<64x64xf32>, tensor<64x64xf32>
}
