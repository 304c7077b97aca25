//===- Int8Gemm.cpp - 8-bit GEMMs as VNNI dot-product register tiles ------===//
//
// The int32 contractions of 8-bit operands that QLinearConv and
// QLinearMatMul lower to, with constant weights, written as loops over
// register tiles (the float path's vector.contract would multiply in
// int32, one product per lane). Each tile keeps its accumulators (rows by
// one or two vectors of 16 int32 lanes) in registers across k and adds,
// per step, four products per lane: one operand's four bytes of a row
// broadcast, the other's 64 bytes (16 lanes times 4 k) loaded from a
// layout packed for it, summed in plain vector ops that kiln-cpu-vnni-dot
// turns into one AVX-512 VNNI `vpdpbusd` per accumulator where the CPU has
// it (LLVM makes vpdpwssd or vpmaddwd of them elsewhere). vpdpbusd
// multiplies unsigned bytes by signed ones: the signed activations are
// read flipped (a ^ 0x80 = a + 128) and the accumulators start lower by
// 128 times the matching weight sums, computed here.
//
//  - A MatMul, acc[m, n] += a[m, k] * w[k, n]: the activation rows are
//    broadcast, the weights packed at compile time into
//    [n / 16, k / 4, n % 16, k % 4] (k padded with zeros).
//  - A 2-D convolution, out[n, f, p] += w[f, k] * col[n, k, p], written in
//    NCHW with the output plane along the vectors: the weight rows are
//    broadcast, the input's windows copied (flipped) into
//    [n, p / 16, k / 4, p % 16, k % 4]; no transposes.
//
// Blocks of rows and columns form an scf.forall for threads.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "../SparseKernels.h"
#include "Epilogue.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>
#include <numeric>

#define DEBUG_TYPE "kiln-cpu-int8-gemm"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUAMXBF16
#define GEN_PASS_DEF_KILNCPUAVX2DOT
#define GEN_PASS_DEF_KILNCPUINT8GEMM
#define GEN_PASS_DEF_KILNCPUVNNIDOT
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

/// The sums of four byte products per lane (see Epilogue.h).
Value kiln::cpu::dot4(OpBuilder &b, Location loc, Value acc, Value u, Value s,
                      bool signedU) {
  auto vt = cast<VectorType>(acc.getType());
  auto byteVec = VectorType::get({kDotLanes}, b.getI8Type());
  for (int64_t q = 0; q < 4; ++q) {
    SmallVector<int64_t> lanes;
    for (int64_t l = 0; l < kDotLanes; ++l)
      lanes.push_back(4 * l + q);
    Value x = vector::ShuffleOp::create(b, loc, byteVec, u, u, lanes);
    Value y = vector::ShuffleOp::create(b, loc, byteVec, s, s, lanes);
    Value ex = signedU ? arith::ExtSIOp::create(b, loc, vt, x).getResult()
                       : arith::ExtUIOp::create(b, loc, vt, x).getResult();
    Value p = arith::MulIOp::create(b, loc, ex,
                                    arith::ExtSIOp::create(b, loc, vt, y));
    acc = arith::AddIOp::create(b, loc, acc, p);
  }
  if (signedU)
    acc.getDefiningOp()->setAttr(kiln::cpu::kAvx2DotAttr, b.getUnitAttr());
  return acc;
}

namespace {

constexpr int64_t kLanes = 16; // int32 lanes of one 512-bit vector.

/// A matched contraction: a ([..., M, K], the op's own operand), the
/// constant b as [N][K] bytes, and the loop dims.
struct Int8Gemm {
  Value a, init;
  bool signedA = true;
  int64_t m = 1, n = 0, k = 0;
  std::vector<int8_t> b; // b[n * K + k]
};

/// The raw bytes of `v`, a non-splat constant seen through reshapes.
std::optional<ArrayRef<char>> constantBytes(Value v) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  return cst ? kiln::rawConstantBytes(cst.getValue()) : std::nullopt;
}

/// A constant weight's raw bytes (elements of `size` bytes, [N][K] with
/// `nk`, else [K][N]) as N rows of K elements.
std::vector<char> weightRows(ArrayRef<char> bytes, bool nk, int64_t n,
                             int64_t k, int64_t size) {
  std::vector<char> rows(n * k * size);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(&rows[(i * k + j) * size],
                  &bytes[(nk ? i * k + j : j * n + i) * size], size);
  return rows;
}

/// `op` as an Int8Gemm, when it is one: static, one reduction dim k, the
/// output's last dim n, a = out dims but n, then k (so that [M, K] is a
/// collapse of it), b a signed constant over exactly (n, k), and the body
/// out + ext(a) * ext(b).
std::optional<Int8Gemm> match(linalg::LinalgOp op) {
  std::optional<kiln::GemmTypes> types = kiln::staticGemmTypes(op);
  if (!types || !types->a.getElementType().isInteger(8) ||
      !types->b.getElementType().isInteger(8) ||
      !types->out.getElementType().isInteger(32) || types->out.getRank() < 2)
    return std::nullopt;
  RankedTensorType ot = types->out;
  OpOperand *aOp = op.getDpsInputOperand(0), *bOp = op.getDpsInputOperand(1);
  OpOperand *out = op.getDpsInitOperand(0);
  // The body: yield(out + ext(a) * ext(b)), b signed.
  bool signedA = true, signedB = true;
  if (!kiln::cpu::isExtendedProductBody(op->getRegion(0).front(), signedA,
                                        signedB) ||
      !signedB)
    return std::nullopt;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<kiln::GemmDims> dims = kiln::gemmDims(op);
  if (!dims)
    return std::nullopt;
  int64_t kd = dims->k, nd = dims->n;
  bool nk = dims->nk;
  std::optional<ArrayRef<char>> bytes = constantBytes(bOp->get());
  Int8Gemm g;
  g.n = ranges[nd];
  g.k = ranges[kd];
  if (!bytes || (int64_t)bytes->size() != g.n * g.k || g.n % kLanes != 0)
    return std::nullopt;
  for (int64_t i = 0; i + 1 < ot.getRank(); ++i)
    g.m *= ot.getDimSize(i);
  std::vector<char> rows = weightRows(*bytes, nk, g.n, g.k, 1);
  g.b.assign(rows.begin(), rows.end());
  g.a = aOp->get();
  g.init = out->get();
  g.signedA = signedA;
  return g;
}

/// A constant tensor of `type` holding `data`.
Value constantOf(OpBuilder &b, Location loc, RankedTensorType type,
                 ArrayRef<char> data) {
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      data, alignof(std::max_align_t));
  return arith::ConstantOp::create(
      b, loc, type,
      DenseResourceElementsAttr::get(type, "kiln_vnni", std::move(blob)));
}

template <typename T>
Value constantOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elt,
                 const std::vector<T> &data) {
  return constantOf(b, loc, RankedTensorType::get(shape, elt),
                    ArrayRef<char>(reinterpret_cast<const char *>(data.data()),
                                   data.size() * sizeof(T)));
}

/// `v` (vector<64xi8>) xor 0x80 in every byte: unsigned bytes read as
/// signed ones less 128, and back.
Value flipBytes(OpBuilder &b, Location loc, Value v) {
  auto vt = cast<VectorType>(v.getType());
  return arith::XOrIOp::create(
      b, loc, v,
      arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vt, b.getI8IntegerAttr(-128))));
}

/// Whether signed bytes `w` hold no -128 (kiln-cpu-avx2-dot's vpsignb
/// cannot negate it).
bool noMinByte(ArrayRef<int8_t> w) {
  return llvm::none_of(w, [](int8_t v) { return v == -128; });
}

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The four bytes of `t` at `indices` (the last one a multiple of four),
/// broadcast to all 16 lanes as vector<64xi8>; `flip` xors them with 0x80
/// (a signed byte read as unsigned, plus 128). Bytes past the tensor's end
/// read as zero unless `inBounds`.
Value broadcastFour(OpBuilder &b, Location loc, Value t, ValueRange indices,
                    bool inBounds, bool flip) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto vt = VectorType::get({kLanes}, i32);
  Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  Value four =
      vector::TransferReadOp::create(b, loc, VectorType::get({4}, i8), t,
                                     indices, zero, ArrayRef<bool>{inBounds});
  Value word = vector::ExtractOp::create(
      b, loc,
      vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), four),
      ArrayRef<int64_t>{0});
  Value splat = vector::BroadcastOp::create(b, loc, vt, word);
  if (flip)
    splat = arith::XOrIOp::create(
        b, loc, splat,
        arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                vt, b.getI32IntegerAttr(static_cast<int32_t>(0x80808080u)))));
  return vector::BitCastOp::create(b, loc, VectorType::get({4 * kLanes}, i8),
                                   splat);
}

/// The k loop of one register tile of `rows` x `nv` accumulators (row r,
/// vector v at accs[r * nv + v]): `groups` steps of four k, then, with
/// `tail`, one more whose bytes past K read as zero. `rowBytes(b, r, kq,
/// inBounds)` gives row r's four bytes of step kq broadcast,
/// `colBytes(b, v, kq)` vector v's 64 bytes; the row side is the unsigned
/// one when `rowsUnsigned`; with `signedDot` both sides are signed (dot4).
SmallVector<Value>
kLoop(OpBuilder &b, Location loc, ValueRange accs, int64_t rows, int64_t nv,
      int64_t groups, bool tail,
      llvm::function_ref<Value(OpBuilder &, int64_t, Value, bool)> rowBytes,
      llvm::function_ref<Value(OpBuilder &, int64_t, Value)> colBytes,
      bool rowsUnsigned, bool signedDot) {
  auto step = [&](OpBuilder &nb, Value kq, ValueRange in,
                  bool inBounds) -> SmallVector<Value> {
    SmallVector<Value> cols;
    for (int64_t v = 0; v < nv; ++v)
      cols.push_back(colBytes(nb, v, kq));
    SmallVector<Value> out(in.begin(), in.end());
    for (int64_t r = 0; r < rows; ++r) {
      Value row = rowBytes(nb, r, kq, inBounds);
      for (int64_t v = 0; v < nv; ++v)
        out[r * nv + v] = rowsUnsigned
                              ? kiln::cpu::dot4(nb, loc, out[r * nv + v], row,
                                                cols[v], signedDot)
                              : kiln::cpu::dot4(nb, loc, out[r * nv + v],
                                                cols[v], row, signedDot);
    }
    return out;
  };
  auto loop = scf::ForOp::create(
      b, loc, idx(b, loc, 0), idx(b, loc, groups), idx(b, loc, 1), accs,
      [&](OpBuilder &nb, Location, Value kq, ValueRange in) {
        scf::YieldOp::create(nb, loc, step(nb, kq, in, true));
      });
  SmallVector<Value> res(loop.getResults().begin(), loop.getResults().end());
  if (tail)
    res = step(b, idx(b, loc, groups), res, false);
  return res;
}

/// The 64 bytes of a packed operand at `indices` (the last one 0).
Value loadPanel(OpBuilder &b, Location loc, Value packed, ValueRange indices) {
  Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  return vector::TransferReadOp::create(
      b, loc, VectorType::get({4 * kLanes}, b.getI8Type()), packed, indices,
      zero, ArrayRef<bool>{true});
}

/// Writes a register tile's accumulators (row x, vector v at
/// res[x * nv + v]) into `t` at (rowIdx[x], colIdx[v]); lanes past `t`'s
/// end are dropped unless `inBounds`.
Value writeTile(OpBuilder &b, Location loc, Value t, ArrayRef<Value> res,
                ArrayRef<Value> rowIdx, ArrayRef<Value> colIdx, bool inBounds) {
  int64_t nv = colIdx.size();
  for (auto [x, row] : llvm::enumerate(rowIdx))
    for (int64_t v = 0; v < nv; ++v)
      t = vector::TransferWriteOp::create(b, loc, res[x * nv + v], t,
                                          ValueRange{row, colIdx[v]},
                                          ArrayRef<bool>{inBounds})
              .getResult();
  return t;
}

/// The register tiles down a block's rows at column j: whole tiles of mr
/// rows below `fullRows`, then single rows below `rows`; `tileFn(b, t, i,
/// r)` computes the tile of r rows at row i into t.
Value overRows(
    OpBuilder &b, Location loc, Value t, Value fullRows, Value rows, int64_t mr,
    llvm::function_ref<Value(OpBuilder &, Value, Value, int64_t)> tileFn) {
  auto full = scf::ForOp::create(
      b, loc, idx(b, loc, 0), fullRows, idx(b, loc, mr), ValueRange{t},
      [&](OpBuilder &nb, Location, Value i, ValueRange ts) {
        scf::YieldOp::create(nb, loc, tileFn(nb, ts[0], i, mr));
      });
  auto rest = scf::ForOp::create(
      b, loc, fullRows, rows, idx(b, loc, 1), full.getResults(),
      [&](OpBuilder &nb, Location, Value i, ValueRange ts) {
        scf::YieldOp::create(nb, loc, tileFn(nb, ts[0], i, 1));
      });
  return rest.getResult(0);
}

/// A register tile's indices: of its r rows and nv vectors within the
/// block (from block row i, column j) and in the whole operand (offset by
/// the block's row0 and col0), and of each vector's 16-column panel.
struct TileIndices {
  SmallVector<Value> rows, globalRows, cols, globalCols, panels;
};

TileIndices tileIndices(OpBuilder &b, Location loc, Value i, Value j, int64_t r,
                        int64_t nv, Value row0, Value col0) {
  TileIndices t;
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  for (int64_t x = 0; x < r; ++x) {
    t.rows.push_back(affine::AffineApplyOp::create(b, loc, d0 + x, i));
    t.globalRows.push_back(arith::AddIOp::create(b, loc, row0, t.rows[x]));
  }
  for (int64_t v = 0; v < nv; ++v) {
    t.cols.push_back(affine::AffineApplyOp::create(b, loc, d0 + v * kLanes, j));
    t.globalCols.push_back(arith::AddIOp::create(b, loc, col0, t.cols[v]));
    t.panels.push_back(
        arith::DivUIOp::create(b, loc, t.globalCols[v], idx(b, loc, kLanes)));
  }
  return t;
}

/// How many blocks to split `size` into, in multiples of `unit`, so that
/// a block is at most `most` (at least one unit) and, with `others`
/// blocks along the other dims, there are `chunks` blocks at least where
/// `size` allows: returns the block size.
int64_t blockSize(int64_t size, int64_t unit, int64_t most, int64_t others,
                  int64_t chunks) {
  int64_t units = llvm::divideCeilSigned(size, unit);
  int64_t blocks =
      llvm::divideCeilSigned(units, std::max<int64_t>(1, most / unit));
  blocks = std::max(blocks, llvm::divideCeilSigned(chunks, others));
  blocks = std::min(blocks, units);
  return llvm::divideCeilSigned(units, blocks) * unit;
}

/// The k per 32-bit lane of an AMX tile row of `elt`: four bytes, or two
/// bf16.
int64_t amxGroup(Type elt) { return 32 / elt.getIntOrFloatBitWidth(); }

/// A quantized 2-D convolution, `conv_2d_nchw_fchw` of int8 input and
/// constant int8 weights accumulating in int32, written directly in NCHW:
/// the GEMM out[n, f, p] += w[f, k] * col[n, k, p] with the output plane p
/// along the vectors. The input's windows are copied, flipped to unsigned
/// (x ^ 0x80 = x + 128), into col[n, p / 16, k / 4, p % 16, k % 4] (p
/// padded to a whole register tile, k to a multiple of four, from a copy
/// of the input padded to cover them), so that one 64-byte load gives 16
/// output positions times 4 k; a row of the weights, [F, K] padded to
/// groups of four, gives the four broadcast bytes; the accumulators start
/// lower by 128 times each weight row's sum. No transposes.
struct Int8Conv {
  linalg::Conv2DNchwFchwOp op;
  std::vector<int8_t> w; // w[f * K + k]
  int64_t n, c, f, kh, kw, oh, ow, k;
  SmallVector<int64_t> strides, dilations;
  /// The operands' element type: i8, or (kiln-cpu-amx-bf16's
  /// convolutions) bf16, whose weights are then `w16` (element (f, k) at
  /// f * K + k) not `w`.
  Type elt;
  std::vector<uint16_t> w16;
};

/// `op` as an Int8Conv: int8 operands into int32, or with `bf16` bf16
/// ones into f32.
std::optional<Int8Conv> matchConv(linalg::Conv2DNchwFchwOp op,
                                  bool bf16 = false) {
  auto xt = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
  auto wt = dyn_cast<RankedTensorType>(op.getInputs()[1].getType());
  auto ot = dyn_cast<RankedTensorType>(op.getOutputs()[0].getType());
  if (!xt || !wt || !ot || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape() || !op.hasPureTensorSemantics())
    return std::nullopt;
  Type elt = xt.getElementType();
  if (bf16 ? !elt.isBF16() || !wt.getElementType().isBF16() ||
                 !ot.getElementType().isF32()
           : !elt.isInteger(8) || !wt.getElementType().isInteger(8) ||
                 !ot.getElementType().isInteger(32))
    return std::nullopt;
  int64_t size = bf16 ? 2 : 1;
  std::optional<ArrayRef<char>> bytes = constantBytes(op.getInputs()[1]);
  if (!bytes || (int64_t)bytes->size() != wt.getNumElements() * size)
    return std::nullopt;
  Int8Conv cv;
  cv.op = op;
  cv.elt = elt;
  cv.n = xt.getDimSize(0);
  cv.c = xt.getDimSize(1);
  cv.f = wt.getDimSize(0);
  cv.kh = wt.getDimSize(2);
  cv.kw = wt.getDimSize(3);
  cv.oh = ot.getDimSize(2);
  cv.ow = ot.getDimSize(3);
  cv.k = cv.c * cv.kh * cv.kw;
  cv.strides = SmallVector<int64_t>(op.getStrides().getValues<int64_t>());
  cv.dilations = SmallVector<int64_t>(op.getDilations().getValues<int64_t>());
  if (bf16) {
    cv.w16.resize(cv.f * cv.k);
    std::memcpy(cv.w16.data(), bytes->data(), bytes->size());
    return cv;
  }
  cv.w.resize(cv.f * cv.k);
  for (int64_t i = 0; i < cv.f * cv.k; ++i)
    cv.w[i] = static_cast<int8_t>((*bytes)[i]);
  return cv;
}

/// The most panel layouts packWindows writes code for (one per case); an
/// output width with more (an odd one past 32) takes packWindowsScalar.
constexpr int64_t kMaxLayouts = 32;

/// packWindows' result as one generic over [n, pr / 16, k4, 16, 4], its
/// input read through the window's indices (floordiv/mod of the packed
/// ones): scalar loops, one thread, for any output width.
Value packWindowsScalar(OpBuilder &b, Location loc, Value x, const Int8Conv &cv,
                        int64_t panels, int64_t k4, bool flip) {
  MLIRContext *ctx = b.getContext();
  Type i8 = cv.elt;
  int64_t g = amxGroup(i8);
  int64_t s0 = cv.strides[0], s1 = cv.strides[1];
  int64_t d0 = cv.dilations[0], d1 = cv.dilations[1];
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineExpr kx = dim(2) * g + dim(4), px = dim(1) * kLanes + dim(3);
  int64_t window = cv.kh * cv.kw;
  AffineMap read = AffineMap::get(
      5, 0,
      {dim(0), kx.floorDiv(window),
       px.floorDiv(cv.ow) * s0 + (kx % window).floorDiv(cv.kw) * d0,
       (px % cv.ow) * s1 + (kx % cv.kw) * d1},
      ctx);
  Value empty =
      tensor::EmptyOp::create(b, loc, {cv.n, panels, k4, kLanes, g}, i8);
  using IT = utils::IteratorType;
  Value col =
      linalg::GenericOp::create(
          b, loc, TypeRange{empty.getType()}, ValueRange{x}, ValueRange{empty},
          {read, AffineMap::getMultiDimIdentityMap(5, ctx)},
          SmallVector<IT>(5, IT::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value v = a[0];
            if (flip)
              v = arith::XOrIOp::create(
                  nb, nl, v,
                  arith::ConstantOp::create(nb, nl, nb.getI8IntegerAttr(-128)));
            linalg::YieldOp::create(nb, nl, ValueRange{v});
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({cv.n, panels, k4, g * kLanes}, i8), col,
      SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
}

/// The input's windows of `cv` as packed columns [n, pr / 16, k4, 64]:
/// col[n, pb, kq, 4 * pi + kr] = x[n, c, oh * s0 + kh * d0, ow * s1 + kw *
/// d1] ^ 0x80 (without `flip`, the bytes as they are) with k = 4 kq + kr = (c,
/// kh, kw) and p = 16 pb + pi = (oh, ow), `x` padded to cover every such read.
/// Written as vectors: the 16 positions of a panel fall into runs along output
/// rows (segments); each segment of one k is one 16 * s1-byte load of the
/// flattened input from the segment's first byte, its every s1-th byte shuffled
/// into the segment's lanes; the four k of a group are then interleaved byte by
/// byte. Where the segments lie depends on 16 pb modulo the output width
/// only, so the panels cycle through ow / gcd(16, ow) layouts, one case
/// each of an scf.index_switch (at most kMaxLayouts; else the scalar
/// form). Panels are spread over threads. A panel
/// whose whole loads could pass the end of `x` (the last image's last
/// ones) loads each segment's bytes only.
Value packWindows(OpBuilder &b, Location loc, Value x, const Int8Conv &cv,
                  int64_t panels, int64_t k4, bool flip = true) {
  Type i8 = cv.elt; // or bf16, in pairs of k
  int64_t g4 = amxGroup(i8);
  int64_t s0 = cv.strides[0], s1 = cv.strides[1];
  int64_t d0 = cv.dilations[0], d1 = cv.dilations[1];
  int64_t window = cv.kh * cv.kw;
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t width = xt.getDimSize(3), plane = xt.getDimSize(2) * width;
  int64_t image = xt.getDimSize(1) * plane;
  int64_t period = cv.ow / std::gcd<int64_t>(kLanes, cv.ow);
  if (period > kMaxLayouts)
    return packWindowsScalar(b, loc, x, cv, panels, k4, flip);
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({xt.getNumElements()}, i8), x,
      SmallVector<ReassociationIndices>{{0, 1, 2, 3}});
  // Output rows per period of panels.
  int64_t rowsPer = kLanes * period / cv.ow;
  struct Segment {
    int64_t row, col, lane, length; // rows past the period's first
  };
  SmallVector<SmallVector<Segment>> layouts(period);
  for (int64_t q = 0; q < period; ++q)
    for (int64_t pi = 0; pi < kLanes; ++pi) {
      int64_t pos = kLanes * q + pi, row = pos / cv.ow, col = pos % cv.ow;
      SmallVector<Segment> &segs = layouts[q];
      if (!segs.empty() && segs.back().row == row)
        ++segs.back().length;
      else
        segs.push_back({row, col, pi, 1});
    }

  auto packedType = RankedTensorType::get({cv.n, panels, k4, g4 * kLanes}, i8);
  Value empty = tensor::EmptyOp::create(b, loc, packedType.getShape(), i8);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(cv.n), b.getIndexAttr(panels)},
      ValueRange{empty}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value nIv = forall.getInductionVar(0), pb = forall.getInductionVar(1);
  Value shared = forall.getRegionIterArgs()[0];
  Value one = idx(b, loc, 1), zero = idx(b, loc, 0);
  SmallVector<OpFoldResult> offs = {nIv, pb, b.getIndexAttr(0),
                                    b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(k4),
                                     b.getIndexAttr(g4 * kLanes)};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  auto panelType = RankedTensorType::get({k4, g4 * kLanes}, i8);
  Value panel = tensor::ExtractSliceOp::create(b, loc, panelType, shared, offs,
                                               sizes, ones);
  Value q = arith::RemUIOp::create(b, loc, pb, idx(b, loc, period));
  Value g = arith::DivUIOp::create(b, loc, pb, idx(b, loc, period));
  // The flat offset of the image's input row of output row 0 of this
  // period.
  Value start = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, nIv, idx(b, loc, image)),
      arith::MulIOp::create(b, loc, g, idx(b, loc, rowsPer * s0 * width)));
  // Fewer panels than layouts use the first ones only.
  int64_t used = std::min(period, panels);
  SmallVector<int64_t> cases;
  for (int64_t c = 0; c + 1 < used; ++c)
    cases.push_back(c);
  auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{panelType}, q, cases,
                                       cases.size());
  // The lanes are shuffled as integers of the element's width (LLVM's x86
  // backend cannot legalize every bf16 vector op), read and written as
  // the element type.
  Type bits = b.getIntegerType(i8.getIntOrFloatBitWidth());
  auto vt16 = VectorType::get({kLanes}, bits);
  int64_t total = xt.getNumElements();
  auto panelLoop = [&](OpBuilder &b, int64_t layout, bool whole) -> Value {
    auto loop = scf::ForOp::create(
        b, loc, zero, idx(b, loc, k4), one, ValueRange{panel},
        [&](OpBuilder &lb, Location, Value kq, ValueRange iter) {
          Value pad = arith::ConstantOp::create(
              lb, loc, cast<TypedAttr>(lb.getZeroAttr(i8)));
          auto zeroAttr = cast<TypedAttr>(lb.getZeroAttr(bits));
          SmallVector<Value> groups;
          for (int64_t kr = 0; kr < g4; ++kr) {
            Value k = arith::AddIOp::create(
                lb, loc, arith::MulIOp::create(lb, loc, kq, idx(lb, loc, g4)),
                idx(lb, loc, kr));
            Value c = arith::DivUIOp::create(lb, loc, k, idx(lb, loc, window));
            Value rem =
                arith::RemUIOp::create(lb, loc, k, idx(lb, loc, window));
            Value kh =
                arith::DivUIOp::create(lb, loc, rem, idx(lb, loc, cv.kw));
            Value kw =
                arith::RemUIOp::create(lb, loc, rem, idx(lb, loc, cv.kw));
            // c * plane + kh * d0 * width + kw * d1, after `start`.
            Value base = arith::AddIOp::create(
                lb, loc, start,
                arith::AddIOp::create(
                    lb, loc,
                    arith::MulIOp::create(lb, loc, c, idx(lb, loc, plane)),
                    arith::AddIOp::create(
                        lb, loc,
                        arith::MulIOp::create(lb, loc, kh,
                                              idx(lb, loc, d0 * width)),
                        arith::MulIOp::create(lb, loc, kw, idx(lb, loc, d1)))));
            Value v;
            for (const Segment &seg : layouts[layout]) {
              Value at = arith::AddIOp::create(
                  lb, loc, base,
                  idx(lb, loc, seg.row * s0 * width + seg.col * s1));
              int64_t span = whole ? kLanes * s1 : (seg.length - 1) * s1 + 1;
              Value part = vector::TransferReadOp::create(
                  lb, loc, VectorType::get({span}, i8), flat, ValueRange{at},
                  pad, ArrayRef<bool>{true});
              if (bits != i8)
                part = vector::BitCastOp::create(
                    lb, loc, VectorType::get({span}, bits), part);
              if (seg.length == kLanes && s1 == 1) {
                v = part;
                continue;
              }
              // Lanes of the segment from `part`, the others from `v`.
              if (!v)
                v = arith::ConstantOp::create(
                    lb, loc, DenseElementsAttr::get(vt16, zeroAttr));
              SmallVector<int64_t> mask;
              for (int64_t l = 0; l < kLanes; ++l)
                mask.push_back(l >= seg.lane && l < seg.lane + seg.length
                                   ? kLanes + (l - seg.lane) * s1
                                   : l);
              v = vector::ShuffleOp::create(lb, loc, v, part, mask);
            }
            groups.push_back(v);
          }
          // Element g4 pi + kr of the panel row is lane pi of group kr.
          SmallVector<int64_t> lowMask, mask;
          for (int64_t l = 0; l < 2 * kLanes; ++l)
            lowMask.push_back(l);
          for (int64_t pi = 0; pi < kLanes; ++pi)
            for (int64_t kr = 0; kr < g4; ++kr)
              mask.push_back((kr / 2) * 2 * kLanes + (kr % 2) * kLanes + pi);
          Value row;
          if (g4 == 2) {
            row =
                vector::ShuffleOp::create(lb, loc, groups[0], groups[1], mask);
          } else {
            Value lo = vector::ShuffleOp::create(lb, loc, groups[0], groups[1],
                                                 lowMask);
            Value hi = vector::ShuffleOp::create(lb, loc, groups[2], groups[3],
                                                 lowMask);
            row = vector::ShuffleOp::create(lb, loc, lo, hi, mask);
          }
          auto vt64 = VectorType::get({g4 * kLanes}, i8);
          if (bits != i8)
            row = vector::BitCastOp::create(lb, loc, vt64, row);
          if (flip)
            row = arith::XOrIOp::create(
                lb, loc, row,
                arith::ConstantOp::create(
                    lb, loc,
                    DenseElementsAttr::get(vt64, lb.getI8IntegerAttr(-128))));
          Value written =
              vector::TransferWriteOp::create(lb, loc, row, iter[0],
                                              ValueRange{kq, idx(lb, loc, 0)},
                                              ArrayRef<bool>{true})
                  .getResult();
          scf::YieldOp::create(lb, loc, written);
        });
    return loop.getResult(0);
  };
  // The furthest byte after `start` that a panel of each layout reads.
  int64_t windowEnd = (xt.getDimSize(1) - 1) * plane +
                      (cv.kh - 1) * d0 * width + (cv.kw - 1) * d1;
  auto fill = [&](Region &region, int64_t layout) {
    Block *block = b.createBlock(&region);
    b.setInsertionPointToStart(block);
    int64_t furthest = 0;
    for (const Segment &seg : layouts[layout])
      furthest = std::max(furthest, seg.row * s0 * width + seg.col * s1);
    // Whole loads stay inside x.
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule,
        arith::AddIOp::create(b, loc, start,
                              idx(b, loc, windowEnd + furthest + kLanes * s1)),
        idx(b, loc, total));
    auto ifOp = scf::IfOp::create(
        b, loc, fits,
        [&](OpBuilder &tb, Location) {
          scf::YieldOp::create(tb, loc, panelLoop(tb, layout, true));
        },
        [&](OpBuilder &eb, Location) {
          scf::YieldOp::create(eb, loc, panelLoop(eb, layout, false));
        });
    scf::YieldOp::create(b, loc, ifOp.getResult(0));
  };
  for (int64_t c = 0; c + 1 < used; ++c)
    fill(sw.getCaseRegions()[c], c);
  fill(sw.getDefaultRegion(), used - 1);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, sw.getResult(0), shared, offs,
                                        sizes, ones);
  return forall.getResult(0);
}

/// The int32 values of constant `v` (through reshapes), `n` of them (a
/// splat repeated); none where it is not such a constant.
std::optional<std::vector<int32_t>> constantInt32s(Value v, int64_t n) {
  if (!getElementTypeOrSelf(v.getType()).isInteger(32))
    return std::nullopt;
  DenseIntElementsAttr splat;
  if (matchPattern(v, m_Constant(&splat)) && splat.isSplat())
    return std::vector<int32_t>(n, splat.getSplatValue<APInt>().getSExtValue());
  std::optional<ArrayRef<char>> bytes = constantBytes(v);
  if (!bytes || (int64_t)bytes->size() != 4 * n)
    return std::nullopt;
  std::vector<int32_t> values(n);
  std::memcpy(values.data(), bytes->data(), 4 * n);
  return values;
}

/// Where a convolution's accumulators start, when its init is the same
/// for every position of an output channel: a fill with a constant, or a
/// broadcast of a [F] tensor along the channels (QLinearConv's bias less
/// its zero-point terms). The init's values are then not read.
struct ChannelStart {
  std::vector<int32_t> values; // per channel, when constant
  Value perChannel;            // [F] i32, when not
};

std::optional<ChannelStart> matchChannelStart(Value init, int64_t f) {
  if (!init.hasOneUse())
    return std::nullopt;
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    APInt c;
    if (!matchPattern(fill.getInputs()[0], m_ConstantInt(&c)))
      return std::nullopt;
    return ChannelStart{std::vector<int32_t>(f, c.getSExtValue()), Value()};
  }
  auto g = init.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 4 || g.getNumParallelLoops() != 4 ||
      !g.hasPureTensorSemantics())
    return std::nullopt;
  Value in = g.getDpsInputs()[0];
  auto it = dyn_cast<RankedTensorType>(in.getType());
  MLIRContext *ctx = init.getContext();
  if (!it || it.getShape() != ArrayRef<int64_t>{f} ||
      !it.getElementType().isInteger(32) ||
      g.getIndexingMapsArray()[0] !=
          AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx) ||
      !g.getIndexingMapsArray()[1].isIdentity())
    return std::nullopt;
  Block &body = g.getRegion().front();
  if (body.getTerminator()->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  if (auto values = constantInt32s(in, f))
    return ChannelStart{std::move(*values), Value()};
  return ChannelStart{{}, in};
}

/// The op that requantizes a convolution's int32 sums (QLinearConv's
/// scale, rounding, zero point and saturation, with whatever elementwise
/// ops a fusion put after it), when the register tiles can apply it as
/// they write: the only user of `conv`'s result, a generic of parallel
/// loops reading that result through the identity and writing one output
/// (a tensor.empty) through it, its other inputs per output channel
/// (indexed by dim 1 alone) or one value each (every index constant) and
/// defined before `conv`, its body elementwise (scalars from outside
/// defined before `conv`, or constants) and its init unread.
linalg::GenericOp matchRequantize(linalg::Conv2DNchwFchwOp conv,
                                  DominanceInfo &dom) {
  Value r = conv->getResult(0);
  if (!r.hasOneUse())
    return nullptr;
  auto e = dyn_cast<linalg::GenericOp>(*r.getUsers().begin());
  if (!e || e.getNumDpsInits() != 1 || e.getNumLoops() != 4 ||
      e.getNumParallelLoops() != 4 || !e.hasPureTensorSemantics() ||
      !e.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      !e.getIndexingMapsArray().back().isIdentity())
    return nullptr;
  MLIRContext *ctx = conv.getContext();
  AffineMap channel = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
  bool sawAcc = false;
  for (OpOperand *in : e.getDpsInputOperands()) {
    AffineMap map = e.getMatchingIndexingMap(in);
    if (in->get() == r) {
      if (sawAcc || !map.isIdentity())
        return nullptr;
      sawAcc = true;
      continue;
    }
    bool constantIndices = llvm::all_of(map.getResults(), [](AffineExpr x) {
      return isa<AffineConstantExpr>(x);
    });
    if (map != channel && !constantIndices)
      return nullptr;
    if (!dom.properlyDominates(in->get(), conv))
      return nullptr;
  }
  Block &body = e.getRegion().front();
  if (!sawAcc || !body.getArgument(e.getNumDpsInputs()).use_empty() ||
      !kiln::cpu::isElementwiseBody(body))
    return nullptr;
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !dom.properlyDominates(v, conv) &&
          !matchPattern(v, m_Constant()))
        return nullptr;
  return e;
}

/// Moves the constants that the body of `e` uses from outside before `op`,
/// so that the register tiles built there can use them.
void hoistBodyConstants(linalg::GenericOp e, Operation *op,
                        DominanceInfo &dom) {
  Block &body = e.getRegion().front();
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !dom.properlyDominates(v, op))
        v.getDefiningOp()->moveBefore(op);
}

/// `requant` (matchRequantize's op, which reads `conv`'s sums) rebuilt to
/// read `sums` instead, plus `start` ([F] int32, per output channel) added
/// to them before its body: the init that the sums did not start from.
Value withChannelStart(OpBuilder &b, linalg::GenericOp requant, Value conv,
                       Value sums, Value start) {
  Location loc = requant.getLoc();
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  unsigned acc = 0;
  for (OpOperand *in : requant.getDpsInputOperands()) {
    if (in->get() == conv) {
      acc = in->getOperandNumber();
      ins.push_back(sums);
    } else {
      ins.push_back(in->get());
    }
    maps.push_back(requant.getMatchingIndexingMap(in));
  }
  ins.push_back(start);
  maps.push_back(AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx));
  maps.push_back(requant.getIndexingMapsArray().back());
  Block &body = requant.getRegion().front();
  auto g = linalg::GenericOp::create(
      b, loc, requant.getResultTypes(), ins, requant.getDpsInits(), maps,
      requant.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        IRMapping map;
        unsigned nIns = requant.getNumDpsInputs();
        for (unsigned i = 0; i < nIns; ++i)
          map.map(body.getArgument(i), a[i]);
        map.map(body.getArgument(nIns), a[nIns + 1]);
        map.map(body.getArgument(acc),
                arith::AddIOp::create(nb, nl, a[acc], a[nIns]).getResult());
        for (Operation &inner : body.without_terminator())
          nb.clone(inner, map);
        SmallVector<Value> yields;
        for (Value v : body.getTerminator()->getOperands())
          yields.push_back(map.lookupOrDefault(v));
        linalg::YieldOp::create(nb, nl, yields);
      });
  return g.getResult(0);
}

using kiln::cpu::kAmxTile;

/// The tile product c[i, j] += ext(x[i, kq, kr]) * ext(y[j floordiv 16,
/// kq, j mod 16, kr]) (x [R, K4, 4] and y [J, K4, 16, 4] bytes, c [R, C]
/// int32; or x [R, K2, 2] and y [J, K2, 16, 2] bf16, c f32; R, C and K4
/// or K2 multiples of 16), marked for kiln-cpu-amx-tiles.
Value amxProduct(OpBuilder &b, Location loc, Value x, Value y, Value c,
                 bool xSigned, bool ySigned) {
  SmallVector<AffineMap> maps = kiln::cpu::amxTileMaps(b.getContext());
  using IT = utils::IteratorType;
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{c.getType()}, ValueRange{x, y}, ValueRange{c}, maps,
      {IT::parallel, IT::parallel, IT::reduction, IT::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type acc = a[2].getType();
        if (isa<FloatType>(acc)) { // bf16 pairs summed in f32
          Value prod = arith::MulFOp::create(
              nb, nl, arith::ExtFOp::create(nb, nl, acc, a[0]),
              arith::ExtFOp::create(nb, nl, acc, a[1]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], prod)});
          return;
        }
        auto ext = [&](Value v, bool isSigned) -> Value {
          if (isSigned)
            return arith::ExtSIOp::create(nb, nl, acc, v);
          return arith::ExtUIOp::create(nb, nl, acc, v);
        };
        Value prod = arith::MulIOp::create(nb, nl, ext(a[0], xSigned),
                                           ext(a[1], ySigned));
        linalg::YieldOp::create(
            nb, nl, ValueRange{arith::AddIOp::create(nb, nl, a[2], prod)});
      });
  g->setAttr(kiln::kAmxTilesAttr, b.getUnitAttr());
  return g.getResult(0);
}

/// `v` padded with zeros at the end of each dim to `shape`, or `v` where it
/// has that shape.
Value padTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  SmallVector<OpFoldResult> lo(shape.size(), b.getIndexAttr(0)), hi;
  for (auto [have, want] : llvm::zip(t.getShape(), shape))
    hi.push_back(b.getIndexAttr(want - have));
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(t.getElementType())));
  return tensor::PadOp::create(b, loc, t.clone(shape), v, lo, hi, zero);
}

/// The leading `shape` of `v` (a padded result), or `v` where it has that
/// shape.
Value sliceTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  SmallVector<OpFoldResult> offs(shape.size(), b.getIndexAttr(0)), sizes,
      ones(shape.size(), b.getIndexAttr(1));
  for (int64_t s : shape)
    sizes.push_back(b.getIndexAttr(s));
  return tensor::ExtractSliceOp::create(b, loc, t.clone(shape), v, offs, sizes,
                                        ones);
}

/// The widest block of columns, a multiple of `nr` dividing `n` (or nr
/// itself), whose packed panel (`k` bytes per column) fits in `budget`.
int64_t columnBlock(int64_t n, int64_t nr, int64_t k, int64_t budget) {
  int64_t nb = n;
  while (nb > nr && nb * k > budget) {
    int64_t next = nb - nr;
    while (next > nr && n % next != 0)
      next -= nr;
    nb = next;
  }
  return nb;
}

/// min(block, size - iv * block): the extent of block `iv`.
Value blockExtent(OpBuilder &b, Location loc, Value iv, int64_t block,
                  int64_t size) {
  MLIRContext *ctx = b.getContext();
  AffineExpr e0 = getAffineDimExpr(0, ctx);
  return affine::AffineMinOp::create(
      b, loc,
      AffineMap::get(
          1, 0, {e0 * -block + size, getAffineConstantExpr(block, ctx)}, ctx),
      iv);
}

/// The reassociation that collapses all dims but the last of a rank-r
/// tensor into one.
SmallVector<ReassociationIndices> leadingCollapse(int64_t rank) {
  ReassociationIndices lead;
  for (int64_t i = 0; i + 1 < rank; ++i)
    lead.push_back(i);
  return {lead, {rank - 1}};
}

/// `v` as a 2-D tensor: its leading dims collapsed.
Value collapseTo2D(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() == 2)
    return v;
  return tensor::CollapseShapeOp::create(b, loc, v,
                                         leadingCollapse(t.getRank()));
}

/// The scf.forall over a convolution's (image, block of channels, block of
/// positions) that carries `out`; `b` is left at the start of its body.
scf::ForallOp convBlocks(OpBuilder &b, Location loc, int64_t n, int64_t fBlocks,
                         int64_t pBlocks, Value out) {
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(fBlocks),
                             b.getIndexAttr(pBlocks)},
      ValueRange{out}, std::nullopt);
  b.setInsertionPointToStart(forall.getBody());
  return forall;
}

/// The convolution's input padded (with anything: those k meet zero
/// weights, those p are not written) to cover channel (kp - 1) / (kh * kw)
/// and the input row of output position pr - 1, for packWindows.
Value paddedInput(OpBuilder &b, Location loc, Int8Conv &cv, int64_t kp,
                  int64_t pr) {
  Value x = cv.op.getInputs()[0];
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t s0 = cv.strides[0], d0 = cv.dilations[0];
  int64_t needC = (kp - 1) / (cv.kh * cv.kw) + 1;
  int64_t needH = ((pr - 1) / cv.ow) * s0 + (cv.kh - 1) * d0 + 1;
  int64_t padC = std::max<int64_t>(0, needC - cv.c);
  int64_t padH = std::max<int64_t>(0, needH - xt.getDimSize(2));
  if (!padC && !padH)
    return x;
  SmallVector<OpFoldResult> lo(4, b.getIndexAttr(0)), hi = lo;
  hi[1] = b.getIndexAttr(padC);
  hi[2] = b.getIndexAttr(padH);
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(xt.getElementType())));
  auto padded = RankedTensorType::get(
      {cv.n, cv.c + padC, xt.getDimSize(2) + padH, xt.getDimSize(3)},
      xt.getElementType());
  return tensor::PadOp::create(b, loc, padded, x, lo, hi, zero);
}

/// A GEMM for AMX's tile multiply, acc[..., m, n] += a[..., m, k] * b[k,
/// n]: a (the op's own operand, signed or not) and the constant b as [N][K]
/// elements of `elt` (i8 summed in int32, or bf16 summed in f32), as raw
/// bytes.
struct AmxGemm {
  Value a, init;
  bool signedA = true;
  Type elt;
  int64_t m = 1, n = 0, k = 0;
  std::vector<char> b; // element (n, k) at (n * K + k) * its size
};

/// The AMX form of the GEMM `g` (`op`): tile products with the activations'
/// rows as the tiles' rows ([M16, KG, G]: G = 4 bytes or 2 bf16 of k per
/// 32-bit lane, padded with zeros to multiples of 16 rows and 16 G k) and
/// b packed into [N16 / 16, KG, 16, G] (N padded to 16 with zero
/// columns), in an scf.forall over blocks of rows and columns. A zero
/// init becomes a zero fill of each block (kiln-cpu-amx-tiles starts its
/// tiles at zero); any other is padded and accumulated onto. The result
/// is sliced back to [M, N].
void rewriteAmxMatMul(RewriterBase &rewriter, linalg::LinalgOp op,
                      const AmxGemm &g, int64_t panelBytes,
                      int64_t parallelChunks) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  auto ot = cast<RankedTensorType>(g.init.getType());
  Type elt = g.elt, acc = ot.getElementType();
  int64_t size = elt.getIntOrFloatBitWidth() / 8, group = amxGroup(elt);
  int64_t kp = llvm::alignTo(g.k, group * kAmxTile), kg = kp / group;
  int64_t mp = llvm::alignTo(g.m, kAmxTile), np = llvm::alignTo(g.n, kAmxTile);
  int64_t panels = np / kAmxTile;
  std::vector<char> packed(panels * kg * kAmxTile * group * size, 0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t k = 0; k < g.k; ++k)
      std::memcpy(&packed[((((n / kAmxTile) * kg + k / group) * kAmxTile +
                            n % kAmxTile) *
                               group +
                           k % group) *
                          size],
                  &g.b[(n * g.k + k) * size], size);
  Value bPacked = constantOf(
      b, loc, RankedTensorType::get({panels, kg, kAmxTile, group}, elt),
      packed);

  Value a3 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({mp, kg, group}, elt),
      padTo(b, loc, collapseTo2D(b, loc, g.a), {mp, kp}),
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  auto fill = g.init.getDefiningOp<linalg::FillOp>();
  bool zeroStart =
      fill && (matchPattern(fill.getInputs()[0], m_Zero()) ||
               matchPattern(fill.getInputs()[0], m_AnyZeroFloat()));
  Value o2 = zeroStart
                 ? tensor::EmptyOp::create(b, loc, {mp, np}, acc).getResult()
                 : padTo(b, loc, collapseTo2D(b, loc, g.init), {mp, np});

  // Blocks of columns whose packed panel (K x NB elements) fits the panel
  // budget, in whole pairs of tiles where they divide N; blocks of rows
  // in pairs of tiles, enough of them for the threads.
  int64_t nr = panels % 2 == 0 ? 2 * kAmxTile : kAmxTile;
  int64_t nb = columnBlock(np, nr, kp * size, panelBytes);
  int64_t nBlocks = np / nb;
  int64_t mBlock = blockSize(mp, 2 * kAmxTile, mp, nBlocks, parallelChunks);
  int64_t mBlocks = llvm::divideCeil(mp, mBlock);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(mBlocks), b.getIndexAttr(nBlocks)},
      ValueRange{o2}, std::nullopt);
  b.setInsertionPointToStart(forall.getBody());
  AffineExpr e0 = getAffineDimExpr(0, ctx);
  Value m0 = affine::AffineApplyOp::create(b, loc, e0 * mBlock,
                                           forall.getInductionVar(0));
  Value n0 =
      affine::AffineApplyOp::create(b, loc, e0 * nb, forall.getInductionVar(1));
  Value panel0 = affine::AffineApplyOp::create(b, loc, e0 * (nb / kAmxTile),
                                               forall.getInductionVar(1));
  Value rows = blockExtent(b, loc, forall.getInductionVar(0), mBlock, mp);
  Value shared = forall.getRegionIterArgs()[0];
  int64_t dyn = ShapedType::kDynamic;
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> cOffs = {m0, n0},
                            cSizes = {rows, b.getIndexAttr(nb)};
  Value c = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({dyn, nb}, acc), shared, cOffs, cSizes,
      SmallVector<OpFoldResult>(2, one));
  if (zeroStart)
    c = linalg::FillOp::create(
            b, loc,
            ValueRange{arith::ConstantOp::create(
                b, loc, cast<TypedAttr>(b.getZeroAttr(acc)))},
            ValueRange{c})
            .getResult(0);
  Value x = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({dyn, kg, group}, elt), a3,
      SmallVector<OpFoldResult>{m0, zero, zero},
      SmallVector<OpFoldResult>{rows, b.getIndexAttr(kg),
                                b.getIndexAttr(group)},
      SmallVector<OpFoldResult>(3, one));
  Value y = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({nb / kAmxTile, kg, kAmxTile, group}, elt),
      bPacked, SmallVector<OpFoldResult>{panel0, zero, zero, zero},
      SmallVector<OpFoldResult>{b.getIndexAttr(nb / kAmxTile),
                                b.getIndexAttr(kg), b.getIndexAttr(kAmxTile),
                                b.getIndexAttr(group)},
      SmallVector<OpFoldResult>(4, one));
  Value prod = amxProduct(b, loc, x, y, c, g.signedA, /*ySigned=*/true);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, prod, shared, cOffs, cSizes,
                                        SmallVector<OpFoldResult>(2, one));
  b.setInsertionPointAfter(forall);
  Value result = sliceTo(b, loc, forall.getResult(0), {g.m, g.n});
  if (ot.getRank() != 2)
    result = tensor::ExpandShapeOp::create(b, loc, ot, result,
                                           leadingCollapse(ot.getRank()));
  rewriter.replaceOp(op, result);
}

/// `op` as a bf16 AmxGemm, when it is one: Int8Gemm's form (see match) on
/// bf16 operands summed in f32, the body out + extf(a) * extf(b), b a
/// constant or a 2-D transpose of one (a Gemm's transB).
std::optional<AmxGemm> matchBf16(linalg::LinalgOp op) {
  std::optional<kiln::GemmTypes> types = kiln::staticGemmTypes(op);
  if (!types || !types->a.getElementType().isBF16() ||
      !types->b.getElementType().isBF16() ||
      !types->out.getElementType().isF32() || types->out.getRank() < 2)
    return std::nullopt;
  bool signedA = true, signedB = true;
  if (!kiln::cpu::isExtendedProductBody(op->getRegion(0).front(), signedA,
                                        signedB))
    return std::nullopt;
  std::optional<kiln::GemmDims> dims = kiln::gemmDims(op);
  if (!dims)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AmxGemm g;
  g.elt = types->a.getElementType();
  g.n = ranges[dims->n];
  g.k = ranges[dims->k];
  // A Gemm's transB reads its constant through a transpose.
  Value bv = op.getDpsInputOperand(1)->get();
  bool nk = dims->nk;
  if (auto t = bv.getDefiningOp<linalg::TransposeOp>();
      t && t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    bv = t.getInput();
    nk = !nk;
  }
  std::optional<ArrayRef<char>> bytes = constantBytes(bv);
  if (!bytes || (int64_t)bytes->size() != 2 * g.n * g.k)
    return std::nullopt;
  for (int64_t i = 0; i + 1 < types->out.getRank(); ++i)
    g.m *= types->out.getDimSize(i);
  g.b = weightRows(*bytes, nk, g.n, g.k, 2);
  g.a = op.getDpsInputOperand(0)->get();
  g.init = op.getDpsInitOperand(0)->get();
  return g;
}

/// An Int8Gemm as an AmxGemm.
AmxGemm amxGemm(Type i8, const Int8Gemm &g) {
  AmxGemm a{g.a, g.init, g.signedA, i8, g.m, g.n, g.k, {}};
  a.b.assign(reinterpret_cast<const char *>(g.b.data()),
             reinterpret_cast<const char *>(g.b.data()) + g.b.size());
  return a;
}

/// The AMX form of a quantized convolution: out[n, f, p] += w[f, k] *
/// col[n, k, p] as tile products with the weights as the tiles' rows
/// ([F16, K64 / 4, 4] bytes: channels and k padded with zeros to
/// multiples of 16 and 64) and the windows copied as they are (signed)
/// into [n, P16, K64 / 4, 16, 4], 16 positions by 4 k per 64-byte tile
/// row. Both sides signed: no weight sums. Where the init is the same
/// along each channel (QLinearConv's bias), the blocks are filled with
/// zeros and the start is added where the sums are read (the
/// requantization after, rebuilt; or an add; nothing where it is zero);
/// any other init is padded to [n, F16, P16] and accumulated onto. The
/// result is sliced back to [n, F, P]. A bf16 convolution (kiln-cpu-amx-bf16)
/// is the same in pairs of k ([F16, K32 / 2, 2] weights, [n, P16, K32 / 2,
/// 16, 2] windows) into f32, always onto its padded init.
void rewriteConvAmx(RewriterBase &rewriter, Int8Conv &cv, int64_t panelBytes,
                    int64_t parallelChunks) {
  linalg::Conv2DNchwFchwOp op = cv.op;
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  Type i8 = cv.elt; // or bf16
  int64_t g4 = amxGroup(i8);
  int64_t kp = llvm::alignTo(cv.k, g4 * kAmxTile), k4 = kp / g4;
  int64_t fp = llvm::alignTo(cv.f, kAmxTile);
  int64_t p = cv.oh * cv.ow;
  int64_t panels = llvm::divideCeil(p, kAmxTile), pr = panels * kAmxTile;

  // The weights padded to [fp, kp] (w16 for bf16, else w).
  auto padWeights = [&](const auto &w) {
    std::vector<std::decay_t<decltype(w[0])>> wp(fp * kp, 0);
    for (int64_t f = 0; f < cv.f; ++f)
      for (int64_t k = 0; k < cv.k; ++k)
        wp[f * kp + k] = w[f * cv.k + k];
    return constantOf(b, loc, {fp, k4, g4}, i8, wp);
  };
  Value wCst = cv.w16.empty() ? padWeights(cv.w) : padWeights(cv.w16);
  Value col = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({cv.n, panels, k4, kAmxTile, g4}, i8),
      packWindows(b, loc, paddedInput(b, loc, cv, kp, pr), cv, panels, k4,
                  /*flip=*/false),
      SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});

  // Where the init is the same along each channel (QLinearConv's bias),
  // the tiles start at zero and the start is added where the sums are
  // read: in the requantization after the convolution, or in an add of
  // its own. The init is then never written.
  Value init = op.getOutputs()[0];
  auto ot = cast<RankedTensorType>(init.getType());
  Type i32 = ot.getElementType(); // or f32
  std::optional<ChannelStart> start;
  if (isa<IntegerType>(i32))
    start = matchChannelStart(init, cv.f);
  DominanceInfo dom(op->getParentOp());
  linalg::GenericOp requant = start ? matchRequantize(op, dom) : nullptr;
  SmallVector<ReassociationIndices> plane = {{0}, {1}, {2, 3}};
  Value out =
      start ? tensor::EmptyOp::create(b, loc, {cv.n, fp, pr}, i32).getResult()
            : padTo(b, loc,
                    tensor::CollapseShapeOp::create(
                        b, loc, RankedTensorType::get({cv.n, cv.f, p}, i32),
                        init, plane),
                    {cv.n, fp, pr});

  // Blocks of whole pairs of tiles: of the plane, so that a block's
  // windows (kp bytes per position) fit the panel budget; of the
  // channels, for threads. The last block of each is a whole number of
  // tiles too.
  int64_t pair = 2 * kAmxTile;
  int64_t pBlock = blockSize(pr, pair, panelBytes / (kp * (4 / g4)), cv.n, 1);
  int64_t pBlocks = llvm::divideCeil(pr, pBlock);
  int64_t fBlock = blockSize(fp, pair, fp, cv.n * pBlocks, parallelChunks);
  int64_t fBlocks = llvm::divideCeil(fp, fBlock);
  scf::ForallOp forall = convBlocks(b, loc, cv.n, fBlocks, pBlocks, out);
  AffineExpr e0 = getAffineDimExpr(0, ctx);
  Value nIv = forall.getInductionVar(0);
  Value f0 = affine::AffineApplyOp::create(b, loc, e0 * fBlock,
                                           forall.getInductionVar(1));
  Value p0 = affine::AffineApplyOp::create(b, loc, e0 * pBlock,
                                           forall.getInductionVar(2));
  Value rows = blockExtent(b, loc, forall.getInductionVar(1), fBlock, fp);
  Value cols = blockExtent(b, loc, forall.getInductionVar(2), pBlock, pr);
  Value pb0 = affine::AffineApplyOp::create(b, loc, e0.floorDiv(kAmxTile), p0);
  Value pbs =
      affine::AffineApplyOp::create(b, loc, e0.floorDiv(kAmxTile), cols);
  Value shared = forall.getRegionIterArgs()[0];
  int64_t dyn = ShapedType::kDynamic;
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> cOffs = {nIv, f0, p0}, cSizes = {one, rows, cols};
  Value c = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({dyn, dyn}, i32), shared, cOffs, cSizes,
      SmallVector<OpFoldResult>(3, one));
  if (start)
    c = linalg::FillOp::create(b, loc,
                               ValueRange{arith::ConstantOp::create(
                                   b, loc, b.getI32IntegerAttr(0))},
                               ValueRange{c})
            .getResult(0);
  Value x = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({dyn, k4, g4}, i8), wCst,
      SmallVector<OpFoldResult>{f0, zero, zero},
      SmallVector<OpFoldResult>{rows, b.getIndexAttr(k4), b.getIndexAttr(g4)},
      SmallVector<OpFoldResult>(3, one));
  Value y = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({dyn, k4, kAmxTile, g4}, i8), col,
      SmallVector<OpFoldResult>{nIv, pb0, zero, zero, zero},
      SmallVector<OpFoldResult>{one, pbs, b.getIndexAttr(k4),
                                b.getIndexAttr(kAmxTile), b.getIndexAttr(g4)},
      SmallVector<OpFoldResult>(5, one));
  Value prod = amxProduct(b, loc, x, y, c, /*xSigned=*/true, /*ySigned=*/true);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, prod, shared, cOffs, cSizes,
                                        SmallVector<OpFoldResult>(3, one));
  b.setInsertionPointAfter(forall);
  Value sums = tensor::ExpandShapeOp::create(
      b, loc, ot, sliceTo(b, loc, forall.getResult(0), {cv.n, cv.f, p}), plane);
  // A start of zeros (ConvInteger without zero points) adds nothing.
  bool zeroStart = start && !start->perChannel &&
                   llvm::all_of(start->values, [](int32_t v) { return !v; });
  if (!start || zeroStart) {
    rewriter.replaceOp(op, sums);
    return;
  }
  Value startPerChannel = start->perChannel
                              ? start->perChannel
                              : constantOf(b, loc, {cv.f}, i32, start->values);
  if (requant) {
    rewriter.setInsertionPoint(requant);
    rewriter.replaceOp(requant,
                       withChannelStart(rewriter, requant, op->getResult(0),
                                        sums, startPerChannel));
  } else {
    // The sums plus the start, elementwise (the init's own op).
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap channel = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
    using IT = utils::IteratorType;
    Value added =
        linalg::GenericOp::create(
            b, loc, TypeRange{ot}, ValueRange{sums, startPerChannel},
            ValueRange{tensor::EmptyOp::create(b, loc, ot.getShape(), i32)},
            {id, channel, id}, SmallVector<IT>(4, IT::parallel),
            [](OpBuilder &nb, Location nl, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::AddIOp::create(nb, nl, a[0], a[1])});
            })
            .getResult(0);
    rewriter.replaceOp(op, added);
    return;
  }
  rewriter.eraseOp(op);
}

struct Int8GemmPass : public kiln::impl::KilnCpuInt8GemmBase<Int8GemmPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Int8Gemm>> gemms;
    std::vector<Int8Conv> convs;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
        if (auto cv = matchConv(conv))
          convs.push_back(std::move(*cv));
      } else if (auto g = match(op)) {
        gemms.emplace_back(op, std::move(*g));
      }
    });
    IRRewriter rewriter(&getContext());
    // A MatMul of fewer than 16 rows would fill a fraction of each tile:
    // it keeps the register tiles, which broadcast its rows.
    for (auto &[op, g] : gemms) {
      if (amx && g.m >= kAmxTile)
        rewriteAmxMatMul(rewriter, op, amxGemm(rewriter.getI8Type(), g),
                         panelBytes, parallelChunks);
      else
        rewrite(rewriter, op, g);
    }
    for (Int8Conv &cv : convs) {
      if (amx)
        rewriteConvAmx(rewriter, cv, panelBytes, parallelChunks);
      else
        rewriteConv(rewriter, cv);
    }
  }

  void rewriteConv(RewriterBase &rewriter, Int8Conv &cv) {
    linalg::Conv2DNchwFchwOp op = cv.op;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    OpBuilder &b = rewriter;
    b.setInsertionPoint(op);
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    int64_t k4 = llvm::divideCeil(cv.k, 4), kp = 4 * k4;
    int64_t p = cv.oh * cv.ow;
    int64_t vectors = llvm::divideCeil(p, kLanes);
    int64_t nv = vectors >= 2 && tileVectors >= 2 ? 2 : 1, nr = nv * kLanes;
    int64_t pr = llvm::alignTo(p, nr); // p padded to whole register tiles
    int64_t mr = std::min<int64_t>(registerTileM, cv.f);
    // Signed products (the windows read back as signed) need no
    // correction.
    bool signedProducts = signedDot && noMinByte(cv.w);

    // The weights as [F, Kp] and each row's sum times -128.
    std::vector<int8_t> wp(cv.f * kp, 0);
    std::vector<int32_t> corr(cv.f);
    for (int64_t f = 0; f < cv.f; ++f) {
      int64_t sum = 0;
      for (int64_t k = 0; k < cv.k; ++k) {
        wp[f * kp + k] = cv.w[f * cv.k + k];
        sum += cv.w[f * cv.k + k];
      }
      corr[f] = signedProducts ? 0 : static_cast<int32_t>(-128 * sum);
    }
    // Where the init is the same along each channel, the accumulators
    // start there in registers (the init is not read); a requantization
    // after the convolution is applied as the tiles are written, so that
    // the int32 sums are never stored.
    Value init = op.getOutputs()[0];
    std::optional<ChannelStart> start = matchChannelStart(init, cv.f);
    if (start && !start->perChannel)
      for (int64_t f = 0; f < cv.f; ++f)
        corr[f] += start->values[f];
    DominanceInfo dom(op->getParentOp());
    linalg::GenericOp requant = start ? matchRequantize(op, dom) : nullptr;
    // The requantization's input that is the convolution's sums.
    unsigned requantAcc = 0;
    if (requant) {
      hoistBodyConstants(requant, op, dom);
      for (OpOperand *in : requant.getDpsInputOperands())
        if (in->get() == op->getResult(0))
          requantAcc = in->getOperandNumber();
    }
    Value wCst = constantOf(b, loc, {cv.f, kp}, i8, wp);
    Value corrCst = constantOf(b, loc, {cv.f}, i32, corr);

    Value packedCol = packWindows(b, loc, paddedInput(b, loc, cv, kp, pr), cv,
                                  pr / kLanes, k4);

    // The output as [n, F, P]: the init, a new tensor where the init is
    // not read, of the requantization's result type where it is applied.
    auto ot = cast<RankedTensorType>(init.getType());
    if (requant)
      ot = cast<RankedTensorType>(requant.getResult(0).getType());
    Type outElt = ot.getElementType();
    Value dest =
        start ? tensor::EmptyOp::create(b, loc, ot.getShape(), outElt) : init;
    SmallVector<ReassociationIndices> plane = {{0}, {1}, {2, 3}};
    Value out = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({cv.n, cv.f, p}, outElt), dest, plane);

    // Blocks: of the plane, so that a block's packed columns (kp bytes per
    // position) fit the panel budget; of the rows, for threads.
    int64_t pBlock = blockSize(p, nr, panelBytes / kp, cv.n, 1);
    int64_t pBlocks = llvm::divideCeil(p, pBlock);
    int64_t fBlock = blockSize(cv.f, mr, cv.f, cv.n * pBlocks, parallelChunks);
    int64_t fBlocks = llvm::divideCeil(cv.f, fBlock);

    scf::ForallOp forall = convBlocks(b, loc, cv.n, fBlocks, pBlocks, out);
    Value nIv = forall.getInductionVar(0);
    AffineExpr e0 = getAffineDimExpr(0, ctx);
    Value f0 = affine::AffineApplyOp::create(b, loc, e0 * fBlock,
                                             forall.getInductionVar(1));
    Value p0 = affine::AffineApplyOp::create(b, loc, e0 * pBlock,
                                             forall.getInductionVar(2));
    Value rows = blockExtent(b, loc, forall.getInductionVar(1), fBlock, cv.f);
    Value cols = blockExtent(b, loc, forall.getInductionVar(2), pBlock, p);
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offs = {nIv, f0, p0},
                              sizes = {b.getIndexAttr(1), rows, cols},
                              ones(3, b.getIndexAttr(1));
    auto tileType = RankedTensorType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic}, outElt);
    Value tile = tensor::ExtractSliceOp::create(b, loc, tileType, shared, offs,
                                                sizes, ones);
    Value fullRows = affine::AffineApplyOp::create(b, loc, e0 - e0 % mr, rows);
    Value fullCols = affine::AffineApplyOp::create(b, loc, e0 - e0 % nr, cols);

    // One register tile at block row i, column j: `r` rows, nv vectors,
    // written whole or (`inBounds` false) only within the plane.
    auto registerTile = [&](OpBuilder &b, Value t, Value i, Value j, int64_t r,
                            bool inBounds) -> Value {
      TileIndices ti = tileIndices(b, loc, i, j, r, nv, f0, p0);
      ArrayRef<Value> rowIdx = ti.rows, colIdx = ti.cols, wRow = ti.globalRows,
                      pack = ti.panels;
      Value zero32 = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
      auto vt = VectorType::get({kLanes}, i32);
      SmallVector<Value> accs;
      for (int64_t x = 0; x < r; ++x) {
        Value c =
            tensor::ExtractOp::create(b, loc, corrCst, ValueRange{wRow[x]});
        if (start && start->perChannel)
          c = arith::AddIOp::create(
              b, loc, c,
              tensor::ExtractOp::create(b, loc, start->perChannel,
                                        ValueRange{wRow[x]}));
        Value splat = vector::BroadcastOp::create(b, loc, vt, c);
        for (int64_t v = 0; v < nv; ++v)
          accs.push_back(
              start ? splat
                    : arith::AddIOp::create(
                          b, loc,
                          vector::TransferReadOp::create(
                              b, loc, vt, t, ValueRange{rowIdx[x], colIdx[v]},
                              zero32, ArrayRef<bool>{inBounds}),
                          splat)
                          .getResult());
      }
      SmallVector<Value> res = kLoop(
          b, loc, accs, r, nv, k4, false,
          [&](OpBuilder &nb, int64_t x, Value kq, bool) {
            Value k = arith::MulIOp::create(nb, loc, kq, idx(nb, loc, 4));
            return broadcastFour(nb, loc, wCst, ValueRange{wRow[x], k}, true,
                                 false);
          },
          [&](OpBuilder &nb, int64_t v, Value kq) {
            Value col =
                loadPanel(nb, loc, packedCol,
                          ValueRange{nIv, pack[v], kq, idx(nb, loc, 0)});
            return signedProducts ? flipBytes(nb, loc, col) : col;
          },
          /*rowsUnsigned=*/false, signedProducts);
      if (requant) {
        // The requantization's other inputs: a value per row (its output
        // channel) or one for all, broadcast.
        for (int64_t x = 0; x < r; ++x) {
          SmallVector<Value> inputs;
          for (OpOperand *in : requant.getDpsInputOperands()) {
            if (in->getOperandNumber() == requantAcc) {
              inputs.push_back(Value());
              continue;
            }
            AffineMap map = requant.getMatchingIndexingMap(in);
            SmallVector<Value> at;
            for (AffineExpr e : map.getResults())
              at.push_back(
                  isa<AffineDimExpr>(e)
                      ? wRow[x]
                      : idx(b, loc, cast<AffineConstantExpr>(e).getValue()));
            Value scalar = tensor::ExtractOp::create(b, loc, in->get(), at);
            inputs.push_back(vector::BroadcastOp::create(
                b, loc, VectorType::get({kLanes}, scalar.getType()), scalar));
          }
          for (int64_t v = 0; v < nv; ++v) {
            inputs[requantAcc] = res[x * nv + v];
            res[x * nv + v] = kiln::cpu::applyEpilogueTo(b, requant, inputs);
          }
        }
      }
      return writeTile(b, loc, t, res, rowIdx, colIdx, inBounds);
    };

    // Rows: whole register tiles, then single rows; columns: whole
    // register tiles, then one partial tile where the block ends inside
    // one.
    auto rowTiles = [&](OpBuilder &b1, Value t, Value j, bool inBounds) {
      return overRows(b1, loc, t, fullRows, rows, mr,
                      [&](OpBuilder &b2, Value t2, Value i, int64_t r) {
                        return registerTile(b2, t2, i, j, r, inBounds);
                      });
    };
    auto columns = scf::ForOp::create(
        b, loc, idx(b, loc, 0), fullCols, idx(b, loc, nr), ValueRange{tile},
        [&](OpBuilder &b1, Location, Value j, ValueRange t1) {
          scf::YieldOp::create(b1, loc, rowTiles(b1, t1[0], j, true));
        });
    Value result = columns.getResult(0);
    if (p % nr != 0) {
      Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            fullCols, cols);
      auto ifOp = scf::IfOp::create(
          b, loc, partial,
          [&](OpBuilder &b1, Location) {
            scf::YieldOp::create(b1, loc,
                                 rowTiles(b1, result, fullCols, false));
          },
          [&](OpBuilder &b1, Location) {
            scf::YieldOp::create(b1, loc, result);
          });
      result = ifOp.getResult(0);
    }
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, result, shared, offs, sizes,
                                          ones);
    b.setInsertionPointAfter(forall);
    if (!requant) {
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          op, ot, forall.getResult(0), plane);
      return;
    }
    rewriter.setInsertionPoint(requant);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        requant, ot, forall.getResult(0), plane);
    rewriter.eraseOp(op);
  }

  /// The GEMM form: acc[m, n] += a[m, k] * b[k, n] with a (activations)
  /// broadcast four bytes at a time and the constant b packed.
  void rewrite(RewriterBase &rewriter, linalg::LinalgOp op, const Int8Gemm &g) {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    OpBuilder &b = rewriter;
    b.setInsertionPoint(op);
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    int64_t k4 = llvm::divideCeil(g.k, 4);
    int64_t vectors = g.n / kLanes;

    // b packed for the dot products, and the accumulators' correction:
    // the unsigned form reads signed activations flipped (128 higher),
    // the signed form unsigned ones flipped (128 lower).
    bool signedProducts = signedDot && noMinByte(g.b);
    bool flipA = signedProducts ? !g.signedA : g.signedA;
    std::vector<int8_t> packed(vectors * k4 * kLanes * 4, 0);
    std::vector<int32_t> correction(g.n, 0);
    for (int64_t n = 0; n < g.n; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < g.k; ++k) {
        int8_t v = g.b[n * g.k + k];
        sum += v;
        packed[(((n / kLanes) * k4 + k / 4) * kLanes + n % kLanes) * 4 +
               k % 4] = v;
      }
      if (flipA)
        correction[n] =
            static_cast<int32_t>((signedProducts ? 128 : -128) * sum);
    }
    Value bPacked = constantOf(b, loc, {vectors, k4, kLanes * 4}, i8, packed);
    Value corr;
    if (flipA)
      corr = constantOf(b, loc, {g.n}, i32, correction);

    // a as [M, K], the accumulator as [M, N].
    Value a2 = collapseTo2D(b, loc, g.a);
    Value o2 = collapseTo2D(b, loc, g.init);

    // Register tile and thread blocks. Columns: nr = two vectors when they
    // divide n; a block of columns whose packed panel (K x NB bytes) fits
    // in the panel budget. Rows: enough blocks for the threads.
    int64_t nv = vectors % 2 == 0 && tileVectors >= 2 ? 2 : 1;
    int64_t nr = nv * kLanes;
    int64_t nb = columnBlock(g.n, nr, g.k, panelBytes);
    int64_t nBlocks = g.n / nb;
    int64_t mr = std::min<int64_t>(registerTileM, g.m);
    int64_t mBlock = blockSize(g.m, mr, g.m, nBlocks, parallelChunks);
    int64_t mBlocks = llvm::divideCeil(g.m, mBlock);

    auto vt = VectorType::get({kLanes}, i32);
    auto forall =
        scf::ForallOp::create(b, loc,
                              ArrayRef<OpFoldResult>{b.getIndexAttr(mBlocks),
                                                     b.getIndexAttr(nBlocks)},
                              ValueRange{o2}, std::nullopt);
    b.setInsertionPointToStart(forall.getBody());
    Value mb = forall.getInductionVar(0), nbIv = forall.getInductionVar(1);
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    Value m0 = affine::AffineApplyOp::create(b, loc, d0 * mBlock, mb);
    Value n0 = affine::AffineApplyOp::create(b, loc, d0 * nb, nbIv);
    Value rows = blockExtent(b, loc, mb, mBlock, g.m);
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offs = {m0, n0},
                              sizes = {rows, b.getIndexAttr(nb)},
                              ones = {b.getIndexAttr(1), b.getIndexAttr(1)};
    Value tile =
        tensor::ExtractSliceOp::create(b, loc, shared, offs, sizes, ones);
    // Whole register tiles of mr rows, then single rows.
    Value fullRows = affine::AffineApplyOp::create(b, loc, d0 - d0 % mr, rows);

    // One register tile: `r` rows from row i and nv vectors from column j
    // of the block, its accumulators carried through the k loop.
    auto registerTile = [&](OpBuilder &b, Value t, Value i, Value j,
                            int64_t r) -> Value {
      TileIndices ti = tileIndices(b, loc, i, j, r, nv, m0, n0);
      ArrayRef<Value> rowIdx = ti.rows, colIdx = ti.cols, gcol = ti.globalCols,
                      aRows = ti.globalRows, panel = ti.panels;
      Value zero32 = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
      SmallVector<Value> accs;
      for (int64_t x = 0; x < r; ++x)
        for (int64_t v = 0; v < nv; ++v) {
          Value acc = vector::TransferReadOp::create(
              b, loc, vt, t, ValueRange{rowIdx[x], colIdx[v]}, zero32,
              ArrayRef<bool>{true});
          if (corr)
            acc =
                arith::AddIOp::create(b, loc, acc,
                                      vector::TransferReadOp::create(
                                          b, loc, vt, corr, ValueRange{gcol[v]},
                                          zero32, ArrayRef<bool>{true}));
          accs.push_back(acc);
        }
      SmallVector<Value> res = kLoop(
          b, loc, accs, r, nv, g.k / 4, g.k % 4 != 0,
          [&](OpBuilder &nb, int64_t x, Value kq, bool inBounds) {
            Value k = arith::MulIOp::create(nb, loc, kq, idx(nb, loc, 4));
            return broadcastFour(nb, loc, a2, ValueRange{aRows[x], k}, inBounds,
                                 flipA);
          },
          [&](OpBuilder &nb, int64_t v, Value kq) {
            return loadPanel(nb, loc, bPacked,
                             ValueRange{panel[v], kq, idx(nb, loc, 0)});
          },
          /*rowsUnsigned=*/true, signedProducts);
      return writeTile(b, loc, t, res, rowIdx, colIdx, true);
    };

    auto columns = scf::ForOp::create(
        b, loc, idx(b, loc, 0), idx(b, loc, nb), idx(b, loc, nr),
        ValueRange{tile}, [&](OpBuilder &b1, Location, Value j, ValueRange t1) {
          scf::YieldOp::create(
              b1, loc,
              overRows(b1, loc, t1[0], fullRows, rows, mr,
                       [&](OpBuilder &b2, Value t2, Value i, int64_t r) {
                         return registerTile(b2, t2, i, j, r);
                       }));
        });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, columns.getResult(0), shared,
                                          offs, sizes, ones);
    b.setInsertionPointAfter(forall);
    Value result = forall.getResult(0);
    auto ot = cast<RankedTensorType>(g.init.getType());
    if (ot.getRank() != 2)
      result = tensor::ExpandShapeOp::create(b, loc, ot, result,
                                             leadingCollapse(ot.getRank()));
    rewriter.replaceOp(op, result);
  }
};

/// The product term extui(shuffle(a, a, [q, q+4, ...])) *
/// extsi(shuffle(b, b, [q, q+4, ...])) of a 4-way dot product of
/// vector<64xi8> operands (extsi of a too with `signedA`): sets a, b and q.
bool dotTerm(Value p, Value &a, Value &b, int64_t &q, bool signedA) {
  auto mul = p.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  Operation *ea = mul.getLhs().getDefiningOp();
  auto sb = mul.getRhs().getDefiningOp<arith::ExtSIOp>();
  if (!ea || !sb ||
      !(signedA ? isa<arith::ExtSIOp>(ea) : isa<arith::ExtUIOp>(ea)))
    return false;
  auto xa = ea->getOperand(0).getDefiningOp<vector::ShuffleOp>();
  auto xb = sb.getIn().getDefiningOp<vector::ShuffleOp>();
  if (!xa || !xb || xa.getV1() != xa.getV2() || xb.getV1() != xb.getV2() ||
      xa.getMask() != xb.getMask())
    return false;
  auto vt = dyn_cast<VectorType>(xa.getV1().getType());
  if (!vt || vt.getShape() != ArrayRef<int64_t>{4 * kLanes} ||
      !vt.getElementType().isInteger(8) ||
      xb.getV1().getType() != xa.getV1().getType())
    return false;
  ArrayRef<int64_t> mask = xa.getMask();
  if ((int64_t)mask.size() != kLanes || mask[0] < 0 || mask[0] > 3)
    return false;
  for (int64_t l = 0; l < kLanes; ++l)
    if (mask[l] != 4 * l + mask[0])
      return false;
  a = xa.getV1();
  b = xb.getV1();
  q = mask[0];
  return true;
}

/// Half `h` (0: the low elements) of the 1-D vector `v`.
Value halfOf(OpBuilder &b, Location loc, Value v, int64_t h) {
  int64_t n = cast<VectorType>(v.getType()).getNumElements() / 2;
  return vector::ExtractStridedSliceOp::create(
      b, loc, v, ArrayRef<int64_t>{n * h}, ArrayRef<int64_t>{n},
      ArrayRef<int64_t>{1});
}

/// The 1-D vectors `lo` and `hi` (of one type) as one of twice the length.
Value joinHalves(OpBuilder &b, Location loc, Value lo, Value hi) {
  SmallVector<int64_t> all(2 * cast<VectorType>(lo.getType()).getNumElements());
  std::iota(all.begin(), all.end(), 0);
  return vector::ShuffleOp::create(b, loc, lo, hi, all);
}

/// The accumulator and operands of the chain of four adds ending at `end`
/// of dotTerm's terms (q = 0..3 of one (a, b), each add's sum used only by
/// the next; `signedA` as dotTerm's); the adds in `chain`.
bool dotChain(arith::AddIOp end, bool signedA, Value &acc, Value &a, Value &b,
              SmallVectorImpl<Operation *> &chain) {
  acc = end.getResult();
  unsigned seen = 0;
  for (int i = 0; i < 4; ++i) {
    auto add = acc.getDefiningOp<arith::AddIOp>();
    if (!add || (i > 0 && !add->hasOneUse()))
      return false;
    Value ta, tb;
    int64_t q;
    Value x = add.getLhs(), p = add.getRhs();
    if (!dotTerm(p, ta, tb, q, signedA)) {
      std::swap(x, p);
      if (!dotTerm(p, ta, tb, q, signedA))
        return false;
    }
    if ((i > 0 && (ta != a || tb != b)) || (seen & (1u << q)))
      return false;
    a = ta;
    b = tb;
    seen |= 1u << q;
    chain.push_back(add);
    acc = x;
  }
  return seen == 0xf;
}

/// The vectors `v` and `perm` of a marked `from_elements` whose lane l is
/// `v[index_cast(perm[l])]`, or nulls.
std::pair<Value, Value> permuteOperands(vector::FromElementsOp op) {
  Value v, perm;
  for (auto [l, elem] : llvm::enumerate(op.getElements())) {
    auto ex = elem.getDefiningOp<vector::ExtractOp>();
    if (!ex || ex.getDynamicPosition().size() != 1 ||
        ex.getStaticPosition().size() != 1)
      return {};
    auto cast = ex.getDynamicPosition()[0].getDefiningOp<arith::IndexCastOp>();
    auto index = cast ? cast.getIn().getDefiningOp<vector::ExtractOp>()
                      : vector::ExtractOp();
    if (!index || index.getStaticPosition() != ArrayRef<int64_t>{(int64_t)l} ||
        (v && ex.getSource() != v) || (perm && index.getSource() != perm))
      return {};
    v = ex.getSource();
    perm = index.getSource();
  }
  return {v, perm};
}

struct Avx2DotPass : public kiln::impl::KilnCpuAvx2DotBase<Avx2DotPass> {
  void runOnOperation() override {
    // Variable lane permutations of 8 f32 (kiln-cpu-sparse-gemm's AVX2
    // expansion): one vpermps each.
    SmallVector<vector::FromElementsOp> permutes;
    getOperation().walk([&](vector::FromElementsOp op) {
      if (op->hasAttr(kiln::kAvx2PermuteAttr))
        permutes.push_back(op);
    });
    auto vt = VectorType::get({8}, Float32Type::get(&getContext()));
    auto it = VectorType::get({8}, IntegerType::get(&getContext(), 32));
    IRRewriter rewriter(&getContext());
    for (vector::FromElementsOp op : permutes) {
      auto [v, perm] = permuteOperands(op);
      if (!v || op.getType() != vt || v.getType() != vt || perm.getType() != it)
        continue;
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, LLVM::CallIntrinsicOp::create(
                                 rewriter, op.getLoc(), vt,
                                 rewriter.getStringAttr("llvm.x86.avx2.permps"),
                                 ValueRange{v, perm})
                                 .getResult(0));
    }

    SmallVector<arith::AddIOp> ends;
    getOperation().walk([&](arith::AddIOp add) {
      if (add->hasAttr(kiln::cpu::kAvx2DotAttr))
        ends.push_back(add);
    });
    for (arith::AddIOp end : ends) {
      Value acc, a, w;
      SmallVector<Operation *> chain;
      if (!dotChain(end, /*signedA=*/true, acc, a, w, chain))
        continue;
      Location loc = end.getLoc();
      rewriter.setInsertionPoint(end);
      Type i8 = rewriter.getI8Type(), i16 = rewriter.getI16Type(),
           i32 = rewriter.getI32Type();
      auto half8 = VectorType::get({2 * kLanes}, i8);
      auto half16 = VectorType::get({kLanes}, i16);
      auto half32 = VectorType::get({kLanes / 2}, i32);
      Value ones = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(half16, rewriter.getI16IntegerAttr(1)));
      auto call = [&](Type type, StringRef name, ValueRange args) {
        return LLVM::CallIntrinsicOp::create(rewriter, loc, type,
                                             rewriter.getStringAttr(name), args)
            .getResult(0);
      };
      SmallVector<Value> sums;
      for (int64_t h = 0; h < 2; ++h) {
        Value ah = halfOf(rewriter, loc, a, h);
        Value wh = halfOf(rewriter, loc, w, h);
        // |a| times w with a's signs: the products a * w, two per int16
        // (|a| <= 128, |w| <= 127), then two such per int32 lane.
        Value absA = math::AbsIOp::create(rewriter, loc, ah);
        Value signedW = call(half8, "llvm.x86.avx2.psign.b", {wh, ah});
        Value pairs =
            call(half16, "llvm.x86.avx2.pmadd.ub.sw", {absA, signedW});
        sums.push_back(call(half32, "llvm.x86.avx2.pmadd.wd", {pairs, ones}));
      }
      Value sum = joinHalves(rewriter, loc, sums[0], sums[1]);
      rewriter.replaceOp(end, arith::AddIOp::create(rewriter, loc, acc, sum));
    }
  }
};

struct VnniDotPass : public kiln::impl::KilnCpuVnniDotBase<VnniDotPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<arith::AddIOp> adds;
    getOperation().walk([&](arith::AddIOp add) {
      auto vt = dyn_cast<VectorType>(add.getType());
      if (vt && vt.getShape() == ArrayRef<int64_t>{kLanes} &&
          vt.getElementType().isInteger(32))
        adds.push_back(add);
    });
    IRRewriter rewriter(&getContext());
    DenseSet<Operation *> replaced;
    for (arith::AddIOp end : adds) {
      if (replaced.contains(end))
        continue;
      Value acc, a, b;
      SmallVector<Operation *> chain;
      if (!dotChain(end, /*signedA=*/false, acc, a, b, chain))
        continue;
      rewriter.setInsertionPoint(end);
      Location loc = end.getLoc();
      auto dpbusd = [&](Value c, Value x, Value y, StringRef name) {
        return LLVM::CallIntrinsicOp::create(rewriter, loc, c.getType(),
                                             rewriter.getStringAttr(name),
                                             ValueRange{c, x, y})
            .getResult(0);
      };
      Value dot;
      if (bits >= 512) {
        dot = dpbusd(acc, a, b, "llvm.x86.avx512.vpdpbusd.512");
      } else {
        // Lanes 0-7 sum bytes 0-31, lanes 8-15 bytes 32-63.
        auto half = [&](int64_t h) {
          Value c = halfOf(rewriter, loc, acc, h);
          Value x = halfOf(rewriter, loc, a, h);
          Value y = halfOf(rewriter, loc, b, h);
          return dpbusd(c, x, y, "llvm.x86.avx512.vpdpbusd.256");
        };
        Value lo = half(0);
        Value hi = half(1);
        dot = joinHalves(rewriter, loc, lo, hi);
      }
      rewriter.replaceOp(end, dot);
      for (Operation *op : chain)
        replaced.insert(op);
    }
  }
};

struct AmxBf16Pass : public kiln::impl::KilnCpuAmxBf16Base<AmxBf16Pass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, AmxGemm>> gemms;
    std::vector<Int8Conv> convs;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Every NCHW 2-D convolution with constant weights; MatMuls of 16
      // rows or more (fewer would fill a fraction of each tile: those keep
      // kiln-cpu-tile-and-vectorize's register tiles).
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
        if (std::optional<Int8Conv> cv = matchConv(conv, /*bf16=*/true))
          convs.push_back(std::move(*cv));
      } else if (std::optional<AmxGemm> g = matchBf16(op);
                 g && g->m >= kAmxTile) {
        gemms.emplace_back(op, std::move(*g));
      }
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, g] : gemms)
      rewriteAmxMatMul(rewriter, op, g, panelBytes, parallelChunks);
    for (Int8Conv &cv : convs)
      rewriteConvAmx(rewriter, cv, panelBytes, parallelChunks);
  }
};

} // namespace
