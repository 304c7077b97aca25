//===- Contractions.cpp - tiled GEMM kernels for contractions -------------===//
//
// A bufferized contraction (`linalg.generic` computing
// out[b.., m, n] += A[b.., m, k] * B[b.., k, n] under any projected
// permutation of the operands) becomes one `gpu.launch` of a tiled GEMM:
// each block owns a 64x64 tile of the output of one batch index and walks K
// in steps of BK; per step its threads stage the A and B tiles in shared
// memory (zero outside the operands), synchronize, and accumulate in
// registers:
//
//  * f32 operands, `tf32=false`: 128 threads, each an 8x4 register tile
//    (rows tid/16 + 8i, columns tid%16 + 16j) of f32 multiply-adds;
//  * f32 operands, `tf32=true`: 4 warps, each a 32x32 warp tile of
//    `nvgpu.mma.sync` m16n8k8 with tf32 inputs and f32 accumulators;
//  * f16 operands: the same with m16n8k16 (f32 accumulators); bf16
//    operands take the SIMT tile (upstream's nvgpu.mma.sync has no bf16
//    lowering yet).
//
// The epilogue adds each accumulator to the output element it belongs to
// (the output holds the contraction's initial value: a zero fill or a
// bias), so what the tile computed is exactly `out + sum_k A*B`.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/CostModel.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUCONTRACTIONS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

enum class TileKind { Simt, Tf32, Half };

/// Planted bugs for the emulator's mutation tests (`test-mutation`).
enum class Mutation { None, SwapBFragment, SkipLastKTile };

/// A contraction the tiled kernel computes.
struct Contraction {
  linalg::GenericOp op;
  SmallVector<unsigned> batch; // dimensions each block takes one index of
  unsigned m = 0, n = 0, k = 0;
  SmallVector<int64_t> sizes; // static loop ranges
  Type inType, outType;       // operand and output element types
};

/// Looks through an `arith.extf` to the block argument it extends.
Value throughExt(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return v;
}

/// Whether `op` is a static floating-point contraction the tiled kernel
/// computes; fills `c`.
LogicalResult matchContraction(linalg::GenericOp op, Contraction &c) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1) {
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() ||
      dims->k.size() != 1 ||
      dims->batch.size() + dims->m.size() + dims->n.size() + 1 !=
          static_cast<size_t>(op.getNumLoops())) {
    return failure();
  }
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      if (!isa<AffineDimExpr>(e)) {
        return failure();
      }
  c.op = op;
  c.k = dims->k.front();
  c.sizes = op.getStaticLoopRanges();
  if (llvm::any_of(c.sizes, ShapedType::isDynamic)) {
    return failure();
  }
  // The tiles run along the largest M and N dimensions; the others (a
  // convolution's batch, which only the input and output have) are walked
  // by blocks like batch dimensions.
  auto largest = [&](ArrayRef<unsigned> ds) {
    unsigned best = ds.front();
    for (unsigned d : ds)
      if (c.sizes[d] > c.sizes[best])
        best = d;
    return best;
  };
  c.m = largest(SmallVector<unsigned>(dims->m.begin(), dims->m.end()));
  c.n = largest(SmallVector<unsigned>(dims->n.begin(), dims->n.end()));
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != c.m && d != c.n && d != c.k)
      c.batch.push_back(d);
  // The body: yield(out + A' * B'), A' and B' the inputs, possibly
  // extended.
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body) {
    return failure();
  }
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul || mul->getBlock() != body) {
    return failure();
  }
  Value x = throughExt(mul.getLhs()), y = throughExt(mul.getRhs());
  Value a = body->getArgument(0), bArg = body->getArgument(1);
  if (!((x == a && y == bArg) || (x == bArg && y == a))) {
    return failure();
  }
  // Nothing else in the body.
  unsigned expected = 3 + (mul.getLhs() != x) + (mul.getRhs() != y);
  if (std::distance(body->begin(), body->end()) != expected) {
    return failure();
  }
  c.inType = a.getType();
  c.outType = out.getType();
  if (bArg.getType() != c.inType || !isa<FloatType>(c.outType) ||
      !(c.inType.isF32() || c.inType.isF16() || c.inType.isBF16()) ||
      !(c.outType.isF32() || c.outType.isF16() || c.outType.isBF16())) {
    return failure();
  }
  return success();
}

/// Builds the kernel of one contraction.
class TileBuilder {
public:
  TileBuilder(Contraction c, TileKind kind, Mutation mutation)
      : c(std::move(c)), kind(kind), mutation(mutation),
        loc(this->c.op.getLoc()), ctx(this->c.op.getContext()) {
    bk = kind == TileKind::Half ? 32 : 16;
    // Shared-memory rows padded so that the fragment loads of the
    // tensor-core tiles (lanes g + 8-row groups) and the stores of the
    // SIMT tile hit distinct banks.
    pad = kind == TileKind::Simt ? 1 : 8;
  }

  gpu::LaunchOp build(OpBuilder &b);

private:
  static constexpr int64_t bm = 64, bn = 64, threads = 128;
  Contraction c;
  TileKind kind;
  Mutation mutation;
  Location loc;
  MLIRContext *ctx;
  int64_t bk, pad;
  DenseMap<int64_t, Value> constants;
  Block *entry = nullptr;
  Value aShared, bShared;

  int64_t size(unsigned dim) const { return c.sizes[dim]; }
  Value cst(OpBuilder &b, int64_t v) {
    Value &slot = constants[v];
    if (!slot) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry);
      slot = arith::ConstantIndexOp::create(b, loc, v);
    }
    return slot;
  }
  Value add(OpBuilder &b, Value x, int64_t y) {
    return y ? arith::AddIOp::create(b, loc, x, cst(b, y)).getResult() : x;
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value mul(OpBuilder &b, Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, cst(b, y)).getResult();
  }
  Value div(OpBuilder &b, Value x, int64_t y) {
    return y == 1 ? x
                  : arith::DivUIOp::create(b, loc, x, cst(b, y)).getResult();
  }
  Value rem(OpBuilder &b, Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, cst(b, y));
  }
  Value less(OpBuilder &b, Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 cst(b, y));
  }

  /// The indices of operand `operand` at the loop positions `at`.
  SmallVector<Value> indices(unsigned operand,
                             const DenseMap<unsigned, Value> &at) {
    SmallVector<Value> idx;
    AffineMap map = c.op.getIndexingMapsArray()[operand];
    for (AffineExpr e : map.getResults())
      idx.push_back(at.lookup(cast<AffineDimExpr>(e).getPosition()));
    return idx;
  }

  /// Stages the A (operand 0: rows m, columns k) or B (operand 1: rows k,
  /// columns n) tile at (row0, col0) in shared memory, as [k][m] or
  /// [k][n]; elements outside the operand are zero.
  void stageTile(OpBuilder &b, unsigned operand, Value tid,
                 const DenseMap<unsigned, Value> &batchAt, Value m0orK0,
                 Value k0orN0);

  /// `v` (f32) rounded to the nearest tf32 value (ties away from zero,
  /// as cvt.rna.tf32.f32): the tensor cores drop the low 13 mantissa
  /// bits, and rounding first halves that error and unbiases it. NaNs
  /// stay NaNs.
  Value roundToTf32(OpBuilder &b, Value v) {
    auto i32 = b.getI32Type();
    Value bits = arith::BitcastOp::create(b, loc, i32, v);
    Value half = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0x1000));
    Value mask = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(0xffffe000u)));
    Value rounded = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, bits, half), mask);
    Value r = arith::BitcastOp::create(b, loc, b.getF32Type(), rounded);
    Value isNan =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
    return arith::SelectOp::create(b, loc, isNan, v, r);
  }

  /// Where the thread's accumulators lie in the tile, computed once at
  /// the kernel's start: SIMT threads own rows tRow + 8i and columns
  /// tCol + 16j; in the tensor-core tiles, with g = lane / 4 and
  /// t = lane % 4 (the PTX ISA's "groupID" and "threadID_in_group"), a
  /// lane's A rows are aRow (+ 8, + 16 mi), its B columns bCol (+ 8 ni) and
  /// its accumulator columns cCol (+ 1, + 8 ni), and its fragments' k
  /// offsets start at kLane (tf32: t, t + 4; f16 pairs: 2t and 2t + 8).
  void locateThread(OpBuilder &b, Value tid);
  Value tRow, tCol, aRow, bCol, cCol, kLane;

  /// One step of K's products into the accumulators `acc`.
  void simtCompute(OpBuilder &b, SmallVectorImpl<Value> &acc);
  void mmaCompute(OpBuilder &b, SmallVectorImpl<Value> &acc);
};

void TileBuilder::stageTile(OpBuilder &b, unsigned operand, Value tid,
                            const DenseMap<unsigned, Value> &batchAt,
                            Value rowBase, Value colBase) {
  // Operand 0's tile is (m: bm) x (k: bk); operand 1's is (k: bk) x (n: bn).
  bool isA = operand == 0;
  unsigned rowDim = isA ? c.m : c.k, colDim = isA ? c.k : c.n;
  int64_t rows = isA ? bm : bk, cols = isA ? bk : bn;
  Value shared = isA ? aShared : bShared;
  // Consecutive threads take consecutive elements along the operand's
  // innermost dimension, so global loads coalesce.
  AffineMap map = c.op.getIndexingMapsArray()[operand];
  unsigned inner = cast<AffineDimExpr>(map.getResults().back()).getPosition();
  bool colsFastest = inner == colDim;
  Value bufferOperand = c.op.getDpsInputs()[operand];
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(c.inType));
  for (int64_t r = 0; r < rows * cols / threads; ++r) {
    Value e = add(b, tid, r * threads);
    Value row = colsFastest ? div(b, e, cols) : rem(b, e, rows);
    Value col = colsFastest ? rem(b, e, cols) : div(b, e, rows);
    Value gRow = add(b, rowBase, row), gCol = add(b, colBase, col);
    DenseMap<unsigned, Value> at = batchAt;
    at[rowDim] = gRow;
    at[colDim] = gCol;
    // Guards only where the tiles overhang the operand.
    Value inside;
    auto guard = [&](Value v, unsigned dim, int64_t tile) {
      if (size(dim) % tile == 0)
        return;
      Value ok = less(b, v, size(dim));
      inside =
          inside ? arith::AndIOp::create(b, loc, inside, ok).getResult() : ok;
    };
    guard(gRow, rowDim, rows);
    guard(gCol, colDim, cols);
    SmallVector<Value> idx = indices(operand, at);
    Value v;
    if (inside) {
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{c.inType}, inside,
                                    /*withElseRegion=*/true);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      scf::YieldOp::create(
          tb, loc,
          memref::LoadOp::create(tb, loc, bufferOperand, idx).getResult());
      OpBuilder eb = ifOp.getElseBodyBuilder();
      scf::YieldOp::create(eb, loc, zero);
      v = ifOp.getResult(0);
    } else {
      v = memref::LoadOp::create(b, loc, bufferOperand, idx);
    }
    if (kind == TileKind::Tf32)
      v = roundToTf32(b, v);
    // Shared layout: [k][m] for A, [k][n] for B.
    SmallVector<Value> sIdx =
        isA ? SmallVector<Value>{col, row} : SmallVector<Value>{row, col};
    memref::StoreOp::create(b, loc, v, shared, sIdx);
  }
}

void TileBuilder::locateThread(OpBuilder &b, Value tid) {
  if (kind == TileKind::Simt) {
    tRow = div(b, tid, 16);
    tCol = rem(b, tid, 16);
    return;
  }
  // Warp w owns rows 32 * (w / 2) and columns 32 * (w % 2) of the tile: 2 x
  // 4 mma tiles of 16x8.
  Value warp = div(b, tid, 32), lane = rem(b, tid, 32);
  Value rowBase = mul(b, div(b, warp, 2), 32);
  Value colBase = mul(b, rem(b, warp, 2), 32);
  Value g = div(b, lane, 4), t = rem(b, lane, 4);
  aRow = add(b, rowBase, g);
  bCol = add(b, colBase, g);
  cCol = add(b, colBase, mul(b, t, 2));
  kLane = kind == TileKind::Half ? mul(b, t, 2) : t;
}

void TileBuilder::simtCompute(OpBuilder &b, SmallVectorImpl<Value> &acc) {
  auto load = [&](Value shared, Value k, Value mn) -> Value {
    Value v = memref::LoadOp::create(b, loc, shared, ValueRange{k, mn});
    return c.inType.isF32()
               ? v
               : arith::ExtFOp::create(b, loc, b.getF32Type(), v).getResult();
  };
  for (int64_t kk = 0; kk < bk; ++kk) {
    SmallVector<Value> av, bv;
    for (int64_t i = 0; i < 8; ++i)
      av.push_back(load(aShared, cst(b, kk), add(b, tRow, 8 * i)));
    for (int64_t j = 0; j < 4; ++j)
      bv.push_back(load(bShared, cst(b, kk), add(b, tCol, 16 * j)));
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        Value p = arith::MulFOp::create(b, loc, av[i], bv[j]);
        acc[i * 4 + j] = arith::AddFOp::create(b, loc, acc[i * 4 + j], p);
      }
  }
}

void TileBuilder::mmaCompute(OpBuilder &b, SmallVectorImpl<Value> &acc) {
  bool half = kind == TileKind::Half;
  int64_t mmaK = half ? 16 : 8;
  auto load = [&](Value shared, Value k, Value mn) -> Value {
    return memref::LoadOp::create(b, loc, shared, ValueRange{k, mn});
  };
  VectorType aTy = VectorType::get({4, half ? 2 : 1}, c.inType);
  VectorType bTy = VectorType::get({2, half ? 2 : 1}, c.inType);
  // A fragment from its elements in row-major order (element by element:
  // the GPU lowering has no n-D vector.from_elements).
  auto fragment = [&](VectorType ty, ArrayRef<Value> elems) -> Value {
    Value v = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ty, b.getZeroAttr(c.inType)));
    int64_t cols = ty.getDimSize(1);
    for (auto [i, e] : llvm::enumerate(elems))
      v = vector::InsertOp::create(
          b, loc, e, v,
          ArrayRef<int64_t>{static_cast<int64_t>(i) / cols,
                            static_cast<int64_t>(i) % cols});
    return v;
  };
  for (int64_t k0 = 0; k0 < bk; k0 += mmaK) {
    SmallVector<Value> aFrag, bFrag;
    for (int64_t mi = 0; mi < 2; ++mi) {
      // Register r: row g + 8 (r % 2), k offset (4 or 8) * (r / 2).
      Value row = add(b, aRow, 16 * mi);
      SmallVector<Value> elems;
      for (int64_t r = 0; r < 4; ++r) {
        Value rr = add(b, row, 8 * (r % 2));
        Value kk = add(b, kLane, k0 + (half ? 8 : 4) * (r / 2));
        elems.push_back(load(aShared, kk, rr));
        if (half)
          elems.push_back(load(aShared, add(b, kk, 1), rr));
      }
      aFrag.push_back(fragment(aTy, elems));
    }
    for (int64_t ni = 0; ni < 4; ++ni) {
      // Register r: column g, k offset (4 or 8) * r.
      Value col = add(b, bCol, 8 * ni);
      SmallVector<Value> elems;
      for (int64_t r = 0; r < 2; ++r) {
        int64_t rr = mutation == Mutation::SwapBFragment ? 1 - r : r;
        Value kk = add(b, kLane, k0 + (half ? 8 : 4) * rr);
        elems.push_back(load(bShared, kk, col));
        if (half)
          elems.push_back(load(bShared, add(b, kk, 1), col));
      }
      bFrag.push_back(fragment(bTy, elems));
    }
    for (int64_t mi = 0; mi < 2; ++mi)
      for (int64_t ni = 0; ni < 4; ++ni) {
        Value &a = acc[mi * 4 + ni];
        a = nvgpu::MmaSyncOp::create(b, loc, aFrag[mi], bFrag[ni], a,
                                     ArrayRef<int64_t>{16, 8, mmaK},
                                     /*tf32Enabled=*/!half);
      }
  }
}

gpu::LaunchOp TileBuilder::build(OpBuilder &b) {
  int64_t mSize = size(c.m), nSize = size(c.n), kSize = size(c.k);
  int64_t mTiles = (mSize + bm - 1) / bm, nTiles = (nSize + bn - 1) / bn;
  int64_t kTiles = (kSize + bk - 1) / bk;
  int64_t batches = 1;
  for (unsigned d : c.batch)
    batches *= size(d);
  auto shared = [&](int64_t cols) {
    return MemRefType::get(
        {bk, cols + pad}, c.inType, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  };
  auto hostCst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value one = hostCst(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, hostCst(batches * mTiles * nTiles), one, one, hostCst(threads),
      one, one, /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      TypeRange{shared(bm), shared(bn)});
  entry = &launch.getBody().front();
  aShared = launch.getWorkgroupAttributions()[0];
  bShared = launch.getWorkgroupAttributions()[1];
  OpBuilder kb = OpBuilder::atBlockBegin(entry);
  Value tid = launch.getThreadIds().x;
  // Block id: n tile fastest, then m tile, then the batch indices.
  Value bid = launch.getBlockIds().x;
  Value m0 = mul(kb, rem(kb, div(kb, bid, nTiles), mTiles), bm);
  Value n0 = mul(kb, rem(kb, bid, nTiles), bn);
  DenseMap<unsigned, Value> batchAt;
  Value rest = div(kb, bid, nTiles * mTiles);
  for (int i = static_cast<int>(c.batch.size()) - 1; i >= 0; --i) {
    int64_t s = size(c.batch[i]);
    batchAt[c.batch[i]] = i == 0 ? rest : rem(kb, rest, s);
    if (i > 0)
      rest = div(kb, rest, s);
  }

  locateThread(kb, tid);
  // Accumulators.
  SmallVector<Value> init;
  if (kind == TileKind::Simt) {
    Value zero = arith::ConstantOp::create(kb, loc, kb.getF32FloatAttr(0));
    init.assign(32, zero);
  } else {
    auto accTy = VectorType::get({2, 2}, kb.getF32Type());
    Value zero = arith::ConstantOp::create(
        kb, loc, DenseElementsAttr::get(accTy, kb.getF32FloatAttr(0)));
    init.assign(8, zero);
  }
  int64_t kLoopTiles =
      mutation == Mutation::SkipLastKTile ? kTiles - 1 : kTiles;
  auto kLoop = scf::ForOp::create(
      kb, loc, cst(kb, 0), cst(kb, kLoopTiles), cst(kb, 1), init,
      [&](OpBuilder &lb, Location, Value kt, ValueRange args) {
        Value k0 = mul(lb, kt, bk);
        stageTile(lb, 0, tid, batchAt, m0, k0);
        stageTile(lb, 1, tid, batchAt, k0, n0);
        gpu::BarrierOp::create(lb, loc);
        SmallVector<Value> acc(args.begin(), args.end());
        if (kind == TileKind::Simt)
          simtCompute(lb, acc);
        else
          mmaCompute(lb, acc);
        gpu::BarrierOp::create(lb, loc);
        scf::YieldOp::create(lb, loc, acc);
      });

  // Epilogue: out[row, col] += accumulator, inside the output only.
  Value out = c.op.getDpsInits()[0];
  auto accumulate = [&](Value row, Value col, Value v) {
    Value gRow = add(kb, m0, row), gCol = add(kb, n0, col);
    Value inside;
    if (mSize % bm)
      inside = less(kb, gRow, mSize);
    if (nSize % bn) {
      Value ok = less(kb, gCol, nSize);
      inside =
          inside ? arith::AndIOp::create(kb, loc, inside, ok).getResult() : ok;
    }
    OpBuilder::InsertionGuard guard(kb);
    if (inside) {
      auto ifOp = scf::IfOp::create(kb, loc, inside, false);
      kb.setInsertionPointToStart(ifOp.thenBlock());
    }
    DenseMap<unsigned, Value> at = batchAt;
    at[c.m] = gRow;
    at[c.n] = gCol;
    SmallVector<Value> idx = indices(2, at);
    Value old = memref::LoadOp::create(kb, loc, out, idx);
    Value sum;
    if (c.outType.isF32()) {
      sum = arith::AddFOp::create(kb, loc, old, v);
    } else {
      Value wide = arith::ExtFOp::create(kb, loc, kb.getF32Type(), old);
      sum = arith::TruncFOp::create(kb, loc, c.outType,
                                    arith::AddFOp::create(kb, loc, wide, v));
    }
    memref::StoreOp::create(kb, loc, sum, out, idx);
  };
  if (kind == TileKind::Simt) {
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 4; ++j)
        accumulate(add(kb, tRow, 8 * i), add(kb, tCol, 16 * j),
                   kLoop.getResult(i * 4 + j));
  } else {
    for (int64_t mi = 0; mi < 2; ++mi)
      for (int64_t ni = 0; ni < 4; ++ni) {
        Value acc = kLoop.getResult(mi * 4 + ni);
        // Element [r][e]: row g + 8r, column 2t + e of the 16x8 tile.
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t e = 0; e < 2; ++e) {
            Value v = vector::ExtractOp::create(kb, loc, acc,
                                                ArrayRef<int64_t>{r, e});
            accumulate(add(kb, aRow, 16 * mi + 8 * r),
                       add(kb, cCol, 8 * ni + e), v);
          }
      }
  }
  gpu::TerminatorOp::create(kb, loc);
  return launch;
}

struct GpuContractionsPass
    : public kiln::impl::KilnGpuContractionsBase<GpuContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    Mutation mutation = Mutation::None;
    if (testMutation == "swap-b-fragment")
      mutation = Mutation::SwapBFragment;
    else if (testMutation == "skip-last-k-tile")
      mutation = Mutation::SkipLastKTile;
    else if (!testMutation.empty()) {
      fn.emitError("kiln-gpu-contractions: unknown test-mutation '")
          << testMutation << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> candidates;
    for (Operation &op : fn.getBody().front())
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        candidates.push_back(generic);
    for (linalg::GenericOp op : candidates) {
      Contraction c;
      if (failed(matchContraction(op, c)))
        continue;
      // Narrow products are better served by a thread (or block) per
      // output than by 64x64 tiles that are mostly empty.
      if (c.sizes[c.m] < minSize || c.sizes[c.n] < minSize)
        continue;
      // bf16 has no nvgpu.mma.sync lowering upstream: f32 multiply-adds.
      TileKind kind = c.inType.isF16()           ? TileKind::Half
                      : c.inType.isF32() && tf32 ? TileKind::Tf32
                                                 : TileKind::Simt;
      kiln::ComputeCost cost = kiln::estimateCost({op.getOperation()});
      OpBuilder b(op);
      TileBuilder builder(c, kind, mutation);
      gpu::LaunchOp launch = builder.build(b);
      launch->setAttr(
          "kiln.cost",
          DenseI64ArrayAttr::get(&getContext(), {cost.flops, cost.bytes}));
      op.erase();
    }
  }
};
} // namespace
