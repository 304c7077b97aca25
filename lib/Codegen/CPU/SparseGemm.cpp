//===- SparseGemm.cpp - 2:4 sparse weights expanded in registers ----------===//
//
// A float contraction `out[..., m, n] += a[..., m, k] * b[k, n]` that
// kiln-sparsify marked 2:4 (every group of four consecutive k of a column
// n of the constant b has at most two non-zeros) keeps b compressed: per
// column, per chunk of L k (one vector: 16 lanes with AVX-512, 8 with
// AVX2), the L/2 kept values in k order and an L-bit mask of their
// positions,
//
//   values[n / nc, k / L, n % nc, L / 2]   f32
//   masks [n / nc, k / L, n % nc]          i16 (L = 16) or i8 (L = 8)
//
// (nc columns of a block interleaved, so that a block streams one run of
// memory). A group with fewer than two non-zeros keeps zeros to make two,
// so every chunk holds exactly L/2 values. The kernel expands a chunk in a
// register, multiplies it with L consecutive k of each of a few rows of
// a, and sums each (row, column) accumulator across its lanes at the end:
// half the weight bytes of the dense panels plus 1/32 for the masks, which
// is what a memory-bound product (a batch-1 projection, a matrix-vector
// product) is limited by. With AVX-512 the expansion is one masked
// expand-load (`vexpandps`); AVX2 has none, so there the 4 values are
// loaded into the low half of a vector whose high half is zero and
// permuted into place (`vpermps`, made by kiln-cpu-avx2-dot after
// bufferization), its indices read from a 256-entry table by the mask byte
// (index 4, a zero, where the mask has no bit).
//
// With int8=true the pass takes the int8 products instead (signed weight
// bytes into int32; it then runs before kiln-cpu-int8-gemm packs the
// dense ones): chunks of 64 k, 32 kept bytes and a 64-bit mask each
// (values[n / nc, k / 64, n % nc, 32] i8, masks[...] i64: 62.5% of the
// bytes), expanded by a 64-byte expand-load (AVX-512 VBMI2's vpexpandb)
// and multiplied with 64 bytes of each row in the four-products-per-lane
// form kiln-cpu-vnni-dot makes one vpdpbusd of; signed rows are read
// flipped (a ^ 0x80 = a + 128) and each column's sums lowered at the end
// by 128 times its weight sum.
//
// Where it would not be faster the contraction stays dense for
// kiln-pack-weights and kiln-cpu-tile-and-vectorize, with the reason
// recorded in the module's `kiln.sparse_kernels`: more than `max-rows`
// rows (compute-bound: the dense register tiles reuse each weight across
// 6 or 8 rows), a weight under `min-weight-bytes` (it stays in the L1 cache
// either way), vectors under 256 bits, or K not a multiple of L.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "../SparseKernels.h"
#include "Epilogue.h"
#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

#define DEBUG_TYPE "kiln-cpu-sparse-gemm"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUSPARSEGEMM
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A matched contraction: a as [R, K] (a collapse of its type), the
/// output as [R, N], b's values as [N][K].
struct SparseGemm {
  linalg::GenericOp op;
  Value a, init;
  int64_t rows = 1, k = 0, n = 0;
  /// An int8 product (i8 x i8 into i32) rather than a float32 one.
  bool int8 = false;
  /// int8: a's bytes are signed (vpdpbusd reads them flipped).
  bool signedA = true;
  std::vector<float> b; // [n][k] (int8 values exactly)
};

/// Whether `op` is an int8 product (i8 x i8 into i32): the kind the pass
/// takes with int8=true.
bool isInt8Product(linalg::GenericOp op) {
  std::optional<kiln::GemmTypes> types = kiln::staticGemmTypes(op);
  return types && types->a.getElementType().isInteger(8) &&
         types->b.getElementType().isInteger(8) &&
         types->out.getElementType().isInteger(32);
}

/// `op` as a SparseGemm, or why it is not one (a reason for the report).
FailureOr<SparseGemm> match(linalg::GenericOp op, std::string &why) {
  why.clear();
  std::optional<kiln::GemmTypes> types = kiln::staticGemmTypes(op);
  bool int8 = isInt8Product(op);
  if (!types || types->b.getRank() != 2 ||
      (!int8 && (!types->a.getElementType().isF32() ||
                 !types->b.getElementType().isF32() ||
                 !types->out.getElementType().isF32()))) {
    why = "not a static float32 or int8 product with a matrix weight";
    return failure();
  }
  RankedTensorType ot = types->out;
  OpOperand *aOp = op.getDpsInputOperand(0), *bOp = op.getDpsInputOperand(1);
  OpOperand *out = op.getDpsInitOperand(0);
  Block &body = op->getRegion(0).front();
  bool signedA = true, signedB = true;
  if (int8) {
    // yield(out + ext(a) * extsi(b)).
    if (!kiln::cpu::isExtendedProductBody(body, signedA, signedB) || !signedB) {
      why = "not a plain multiply-add of a signed weight";
      return failure();
    }
  } else {
    // The body: yield(out + a * b).
    auto add =
        body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
    auto isArg = [](Value v, unsigned i) {
      auto ba = dyn_cast<BlockArgument>(v);
      return ba && ba.getArgNumber() == i;
    };
    arith::MulFOp mul;
    if (add) {
      Value acc = add.getLhs(), prod = add.getRhs();
      if (!isArg(acc, 2))
        std::swap(acc, prod);
      mul = isArg(acc, 2) ? prod.getDefiningOp<arith::MulFOp>() : nullptr;
    }
    if (!mul || body.getOperations().size() != 3 ||
        !((isArg(mul.getLhs(), 0) && isArg(mul.getRhs(), 1)) ||
          (isArg(mul.getLhs(), 1) && isArg(mul.getRhs(), 0)))) {
      why = "not a plain multiply-add";
      return failure();
    }
  }
  std::optional<kiln::GemmDims> dims = kiln::gemmDims(op);
  if (!dims) {
    why = "operands not laid out as [..., m, k] x [k, n]";
    return failure();
  }
  bool nk = dims->nk;
  // The constant, possibly behind a 2-D transpose (Gemm's transB).
  Value bv = bOp->get();
  if (auto tr = bv.getDefiningOp<linalg::TransposeOp>()) {
    if (tr.getPermutation().size() != 2 || tr.getPermutation()[0] != 1) {
      why = "the weight is not a constant";
      return failure();
    }
    nk = !nk;
    bv = tr.getInput();
  }
  auto cst = bv.getDefiningOp<arith::ConstantOp>();
  std::optional<ArrayRef<char>> bytes =
      cst ? kiln::rawConstantBytes(cst.getValue()) : std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SparseGemm g;
  g.op = op;
  g.int8 = int8;
  g.signedA = signedA;
  g.n = ranges[dims->n];
  g.k = ranges[dims->k];
  int64_t size = int8 ? 1 : 4;
  if (!bytes || (int64_t)bytes->size() != g.n * g.k * size) {
    why = "the weight is not a constant";
    return failure();
  }
  for (int64_t i = 0; i + 1 < ot.getRank(); ++i)
    g.rows *= ot.getDimSize(i);
  g.b.resize(g.n * g.k);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t k = 0; k < g.k; ++k) {
      const char *at = bytes->data() + (nk ? n * g.k + k : k * g.n + n) * size;
      if (int8)
        g.b[n * g.k + k] = static_cast<int8_t>(*at);
      else
        std::memcpy(&g.b[n * g.k + k], at, 4);
    }
  g.a = aOp->get();
  g.init = out->get();
  return g;
}

/// Whether every group of four along k of each column has at most two
/// non-zeros.
bool is2of4(const SparseGemm &g) {
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t k = 0; k < g.k; k += 4) {
      int nz = 0;
      for (int64_t j = 0; j < 4; ++j)
        nz += g.b[n * g.k + k + j] != 0.0f;
      if (nz > 2)
        return false;
    }
  return true;
}

/// The compressed weights for blocks of `nc` columns and chunks of
/// `lanes` k (see the file comment).
void compress(const SparseGemm &g, int64_t nc, int64_t lanes,
              std::vector<float> &values, std::vector<uint64_t> &masks) {
  int64_t chunks = g.k / lanes, kept = lanes / 2;
  values.assign(g.n * chunks * kept, 0.0f);
  masks.assign(g.n * chunks, 0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t slot = ((n / nc) * chunks + c) * nc + n % nc;
      uint64_t mask = 0;
      for (int64_t grp = 0; grp < lanes / 4; ++grp) {
        const float *w = &g.b[n * g.k + c * lanes + grp * 4];
        // The non-zeros, then zeros at the first free positions: two.
        int nz = 0;
        for (int j = 0; j < 4; ++j)
          if (w[j] != 0.0f) {
            mask |= uint64_t(1) << (grp * 4 + j);
            ++nz;
          }
        for (int j = 0; j < 4 && nz < 2; ++j)
          if (!(mask & (uint64_t(1) << (grp * 4 + j)))) {
            mask |= uint64_t(1) << (grp * 4 + j);
            ++nz;
          }
      }
      masks[slot] = mask;
      int64_t v = 0;
      for (int64_t l = 0; l < lanes; ++l)
        if (mask & (uint64_t(1) << l))
          values[slot * kept + v++] = g.b[n * g.k + c * lanes + l];
    }
}

/// A private constant memref global holding `data`, named after `base`.
memref::GlobalOp global(OpBuilder &b, ModuleOp module, SymbolTable &symbols,
                        Location loc, StringRef base, Type elt,
                        ArrayRef<char> data, int64_t count) {
  auto tensorType = RankedTensorType::get({count}, elt);
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(data, 64);
  auto init = DenseResourceElementsAttr::get(tensorType, base, std::move(blob));
  return kiln::addConstantGlobal(b, module, symbols, loc, base,
                                 MemRefType::get({count}, elt), init);
}

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// vpermps's indices for each 8-bit mask m: lane l takes the rank of bit
/// l among m's bits below it where m has bit l, else 4 (the zero half).
std::vector<int32_t> permuteTable() {
  std::vector<int32_t> table(256 * 8);
  for (int m = 0; m < 256; ++m)
    for (int l = 0; l < 8; ++l)
      table[m * 8 + l] =
          (m >> l) & 1
              ? llvm::popcount(static_cast<unsigned>(m) & ((1u << l) - 1))
              : 4;
  return table;
}

/// The kernel for `g` with blocks of `nc` columns, row tiles of `rt` and
/// chunks of `lanes` k (float32: 16, AVX-512's vexpandps, or 8, AVX2's
/// vpermps, whose index table `tableGlobal` all the module's kernels
/// share: made by the first; int8: 64 bytes, vpexpandb).
Value rewrite(RewriterBase &b, ModuleOp module, SymbolTable &symbols,
              const SparseGemm &g, int64_t nc, int64_t rt, int64_t lanes,
              memref::GlobalOp &tableGlobal) {
  linalg::GenericOp op = g.op;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  std::vector<float> values;
  std::vector<uint64_t> masks;
  compress(g, nc, lanes, values, masks);
  int64_t kept = lanes / 2;
  bool int8 = g.int8;
  bool expand = int8 || lanes == 16;
  Type f32 = b.getF32Type(), i8 = b.getI8Type(), i32 = b.getI32Type();
  // The operands' and the accumulators' element types.
  Type inElt = int8 ? i8 : f32, accElt = int8 ? i32 : f32;
  memref::GlobalOp valuesGlobal;
  if (int8) {
    std::vector<int8_t> bytes(values.begin(), values.end());
    valuesGlobal =
        global(b, module, symbols, loc, "kiln_sparse_values", i8,
               ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                              bytes.size()),
               bytes.size());
  } else {
    valuesGlobal =
        global(b, module, symbols, loc, "kiln_sparse_values", f32,
               ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                              values.size() * 4),
               values.size());
  }
  // Each mask as its low lanes / 8 bytes (little-endian): i64, i16 or i8.
  int64_t maskBytes = lanes / 8;
  std::vector<char> maskData(masks.size() * maskBytes);
  for (size_t i = 0; i < masks.size(); ++i)
    std::memcpy(&maskData[i * maskBytes], &masks[i], maskBytes);
  auto masksGlobal = global(b, module, symbols, loc, "kiln_sparse_masks",
                            b.getIntegerType(lanes), maskData, masks.size());
  Value vals = memref::GetGlobalOp::create(b, loc, valuesGlobal.getType(),
                                           valuesGlobal.getSymName());
  Value maskMem = memref::GetGlobalOp::create(b, loc, masksGlobal.getType(),
                                              masksGlobal.getSymName());
  Value table;
  if (!expand) {
    if (!tableGlobal) {
      std::vector<int32_t> perm = permuteTable();
      tableGlobal = global(
          b, module, symbols, loc, "kiln_sparse_permutes", b.getI32Type(),
          ArrayRef<char>(reinterpret_cast<const char *>(perm.data()),
                         perm.size() * 4),
          perm.size());
    }
    table = memref::GetGlobalOp::create(b, loc, tableGlobal.getType(),
                                        tableGlobal.getSymName());
  }
  // int8 with signed rows: vpdpbusd reads them flipped (a ^ 0x80 = a +
  // 128), so each column's sums come out 128 times its weight sum too
  // high; this is what to add back, per column.
  Value offsets;
  if (int8 && g.signedA) {
    std::vector<int32_t> offset(g.n, 0);
    for (int64_t n = 0; n < g.n; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < g.k; ++k)
        sum += static_cast<int64_t>(g.b[n * g.k + k]);
      offset[n] = static_cast<int32_t>(-128 * sum);
    }
    auto offsetGlobal =
        global(b, module, symbols, loc, "kiln_sparse_offsets", i32,
               ArrayRef<char>(reinterpret_cast<const char *>(offset.data()),
                              offset.size() * 4),
               offset.size());
    offsets = memref::GetGlobalOp::create(b, loc, offsetGlobal.getType(),
                                          offsetGlobal.getSymName());
  }

  // a as [R, K], the output as [R, N].
  auto collapse2 = [&](Value v, int64_t inner) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 2)
      return v;
    SmallVector<ReassociationIndices> re;
    ReassociationIndices outer;
    for (int64_t i = 0; i + 1 < t.getRank(); ++i)
      outer.push_back(i);
    if (!outer.empty())
      re.push_back(outer);
    re.push_back({t.getRank() - 1});
    auto nt = RankedTensorType::get({g.rows, inner}, t.getElementType());
    if (t.getRank() == 1)
      return tensor::ExpandShapeOp::create(
          b, loc, nt, v, ArrayRef<ReassociationIndices>{{0, 1}});
    return tensor::CollapseShapeOp::create(b, loc, nt, v, re);
  };
  Value a = collapse2(g.a, g.k);
  Value init = collapse2(g.init, g.n);

  // A chunk of weights expanded (lanes of inElt), each row's chunk (the
  // same), the accumulators (float32: the chunk's lanes; int8: 16 int32
  // lanes of four byte products each).
  auto vt = VectorType::get({lanes}, inElt);
  auto accType = VectorType::get({int8 ? kiln::cpu::kDotLanes : lanes}, accElt);
  auto maskType = VectorType::get({lanes}, b.getI1Type());
  auto maskWord = VectorType::get({1}, b.getIntegerType(lanes));
  auto halfType = VectorType::get({kept}, f32);
  auto indexType = VectorType::get({lanes}, b.getI32Type());
  auto rowType = VectorType::get({nc}, accElt);
  int64_t chunks = g.k / lanes;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(g.n / nc)},
      ValueRange{init}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value blk = forall.getInductionVar(0);
  Value shared = forall.getRegionIterArgs()[0];
  Value zero = arith::ConstantOp::create(
      b, loc, vt, DenseElementsAttr::get(vt, b.getZeroAttr(inElt)));
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, accType, DenseElementsAttr::get(accType, b.getZeroAttr(accElt)));
  Value zeroIn = arith::ConstantOp::create(b, loc, b.getZeroAttr(inElt));
  Value zeroOut = arith::ConstantOp::create(b, loc, b.getZeroAttr(accElt));
  Value flip;
  if (int8 && g.signedA)
    flip = arith::ConstantOp::create(
        b, loc, vt, DenseElementsAttr::get(vt, b.getI8IntegerAttr(-128)));
  Value zeroHalf;
  if (!expand)
    zeroHalf = arith::ConstantOp::create(
        b, loc, halfType, DenseElementsAttr::get(halfType, b.getZeroAttr(f32)));
  SmallVector<int64_t> join = llvm::to_vector(llvm::seq<int64_t>(0, lanes));
  Value col0 = arith::MulIOp::create(b, loc, blk, idx(b, loc, nc));
  auto sliceType = RankedTensorType::get({g.rows, nc}, accElt);
  SmallVector<OpFoldResult> offsetsAt = {b.getIndexAttr(0), col0};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(g.rows),
                                     b.getIndexAttr(nc)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, shared,
                                               offsetsAt, sizes, strides);
  // The block's first chunk slot: (blk * chunks) * nc.
  Value blockSlot =
      arith::MulIOp::create(b, loc, blk, idx(b, loc, chunks * nc));
  Value blockOffsets;
  if (offsets)
    blockOffsets =
        vector::LoadOp::create(b, loc, rowType, offsets, ValueRange{col0});

  // One tile of `rows` rows from `row0`, added into `dest`.
  auto tile = [&](OpBuilder &tb, Value row0, int64_t rows,
                  Value dest) -> Value {
    SmallVector<Value> accs(rows * nc, zeroAcc);
    auto kLoop = scf::ForOp::create(
        tb, loc, idx(tb, loc, 0), idx(tb, loc, chunks), idx(tb, loc, 1), accs,
        [&](OpBuilder &kb, Location, Value c, ValueRange iter) {
          Value slot0 = arith::AddIOp::create(
              kb, loc, blockSlot,
              arith::MulIOp::create(kb, loc, c, idx(kb, loc, nc)));
          SmallVector<Value> w;
          for (int64_t j = 0; j < nc; ++j) {
            Value slot = arith::AddIOp::create(kb, loc, slot0, idx(kb, loc, j));
            Value at = arith::MulIOp::create(kb, loc, slot, idx(kb, loc, kept));
            if (expand) {
              Value word =
                  vector::LoadOp::create(kb, loc, maskWord, maskMem, slot);
              Value mask = vector::BitCastOp::create(kb, loc, maskType, word);
              w.push_back(vector::ExpandLoadOp::create(
                  kb, loc, vt, vals, ValueRange{at}, mask, zero));
              continue;
            }
            // The kept values in the low half, zeros in the high half,
            // permuted into their lanes by the mask's table row.
            Value half = vector::LoadOp::create(kb, loc, halfType, vals, at);
            Value wide =
                vector::ShuffleOp::create(kb, loc, half, zeroHalf, join);
            Value maskByte = memref::LoadOp::create(kb, loc, maskMem, slot);
            Value row =
                arith::MulIOp::create(kb, loc,
                                      arith::IndexCastUIOp::create(
                                          kb, loc, kb.getIndexType(), maskByte),
                                      idx(kb, loc, lanes));
            Value perm = vector::LoadOp::create(kb, loc, indexType, table, row);
            // Lane l = wide[perm[l]], marked for kiln-cpu-avx2-dot to make
            // one vpermps of it.
            SmallVector<Value> elems;
            for (int64_t l = 0; l < lanes; ++l) {
              Value lane = arith::IndexCastOp::create(
                  kb, loc, kb.getIndexType(),
                  vector::ExtractOp::create(kb, loc, perm,
                                            ArrayRef<int64_t>{l}));
              elems.push_back(vector::ExtractOp::create(
                  kb, loc, wide, ArrayRef<OpFoldResult>{lane}));
            }
            auto permuted = vector::FromElementsOp::create(kb, loc, vt, elems);
            permuted->setAttr(kiln::kAvx2PermuteAttr, kb.getUnitAttr());
            w.push_back(permuted);
          }
          Value k0 = arith::MulIOp::create(kb, loc, c, idx(kb, loc, lanes));
          SmallVector<Value> next(iter.begin(), iter.end());
          for (int64_t r = 0; r < rows; ++r) {
            Value row = arith::AddIOp::create(kb, loc, row0, idx(kb, loc, r));
            Value x = vector::TransferReadOp::create(
                kb, loc, vt, a, ValueRange{row, k0}, zeroIn,
                ArrayRef<bool>{true});
            if (flip)
              x = arith::XOrIOp::create(kb, loc, x, flip);
            for (int64_t j = 0; j < nc; ++j)
              next[r * nc + j] =
                  int8 ? kiln::cpu::dot4(kb, loc, next[r * nc + j], x, w[j])
                       : vector::FMAOp::create(kb, loc, x, w[j],
                                               next[r * nc + j])
                             .getResult();
          }
          scf::YieldOp::create(kb, loc, next);
        });
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<Value> sums;
      for (int64_t j = 0; j < nc; ++j)
        sums.push_back(vector::ReductionOp::create(
            tb, loc, vector::CombiningKind::ADD, kLoop.getResult(r * nc + j)));
      Value row = arith::AddIOp::create(tb, loc, row0, idx(tb, loc, r));
      Value start = vector::TransferReadOp::create(
          tb, loc, rowType, dest, ValueRange{row, idx(tb, loc, 0)}, zeroOut,
          ArrayRef<bool>{true});
      Value total = vector::FromElementsOp::create(tb, loc, rowType, sums);
      Value sum;
      if (int8) {
        sum = arith::AddIOp::create(tb, loc, start, total);
        if (blockOffsets)
          sum = arith::AddIOp::create(tb, loc, sum, blockOffsets);
      } else {
        sum = arith::AddFOp::create(tb, loc, start, total);
      }
      dest = vector::TransferWriteOp::create(tb, loc, sum, dest,
                                             ValueRange{row, idx(tb, loc, 0)},
                                             ArrayRef<bool>{true})
                 .getResult();
    }
    return dest;
  };

  int64_t full = g.rows / rt;
  Value dest = slice;
  if (full > 0) {
    auto rowLoop = scf::ForOp::create(
        b, loc, idx(b, loc, 0), idx(b, loc, full), idx(b, loc, 1),
        ValueRange{dest},
        [&](OpBuilder &rb, Location, Value t, ValueRange iter) {
          Value row0 = arith::MulIOp::create(rb, loc, t, idx(rb, loc, rt));
          scf::YieldOp::create(rb, loc, tile(rb, row0, rt, iter[0]));
        });
    dest = rowLoop.getResult(0);
  }
  if (int64_t rest = g.rows - full * rt)
    dest = tile(b, idx(b, loc, full * rt), rest, dest);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, dest, shared, offsetsAt, sizes,
                                        strides);
  b.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  auto ot = cast<RankedTensorType>(op.getResult(0).getType());
  if (ot.getRank() == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, ot, result, ArrayRef<ReassociationIndices>{{0, 1}});
  if (ot.getRank() > 2) {
    SmallVector<ReassociationIndices> re;
    ReassociationIndices outer;
    for (int64_t i = 0; i + 1 < ot.getRank(); ++i)
      outer.push_back(i);
    re.push_back(outer);
    re.push_back({ot.getRank() - 1});
    return tensor::ExpandShapeOp::create(b, loc, ot, result, re);
  }
  return result;
}

struct SparseGemmPass
    : public kiln::impl::KilnCpuSparseGemmBase<SparseGemmPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::GenericOp> marked = kiln::sparsityMarked(module);
    if (marked.empty())
      return;
    SymbolTable symbols(module);
    IRRewriter rewriter(ctx);
    SmallVector<Attribute> kernels;
    auto i64 = [&](int64_t v) {
      return IntegerAttr::get(IntegerType::get(ctx, 64), v);
    };
    // One vector of f32 a chunk: 16 lanes (vexpandps) or 8 (vpermps);
    // int8: 64 bytes (vpexpandb).
    int64_t lanes = int8 ? 64 : vectorBits >= 512 ? 16 : 8;
    memref::GlobalOp table; // AVX2's permutation indices, once per module.
    for (linalg::GenericOp op : marked) {
      // This run takes one kind, int8 or float32; the other's run (before
      // kiln-cpu-int8-gemm, or after it) the rest.
      if (isInt8Product(op) != int8)
        continue;
      NamedAttrList entry;
      entry.append("name",
                   StringAttr::get(ctx, kiln::onnxNodeName(op.getLoc())));
      std::string why;
      FailureOr<SparseGemm> g = match(op, why);
      if (succeeded(g)) {
        int64_t denseBytes = g->n * g->k * (int8 ? 1 : 4);
        entry.append("dense_bytes", i64(denseBytes));
        if (int8 && !expandBytes)
          why = "no AVX-512 VBMI2 and VNNI (the int8 kernel expands with "
                "vpexpandb and multiplies with vpdpbusd)";
        else if (!int8 && vectorBits < 256)
          why = "no AVX-512 or AVX2 (the kernel expands with vexpandps or "
                "vpermps)";
        else if (g->k % lanes != 0)
          why = llvm::formatv("K = {0} is not a multiple of {1}", g->k, lanes)
                    .str();
        else if (!is2of4(*g))
          why = "the weight is not 2:4 along K";
        else if (g->rows > maxRows)
          why = llvm::formatv("{0} rows: compute-bound, the dense register "
                              "tiles are faster (--cpu-sparse-max-rows={1})",
                              g->rows, maxRows)
                    .str();
        else if (denseBytes < minWeightBytes)
          why = llvm::formatv("a {0}-byte weight stays in the L1 cache; "
                              "sparse is not faster",
                              denseBytes)
                    .str();
      }
      if (succeeded(g) && why.empty()) {
        // Accumulators rt x nc: 16 or 32 of AVX-512's 32 registers; 8 of
        // AVX2's 16 (the expanded columns, a row's vector and the
        // permutation's operands take others).
        int64_t rt = std::min<int64_t>(g->rows, 4);
        int64_t nc =
            lanes >= 16 ? (rt <= 2 ? 8 : 4) : std::max<int64_t>(8 / rt, 2);
        while (g->n % nc != 0)
          nc /= 2;
        Value result =
            rewrite(rewriter, module, symbols, *g, nc, rt, lanes, table);
        rewriter.replaceOp(op, result);
        // Half the values, and one mask bit per k.
        int64_t sparseBytes =
            g->n * g->k / 2 * (int8 ? 1 : 4) + g->n * g->k / 8;
        entry.append("sparse_bytes", i64(sparseBytes));
        entry.append("kernel", StringAttr::get(ctx, "sparse"));
      } else {
        op->removeAttr("kiln.sparsity");
        entry.append("kernel", StringAttr::get(ctx, "dense"));
        entry.append("reason", StringAttr::get(ctx, why));
      }
      kernels.push_back(entry.getDictionary(ctx));
    }
    if (!kernels.empty())
      kiln::recordSparseKernels(module, kernels);
    // The bytes the sparse kernels share besides their weights (AVX2's
    // permutation table), for --report's total.
    if (table)
      module->setAttr(
          "kiln.sparse_shared_bytes",
          i64(table.getType().getNumElements() *
              table.getType().getElementType().getIntOrFloatBitWidth() / 8));
  }
};

} // namespace
