//===- AmxTiles.cpp - 8-bit tile products on AMX's tile multiply ----------===//
//
// After bufferization, the tile products that kiln-cpu-int8-gemm{amx} and
// kiln-cpu-amx-bf16 mark `kiln.amx_tiles`,
//
//   c[i, j] += ext(x[i, kq, kr]) * ext(y[j floordiv 16, kq, j mod 16, kr])
//
// on memrefs x [R, KG, G] and y [J, KG, 16, G] and c [R, C] -- bytes in
// groups of G = 4 summed in int32, or bf16 in pairs (G = 2) summed in f32
// -- are AMX's own layouts: a tile of x is 16 of its rows by 64 bytes (16
// groups of k), a tile of y 16 groups of k by 16 columns of 4 bytes, and
// tdpb[su][su]d (tdpbf16ps) multiplies the two into a 16 x 16 int32 (f32)
// tile. Each product
// becomes loops over blocks of 2 x 2 accumulator tiles (then 2 x 1, 1 x 2
// and 1 x 1 at the ends of c), loaded from c (or zero tiles where c was
// just filled with zeros: the fill goes), kept in tile registers across k
// and stored back.
//
// Every tile has the full 16 x 64-byte shape: R, C and KG are multiples of
// 16 (the mark's promise where R or C is dynamic; kiln-cpu-int8-gemm pads
// the operands). LLVM's tile register allocation runs out of registers, or
// spills, once a function mixes shapes: 8 tiles of one shape are live in
// each block, its 8 registers.
//
// The AMX ops stay for upstream's convert-vector-to-llvm{enable-amx}, which
// runs after convert-scf-to-cf: a branch argument of tile type is one it
// cannot convert, so the k loop carries its accumulators as !llvm.x86_amx
// values, cast to and from tiles at its boundaries
// (reconcile-unrealized-casts removes the casts).
//
//===----------------------------------------------------------------------===//

#include "Epilogue.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "kiln-cpu-amx-tiles"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUAMXTILES
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

using kiln::cpu::kAmxTile;

/// A marked product whose operands have the form above.
struct Product {
  Value x, y, c;
  bool xSigned = true, ySigned = true;
  bool isFloat = false; // bf16 pairs into f32, else bytes into int32
  int64_t group = 4;    // k per 32-bit lane of a tile row
  int64_t kg = 0;       // groups of k, a multiple of 16
  /// The fill of c with zeros before the product, when there is one:
  /// the accumulators then start as zero tiles instead of loads of c.
  linalg::FillOp zeroFill;
};

/// Whether `t` has the static shape `inner` in its last dims, is laid out
/// with unit stride innermost and rows of the given strides, and its
/// outermost stride is static or dynamic (read at run time).
bool innerLayout(MemRefType t, ArrayRef<int64_t> inner,
                 ArrayRef<int64_t> innerStrides) {
  if (t.getRank() != (int64_t)inner.size() + 1)
    return false;
  for (auto [i, size] : llvm::enumerate(inner))
    if (t.getDimSize(i + 1) != size)
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)))
    return false;
  for (auto [i, stride] : llvm::enumerate(innerStrides))
    if (strides[i + 1] != stride)
      return false;
  return true;
}

std::optional<Product> match(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  Product p;
  p.x = op.getDpsInputs()[0];
  p.y = op.getDpsInputs()[1];
  p.c = op.getDpsInits()[0];
  auto xt = dyn_cast<MemRefType>(p.x.getType());
  auto yt = dyn_cast<MemRefType>(p.y.getType());
  auto ct = dyn_cast<MemRefType>(p.c.getType());
  if (!xt || !yt || !ct || xt.getElementType() != yt.getElementType())
    return std::nullopt;
  Type elt = xt.getElementType(), acc = ct.getElementType();
  p.isFloat = elt.isBF16() && acc.isF32();
  if (!p.isFloat && !(elt.isInteger(8) && acc.isInteger(32)))
    return std::nullopt;
  p.group = p.isFloat ? 2 : 4;
  p.kg = xt.getRank() == 3 ? xt.getDimSize(1) : 0;
  int64_t g = p.group;
  if (p.kg <= 0 || ShapedType::isDynamic(p.kg) || p.kg % kAmxTile != 0 ||
      !innerLayout(xt, {p.kg, g}, {g, 1}) ||
      !innerLayout(yt, {p.kg, kAmxTile, g}, {kAmxTile * g, g, 1}) ||
      !innerLayout(ct, {ct.getRank() == 2 ? ct.getDimSize(1) : 0}, {1}))
    return std::nullopt;

  if (op.getIndexingMapsArray() != kiln::cpu::amxTileMaps(op.getContext()) ||
      op.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{
              utils::IteratorType::parallel, utils::IteratorType::parallel,
              utils::IteratorType::reduction, utils::IteratorType::reduction})
    return std::nullopt;
  // y's panels cover c's columns (else the tiles would read past y).
  if (!ShapedType::isDynamic(yt.getDimSize(0)) &&
      !ShapedType::isDynamic(ct.getDimSize(1)) &&
      yt.getDimSize(0) * kAmxTile < ct.getDimSize(1))
    return std::nullopt;
  // yield(out + ext(x) * ext(y)): extf for bf16, so both sides signed.
  if (!kiln::cpu::isExtendedProductBody(op.getRegion().front(), p.xSigned,
                                        p.ySigned) ||
      (p.isFloat && !(p.xSigned && p.ySigned)))
    return std::nullopt;
  // Whole tiles: static rows and columns multiples of 16, as the mark
  // promises for dynamic ones.
  for (int64_t size : {ct.getDimSize(0), ct.getDimSize(1), xt.getDimSize(0)})
    if (!ShapedType::isDynamic(size) && size % kAmxTile != 0)
      return std::nullopt;
  // A fill of c with zeros before, with nothing between that touches
  // memory (views of the operands): the tiles start at zero.
  Operation *prev = op->getPrevNode();
  while (prev && !isa<linalg::FillOp>(prev) && isMemoryEffectFree(prev))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev))
    if (fill.getOutputs()[0] == p.c &&
        (matchPattern(fill.getInputs()[0], m_Zero()) ||
         matchPattern(fill.getInputs()[0], m_PosZeroFloat())))
      p.zeroFill = fill;
  return p;
}

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The outermost stride of memref `v`, as an index.
Value outerStride(OpBuilder &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)t.getStridesAndOffset(strides, offset);
  if (!ShapedType::isDynamic(strides[0]))
    return idx(b, loc, strides[0]);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
  return meta.getStrides()[0];
}

/// Emits the tile loops of one product.
struct Emitter {
  const Product &p;
  Location loc;
  Value xStride, cStride;

  /// One block of rows x cols accumulator tiles at (i0, j0), loaded from
  /// c, summed over every k and stored back.
  void block(OpBuilder &b, Value i0, Value j0, int64_t rows, int64_t cols) {
    Type elt = cast<MemRefType>(p.x.getType()).getElementType();
    Type accElt = cast<MemRefType>(p.c.getType()).getElementType();
    MLIRContext *ctx = b.getContext();
    auto amxType = LLVM::LLVMX86AMXType::get(ctx);
    AffineExpr e0 = getAffineDimExpr(0, ctx);
    SmallVector<Value> rowAt, colAt, panelAt;
    for (int64_t r = 0; r < rows; ++r)
      rowAt.push_back(
          affine::AffineApplyOp::create(b, loc, e0 + r * kAmxTile, i0));
    for (int64_t q = 0; q < cols; ++q) {
      colAt.push_back(
          affine::AffineApplyOp::create(b, loc, e0 + q * kAmxTile, j0));
      panelAt.push_back(
          affine::AffineApplyOp::create(b, loc, e0.floorDiv(kAmxTile) + q, j0));
    }
    auto accType = amx::TileType::get({kAmxTile, kAmxTile}, accElt);
    auto tileType = amx::TileType::get({kAmxTile, kAmxTile * p.group}, elt);
    auto toAmx = [&](OpBuilder &nb, Value tile) {
      return UnrealizedConversionCastOp::create(nb, loc, TypeRange{amxType},
                                                ValueRange{tile})
          .getResult(0);
    };
    auto fromAmx = [&](OpBuilder &nb, Value v, Type type) {
      return UnrealizedConversionCastOp::create(nb, loc, TypeRange{type},
                                                ValueRange{v})
          .getResult(0);
    };
    SmallVector<Value> accs;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q)
        accs.push_back(
            p.zeroFill ? amx::TileZeroOp::create(b, loc, accType).getResult()
                       : amx::TileLoadOp::create(b, loc, accType, p.c,
                                                 ValueRange{rowAt[r], colAt[q]},
                                                 cStride)
                             .getResult());
    Value zero = idx(b, loc, 0), yStride = idx(b, loc, kAmxTile * p.group);
    // One step of 16 groups of k from kq0: the tiles of x and y, one
    // product per accumulator.
    auto step = [&](OpBuilder &nb, Value kq0, SmallVector<Value> &tiles) {
      SmallVector<Value> xs, ys;
      for (int64_t r = 0; r < rows; ++r)
        xs.push_back(amx::TileLoadOp::create(
            nb, loc, tileType, p.x, ValueRange{rowAt[r], kq0, zero}, xStride));
      for (int64_t q = 0; q < cols; ++q)
        ys.push_back(amx::TileLoadOp::create(
            nb, loc, tileType, p.y, ValueRange{panelAt[q], kq0, zero, zero},
            yStride));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t q = 0; q < cols; ++q) {
          Value &t = tiles[r * cols + q];
          if (p.isFloat) {
            t = amx::TileMulFOp::create(nb, loc, t.getType(), xs[r], ys[q], t);
            continue;
          }
          auto mul =
              amx::TileMulIOp::create(nb, loc, t.getType(), xs[r], ys[q], t);
          mul.setIsZextLhs(!p.xSigned);
          mul.setIsZextRhs(!p.ySigned);
          t = mul.getResult();
        }
    };
    SmallVector<Value> init;
    for (Value t : accs)
      init.push_back(toAmx(b, t));
    auto loop = scf::ForOp::create(
        b, loc, zero, idx(b, loc, p.kg), idx(b, loc, kAmxTile), init,
        [&](OpBuilder &nb, Location, Value kq0, ValueRange carried) {
          SmallVector<Value> tiles;
          for (auto [i, v] : llvm::enumerate(carried))
            tiles.push_back(fromAmx(nb, v, accs[i].getType()));
          step(nb, kq0, tiles);
          SmallVector<Value> out;
          for (Value t : tiles)
            out.push_back(toAmx(nb, t));
          scf::YieldOp::create(nb, loc, out);
        });
    for (auto [i, v] : llvm::enumerate(loop.getResults()))
      accs[i] = fromAmx(b, v, accs[i].getType());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q)
        amx::TileStoreOp::create(b, loc, p.c, ValueRange{rowAt[r], colAt[q]},
                                 accs[r * cols + q], cStride);
  }

  /// `body(b, at)` for at = from, from + step, ... below `to`.
  void loop(OpBuilder &b, Value from, Value to, int64_t stepSize,
            llvm::function_ref<void(OpBuilder &, Value)> body) {
    scf::ForOp::create(b, loc, from, to, idx(b, loc, stepSize), ValueRange{},
                       [&](OpBuilder &nb, Location, Value at, ValueRange) {
                         body(nb, at);
                         scf::YieldOp::create(nb, loc);
                       });
  }

  /// `body(b)` where `cond` holds.
  void when(OpBuilder &b, Value cond,
            llvm::function_ref<void(OpBuilder &)> body) {
    scf::IfOp::create(b, loc, cond, [&](OpBuilder &nb, Location) {
      body(nb);
      scf::YieldOp::create(nb, loc);
    });
  }

  /// [0, size) (a multiple of 16) in pairs of tiles, then a single tile
  /// where one is left: `part(b, at, tiles)`.
  void parts(OpBuilder &b, Value size,
             llvm::function_ref<void(OpBuilder &, Value, int64_t)> part) {
    Value pairs = arith::SubIOp::create(
        b, loc, size,
        arith::RemUIOp::create(b, loc, size, idx(b, loc, 2 * kAmxTile)));
    loop(b, idx(b, loc, 0), pairs, 2 * kAmxTile,
         [&](OpBuilder &nb, Value at) { part(nb, at, 2); });
    when(b,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pairs, size),
         [&](OpBuilder &nb) { part(nb, pairs, 1); });
  }

  void emit(OpBuilder &b) {
    Value rows = memref::DimOp::create(b, loc, p.c, 0);
    Value cols = memref::DimOp::create(b, loc, p.c, 1);
    parts(b, rows, [&](OpBuilder &rb, Value i0, int64_t rowTiles) {
      parts(rb, cols, [&](OpBuilder &cb, Value j0, int64_t colTiles) {
        block(cb, i0, j0, rowTiles, colTiles);
      });
    });
  }
};

struct AmxTilesPass : public kiln::impl::KilnCpuAmxTilesBase<AmxTilesPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> marked;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kiln::kAmxTilesAttr))
        marked.push_back(op);
    });
    if (marked.empty())
      return;
    OpBuilder b(&getContext());
    for (linalg::GenericOp op : marked) {
      std::optional<Product> p = match(op);
      if (!p) {
        op.emitWarning("not in the layout of AMX tile products; left to "
                       "scalar loops");
        op->removeAttr(kiln::kAmxTilesAttr);
        continue;
      }
      b.setInsertionPoint(op);
      Emitter e{*p, op.getLoc(), outerStride(b, op.getLoc(), p->x),
                outerStride(b, op.getLoc(), p->c)};
      e.emit(b);
      op.erase();
      if (p->zeroFill)
        p->zeroFill.erase();
    }
  }
};

} // namespace
