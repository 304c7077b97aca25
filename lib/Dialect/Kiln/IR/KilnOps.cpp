//===- KilnOps.cpp - kiln ops: syntax, verification, shared type rules ----===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Mutex.h"

using namespace mlir;
using namespace kiln;

#include "kiln/Dialect/Kiln/IR/KilnInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Positional syntax shared by the generated ONNX ops
//===----------------------------------------------------------------------===//

static constexpr llvm::StringLiteral kOperandSegments = "operandSegmentSizes";
static constexpr llvm::StringLiteral kResultSegments = "resultSegmentSizes";

/// Splits `count` values over the slots described by `kinds` ('s', 'o',
/// 'v'). Without a segment attribute at most one slot is not single, so the
/// sizes follow from the count.
static SmallVector<int32_t> slotSizes(StringRef kinds, unsigned count,
                                      DenseI32ArrayAttr segments) {
  if (segments)
    return SmallVector<int32_t>(segments.asArrayRef());
  SmallVector<int32_t> sizes;
  int singles = llvm::count(kinds, 's');
  for (char k : kinds)
    sizes.push_back(k == 's' ? 1 : static_cast<int32_t>(count) - singles);
  return sizes;
}

/// Parses `(%a, none, %c)`-style lists (of operands, or of types when
/// `parseType` is set); each slot is present or `none`.
template <typename T, typename ParseFn>
static ParseResult parseSlots(OpAsmParser &parser,
                              SmallVectorImpl<std::optional<T>> &slots,
                              ParseFn parseOne) {
  return parser.parseCommaSeparatedList([&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("none"))) {
      slots.push_back(std::nullopt);
      return success();
    }
    T value;
    if (parseOne(value))
      return failure();
    slots.push_back(value);
    return success();
  });
}

/// Assigns parsed slots to the ONNX slots in `kinds`; returns the present
/// values in order and the size of each ONNX slot.
template <typename T>
static ParseResult assignSlots(OpAsmParser &parser, SMLoc loc, StringRef kinds,
                               ArrayRef<std::optional<T>> slots, StringRef what,
                               SmallVectorImpl<T> &values,
                               SmallVectorImpl<int32_t> &sizes) {
  size_t next = 0;
  for (char k : kinds) {
    if (k == 'v') {
      int32_t n = 0;
      for (; next < slots.size(); ++next, ++n) {
        if (!slots[next])
          return parser.emitError(loc)
                 << "a variadic " << what << " list cannot hold 'none'";
        values.push_back(*slots[next]);
      }
      sizes.push_back(n);
      continue;
    }
    if (next >= slots.size() || !slots[next]) {
      if (k == 's')
        return parser.emitError(loc)
               << "missing required " << what << " #" << sizes.size();
      sizes.push_back(0);
      ++next;
      continue;
    }
    values.push_back(*slots[next++]);
    sizes.push_back(1);
  }
  if (next < slots.size())
    return parser.emitError(loc)
           << "too many " << what << "s: expected at most " << kinds.size();
  return success();
}

ParseResult kiln::parseOnnxOp(OpAsmParser &parser, OperationState &result,
                              StringRef inputKinds, StringRef outputKinds) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<std::optional<OpAsmParser::UnresolvedOperand>> operandSlots;
  if (parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen())) {
    if (parseSlots(parser, operandSlots,
                   [&](OpAsmParser::UnresolvedOperand &v) {
                     return parser.parseOperand(v);
                   }) ||
        parser.parseRParen())
      return failure();
  }
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<int32_t> operandSizes;
  if (assignSlots<OpAsmParser::UnresolvedOperand>(parser, loc, inputKinds,
                                                  operandSlots, "operand",
                                                  operands, operandSizes))
    return failure();

  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon())
    return failure();
  SMLoc typeLoc = parser.getCurrentLocation();
  SmallVector<Type> operandTypes;
  if (parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen()))
    if (parser.parseTypeList(operandTypes) || parser.parseRParen())
      return failure();
  if (parser.parseArrow())
    return failure();
  SmallVector<std::optional<Type>> resultSlots;
  auto parseType = [&](Type &t) { return parser.parseType(t); };
  if (succeeded(parser.parseOptionalLParen())) {
    if (failed(parser.parseOptionalRParen()))
      if (parseSlots(parser, resultSlots, parseType) || parser.parseRParen())
        return failure();
  } else if (succeeded(parser.parseOptionalKeyword("none"))) {
    resultSlots.push_back(std::nullopt);
  } else {
    Type t;
    if (parser.parseType(t))
      return failure();
    resultSlots.push_back(t);
  }
  SmallVector<Type> resultTypes;
  SmallVector<int32_t> resultSizes;
  if (assignSlots<Type>(parser, typeLoc, outputKinds, resultSlots, "result",
                        resultTypes, resultSizes))
    return failure();
  result.addTypes(resultTypes);
  if (parser.resolveOperands(operands, operandTypes, typeLoc, result.operands))
    return failure();

  Builder &b = parser.getBuilder();
  if (result.name.hasTrait<OpTrait::AttrSizedOperandSegments>())
    result.addAttribute(kOperandSegments, b.getDenseI32ArrayAttr(operandSizes));
  if (result.name.hasTrait<OpTrait::AttrSizedResultSegments>())
    result.addAttribute(kResultSegments, b.getDenseI32ArrayAttr(resultSizes));

  for (;;) {
    auto region = std::make_unique<Region>();
    OptionalParseResult parsed = parser.parseOptionalRegion(*region);
    if (!parsed.has_value())
      break;
    if (failed(*parsed))
      return failure();
    result.addRegion(std::move(region));
  }
  return success();
}

/// Prints values slot by slot, `none` for an absent optional, and drops
/// trailing `none`s as ONNX drops trailing empty names.
template <typename T, typename PrintFn>
static void printSlots(OpAsmPrinter &p, StringRef kinds, ArrayRef<T> values,
                       ArrayRef<int32_t> sizes, PrintFn printOne) {
  SmallVector<std::optional<T>> slots;
  unsigned pos = 0;
  for (auto [kind, size] : llvm::zip(kinds, sizes)) {
    if (kind != 'v' && size == 0) {
      slots.push_back(std::nullopt);
      continue;
    }
    for (int32_t i = 0; i < size; ++i)
      slots.push_back(values[pos++]);
  }
  while (!slots.empty() && !slots.back())
    slots.pop_back();
  llvm::interleaveComma(slots, p, [&](auto &slot) {
    if (slot)
      printOne(*slot);
    else
      p << "none";
  });
}

/// The attributes of a default-constructed `name`: its ONNX defaults. Not
/// cached: an OperationName and the attributes belong to one MLIRContext,
/// and a process-wide cache handed a later context (kiln-opt
/// -split-input-file makes one per split) the dangling attributes of a
/// destroyed one whose OperationName had the same address.
static DictionaryAttr getDefaultAttrs(OperationName name) {
  OperationState state(UnknownLoc::get(name.getContext()), name);
  Operation *tmp = Operation::create(state);
  auto dict = dyn_cast_or_null<DictionaryAttr>(tmp->getPropertiesAsAttribute());
  tmp->destroy();
  return dict;
}

void kiln::printOnnxOp(Operation *op, OpAsmPrinter &p, StringRef inputKinds,
                       StringRef outputKinds) {
  auto operandSizes =
      slotSizes(inputKinds, op->getNumOperands(),
                op->getAttrOfType<DenseI32ArrayAttr>(kOperandSegments));
  auto resultSizes =
      slotSizes(outputKinds, op->getNumResults(),
                op->getAttrOfType<DenseI32ArrayAttr>(kResultSegments));
  p << "(";
  SmallVector<Value> operands(op->getOperands());
  printSlots<Value>(p, inputKinds, operands, operandSizes,
                    [&](Value v) { p.printOperand(v); });
  p << ")";
  // Attributes equal to their ONNX default are implied, as in ONNX.
  DictionaryAttr defaults = getDefaultAttrs(op->getName());
  SmallVector<StringRef> elided = {kOperandSegments, kResultSegments};
  for (NamedAttribute a : op->getAttrs())
    if (defaults && defaults.get(a.getName()) == a.getValue())
      elided.push_back(a.getName().getValue());
  p.printOptionalAttrDict(op->getAttrs(), elided);
  p << " : (";
  llvm::interleaveComma(op->getOperandTypes(), p);
  p << ") -> ";
  // One result in the first slot prints bare; anything else as a list.
  if (op->getNumResults() == 1 && resultSizes[0] == 1) {
    p << op->getResult(0).getType();
  } else {
    SmallVector<Type> resultTypes(op->getResultTypes());
    p << "(";
    printSlots<Type>(p, outputKinds, resultTypes, resultSizes,
                     [&](Type t) { p << t; });
    p << ")";
  }
  for (Region &region : op->getRegions()) {
    p << " ";
    p.printRegion(region, /*printEntryBlockArgs=*/true,
                  /*printBlockTerminators=*/true);
  }
}

static bool isKilnValueType(Type t) {
  if (auto tensor = dyn_cast<TensorType>(t))
    return !isa<TensorType>(tensor.getElementType());
  return isa<SeqType, OptType>(t);
}

bool kiln::areCompatibleTypes(Type inferred, Type actual) {
  if (inferred == actual)
    return true;
  auto a = dyn_cast<ShapedType>(inferred), b = dyn_cast<ShapedType>(actual);
  if (!a || !b)
    return false;
  if (a.getElementType() != b.getElementType())
    return false;
  if (!a.hasRank() || !b.hasRank())
    return true;
  if (a.getRank() != b.getRank())
    return false;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

Type kiln::refineType(Type a, Type b) {
  auto x = dyn_cast<RankedTensorType>(a);
  auto y = dyn_cast<RankedTensorType>(b);
  if (!x)
    return y ? b : a;
  if (!y)
    return a;
  SmallVector<int64_t> shape;
  for (auto [p, q] : llvm::zip(x.getShape(), y.getShape()))
    shape.push_back(ShapedType::isDynamic(p) ? q : p);
  return RankedTensorType::get(shape, x.getElementType());
}

LogicalResult kiln::verifyOnnxOp(Operation *op) {
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (!isKilnValueType(t))
      return op->emitOpError("operand #")
             << i << " must be a tensor, !kiln.seq or !kiln.opt, got " << t;
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (!isKilnValueType(t))
      return op->emitOpError("result #")
             << i << " must be a tensor, !kiln.seq or !kiln.opt, got " << t;
  auto infer = dyn_cast<InferResultTypesOpInterface>(op);
  if (!infer)
    return success();
  SmallVector<Type> inferred;
  if (failed(infer.inferResultTypes(inferred)))
    return failure();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(inferred, op->getResultTypes()))) {
    auto [want, have] = pair;
    if (!areCompatibleTypes(want, have))
      return op->emitOpError("result #")
             << i << " has type " << have << " but its operands imply " << want;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shared result-type rules
//===----------------------------------------------------------------------===//

/// Fills `types` with the current result types from index `from` on.
static void keepRemaining(Operation *op, SmallVectorImpl<Type> &types) {
  for (unsigned i = types.size(); i < op->getNumResults(); ++i)
    types.push_back(op->getResult(i).getType());
}

LogicalResult kiln::inferSameResultTypes(Operation *op,
                                         SmallVectorImpl<Type> &types) {
  if (op->getNumOperands() == 0 || op->getNumResults() == 0)
    return success();
  // Ops of this rule that take an axis (Softmax, LpNormalization, ...)
  // check it against the operand's rank.
  if (auto axis = op->getAttrOfType<IntegerAttr>("axis")) {
    if (auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType())) {
      int64_t a = axis.getInt(), rank = t.getRank();
      if (a < -rank || a >= rank)
        return op->emitOpError("axis ")
               << a << " is out of range for rank " << rank;
    }
  }
  types.push_back(op->getOperand(0).getType());
  keepRemaining(op, types);
  return success();
}

/// ONNX multidirectional broadcasting of `shapes`; a `?` against a known
/// extent d > 1 is d, since the `?` can only be 1 or d.
static FailureOr<SmallVector<int64_t>>
broadcastShapes(Operation *op, ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (auto s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    bool dynamic = false;
    int64_t known = 1;
    for (auto s : shapes) {
      if (d + s.size() < rank)
        continue;
      int64_t e = s[d + s.size() - rank];
      if (ShapedType::isDynamic(e)) {
        dynamic = true;
        continue;
      }
      if (e == 1)
        continue;
      if (known != 1 && known != e) {
        op->emitOpError("operands are not broadcast-compatible: dimension ")
            << d << " is " << known << " in one operand and " << e
            << " in another";
        return failure();
      }
      known = e;
    }
    out[d] = known != 1 ? known : (dynamic ? ShapedType::kDynamic : 1);
  }
  return out;
}

static LogicalResult inferBroadcast(Operation *op, Type elementType,
                                    SmallVectorImpl<Type> &types) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Type t : op->getOperandTypes()) {
    auto shaped = dyn_cast<RankedTensorType>(t);
    if (!shaped) {
      types.push_back(UnrankedTensorType::get(elementType));
      keepRemaining(op, types);
      return success();
    }
    shapes.push_back(shaped.getShape());
  }
  auto shape = broadcastShapes(op, shapes);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, elementType));
  keepRemaining(op, types);
  return success();
}

LogicalResult kiln::inferBroadcastResultTypes(Operation *op,
                                              SmallVectorImpl<Type> &types) {
  if (op->getNumOperands() == 0)
    return success();
  return inferBroadcast(op, getElementTypeOrSelf(op->getOperand(0).getType()),
                        types);
}

LogicalResult kiln::inferCompareResultTypes(Operation *op,
                                            SmallVectorImpl<Type> &types) {
  return inferBroadcast(op, IntegerType::get(op->getContext(), 1), types);
}

FailureOr<SmallVector<int64_t>>
kiln::broadcastStaticShapes(Operation *op, ArrayRef<ArrayRef<int64_t>> shapes) {
  return broadcastShapes(op, shapes);
}

Type kiln::getElementTypeFromOnnx(MLIRContext *ctx, int64_t dataType) {
  auto sint = [&](unsigned w) { return IntegerType::get(ctx, w); };
  auto uint = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (dataType) {
  case 1:
    return Float32Type::get(ctx);
  case 2:
    return uint(8);
  case 3:
    return sint(8);
  case 4:
    return uint(16);
  case 5:
    return sint(16);
  case 6:
    return sint(32);
  case 7:
    return sint(64);
  case 8:
    return StringType::get(ctx);
  case 9:
    return sint(1);
  case 10:
    return Float16Type::get(ctx);
  case 11:
    return Float64Type::get(ctx);
  case 12:
    return uint(32);
  case 13:
    return uint(64);
  case 14:
    return ComplexType::get(Float32Type::get(ctx));
  case 15:
    return ComplexType::get(Float64Type::get(ctx));
  case 16:
    return BFloat16Type::get(ctx);
  case 17:
    return Float8E4M3FNType::get(ctx);
  case 18:
    return Float8E4M3FNUZType::get(ctx);
  case 19:
    return Float8E5M2Type::get(ctx);
  case 20:
    return Float8E5M2FNUZType::get(ctx);
  case 21:
    return uint(4);
  case 22:
    return sint(4);
  case 23:
    return Float4E2M1FNType::get(ctx);
  case 24:
    return Float8E8M0FNUType::get(ctx);
  case 25:
    return uint(2);
  case 26:
    return sint(2);
  default:
    return {};
  }
}

Value kiln::getOnnxInput(Operation *op, unsigned index) {
  if (auto seg = op->getAttrOfType<DenseI32ArrayAttr>(kOperandSegments)) {
    if (index >= seg.size() || seg[index] == 0)
      return Value();
    unsigned start = 0;
    for (unsigned i = 0; i < index; ++i)
      start += seg[i];
    return op->getOperand(start);
  }
  return index < op->getNumOperands() ? op->getOperand(index) : Value();
}

bool kiln::isPointwiseGemm(Operation *op) {
  if (!isa<ConvIntegerOp, QLinearConvOp>(op) || op->getNumResults() != 1)
    return false;
  Value x = getOnnxInput(op, 0),
        w = getOnnxInput(op, isa<QLinearConvOp>(op) ? 3 : 1);
  auto xt = x ? dyn_cast<RankedTensorType>(x.getType()) : RankedTensorType();
  auto wt = w ? dyn_cast<RankedTensorType>(w.getType()) : RankedTensorType();
  auto yt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!xt || !wt || !yt || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !yt.hasStaticShape() || xt.getRank() != 4 || wt.getRank() != 4 ||
      yt.getRank() != 4)
    return false;
  auto group = op->getAttrOfType<IntegerAttr>("group");
  if (group && group.getInt() != 1)
    return false;
  if (auto pads = op->getAttrOfType<DenseI64ArrayAttr>("pads"))
    if (llvm::any_of(pads.asArrayRef(), [](int64_t p) { return p != 0; }))
      return false;
  // (With 1x1 kernels and planes, every auto_pad pads nothing.)
  return xt.getDimSize(2) == 1 && xt.getDimSize(3) == 1 &&
         wt.getDimSize(2) == 1 && wt.getDimSize(3) == 1 &&
         wt.getDimSize(1) == xt.getDimSize(1) &&
         yt.getShape() ==
             ArrayRef<int64_t>{xt.getDimSize(0), wt.getDimSize(0), 1, 1};
}

std::string kiln::onnxNodeName(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

std::optional<SmallVector<int64_t>> kiln::getConstantInts(Value v) {
  ElementsAttr elements;
  if (!v || !matchPattern(v, m_Constant(&elements)) ||
      !isa<IntegerType>(elements.getElementType()))
    return std::nullopt;
  auto values = elements.tryGetValues<APInt>();
  if (!values)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const APInt &x : *values)
    out.push_back(x.getSExtValue());
  return out;
}

std::optional<bool> kiln::getConstantCondition(Value v) {
  std::optional<SmallVector<int64_t>> c = getConstantInts(v);
  if (!c || c->size() != 1)
    return std::nullopt;
  return (*c)[0] != 0;
}

std::optional<int64_t> kiln::getLoopTripCount(LoopOp op) {
  std::optional<SmallVector<int64_t>> m =
      op.getM() ? getConstantInts(op.getM()) : std::nullopt;
  if (!m || m->size() != 1 || (*m)[0] < 0)
    return std::nullopt;
  if (!op.getCond())
    return (*m)[0];
  Block &body = op.getBody().front();
  Operation *yield = body.getTerminator();
  if (getConstantCondition(op.getCond()) != true ||
      yield->getNumOperands() == 0 || body.getNumArguments() < 2)
    return std::nullopt;
  Value next = yield->getOperand(0);
  if (next == body.getArgument(1) || getConstantCondition(next) == true)
    return (*m)[0];
  return std::nullopt;
}

int64_t kiln::getOnnxDataType(Type elementType) {
  for (int64_t dt = 1; dt <= 26; ++dt)
    if (getElementTypeFromOnnx(elementType.getContext(), dt) == elementType)
      return dt;
  return 0;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.cpp.inc"
