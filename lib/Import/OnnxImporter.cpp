//===- OnnxImporter.cpp - ONNX model to kiln IR ---------------------------===//
//
// Reads a ModelProto with libonnx's protobuf classes, cross-checks it with
// libonnx's checker and shape inference where the model's opset is within
// libonnx's reach, and builds a `func.func @main` of kiln ops. Nodes written
// against an older opset than the one a kiln op follows are upgraded here.
// Besides the default domain, the optimizers of `ai.onnx.preview.training`
// (Adagrad, Adam, Momentum) import.
//
//===----------------------------------------------------------------------===//

#include "kiln/Import/OnnxImporter.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <deque>

#include <cstring>
#include <functional>

using namespace mlir;
using namespace kiln;

namespace {

/// Clears every negative dim_value in `type` (a tensor, or a sequence or
/// optional of one), leaving the dim unknown.
void clearNegativeDims(onnx::TypeProto &type) {
  if (type.has_tensor_type() && type.tensor_type().has_shape()) {
    for (auto &d : *type.mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        d.clear_dim_value();
  } else if (type.has_sequence_type()) {
    clearNegativeDims(*type.mutable_sequence_type()->mutable_elem_type());
  } else if (type.has_optional_type()) {
    clearNegativeDims(*type.mutable_optional_type()->mutable_elem_type());
  }
}

/// Clears the negative dims of a graph's declared types, its subgraphs'
/// included.
void clearNegativeDims(onnx::GraphProto &graph) {
  for (auto *infos : {graph.mutable_input(), graph.mutable_output(),
                      graph.mutable_value_info()})
    for (auto &info : *infos)
      if (info.has_type())
        clearNegativeDims(*info.mutable_type());
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        clearNegativeDims(*attr.mutable_g());
      for (auto &g : *attr.mutable_graphs())
        clearNegativeDims(g);
    }
}

//===----------------------------------------------------------------------===//
// The operator table generated from the ONNX schemas
//===----------------------------------------------------------------------===//

struct OpInfo {
  /// The ONNX domain, empty for the default one.
  const char *domain;
  const char *onnxName;
  const char *mlirName;
  int sinceVersion;
  int compatibleSince;
  const char *inputKinds;
  const char *outputKinds;
  const char *regionAttrs;
  const char *renamedAttrs;
  const char *typeAttrs;
  const char *requiredAttrs;
};

#define KILN_ONNX_MAX_OPSET(n) constexpr int kMaxOpset = n;
#define KILN_ONNX_MAX_TRAINING_OPSET(n) constexpr int kMaxTrainingOpset = n;
#include "OnnxOpTable.inc"
#define KILN_ONNX_OP(...) {__VA_ARGS__},
const OpInfo kOps[] = {
#include "OnnxOpTable.inc"
};
constexpr int kMinOpset = 1;
constexpr StringLiteral kTrainingDomain = "ai.onnx.preview.training";
/// The default-domain opset assumed for a model that imports only the
/// training domain: opset 12, released (ONNX 1.7) together with
/// `ai.onnx.preview.training` opset 1, whose operators were defined against
/// it. Such a model has no default-domain nodes (importNode rejects them),
/// so the value only selects the libonnx checks and the `kiln.opset`
/// recorded on the module, both of which accept it.
constexpr int kTrainingOnlyDefaultOpset = 12;

/// The operator `name` of `domain` (empty for the default one).
const OpInfo *lookupOp(StringRef domain, StringRef name) {
  static const llvm::StringMap<const OpInfo *> table = [] {
    llvm::StringMap<const OpInfo *> m;
    for (const OpInfo &info : kOps)
      m[(Twine(info.domain) + ":" + info.onnxName).str()] = &info;
    return m;
  }();
  auto it = table.find((domain + ":" + name).str());
  return it == table.end() ? nullptr : it->second;
}

bool listContains(StringRef list, StringRef name) {
  SmallVector<StringRef> items;
  list.split(items, ',', -1, false);
  return llvm::is_contained(items, name);
}

/// The kiln attribute name of an ONNX attribute (a few are renamed where
/// they clash with generated accessor names).
std::string kilnAttrName(const OpInfo &info, StringRef onnxName) {
  SmallVector<StringRef> pairs;
  StringRef(info.renamedAttrs).split(pairs, ',', -1, false);
  for (StringRef p : pairs) {
    auto [from, to] = p.split('=');
    if (from == onnxName)
      return to.str();
  }
  return onnxName.str();
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  Importer(MLIRContext *ctx, const OnnxImportOptions &options,
           StringRef fileName, StringRef modelDir)
      : ctx(ctx), b(ctx), options(options), fileName(fileName.str()),
        modelDir(modelDir.str()) {}

  OwningOpRef<ModuleOp> importModel(onnx::ModelProto &model);

private:
  struct Scope {
    llvm::StringMap<Value> values;
    llvm::StringMap<Type> types;
  };

  Location fileLoc() { return FileLineColLoc::get(ctx, fileName, 0, 0); }
  Location nodeLoc(const onnx::NodeProto &node, int index) {
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(index)
                           : node.name();
    return NameLoc::get(StringAttr::get(ctx, name), fileLoc());
  }
  /// An error naming the node (its name, or OpType_index when unnamed),
  /// the operator and the opset of its domain.
  InFlightDiagnostic nodeError(const onnx::NodeProto &node, Location loc) {
    return nodeDiagnostic(node, loc, DiagnosticSeverity::Error);
  }
  InFlightDiagnostic nodeWarning(const onnx::NodeProto &node, Location loc) {
    return nodeDiagnostic(node, loc, DiagnosticSeverity::Warning);
  }
  InFlightDiagnostic nodeDiagnostic(const onnx::NodeProto &node, Location loc,
                                    DiagnosticSeverity severity) {
    StringRef name = node.name();
    if (auto named = dyn_cast<NameLoc>(loc))
      name = named.getName().getValue();
    int64_t domainOpset =
        node.domain() == kTrainingDomain ? trainingOpset : opset;
    InFlightDiagnostic diag = severity == DiagnosticSeverity::Error
                                  ? emitError(loc)
                                  : emitWarning(loc);
    return std::move(diag) << "node '" << name << "' (" << node.op_type()
                           << ", opset " << domainOpset << "): ";
  }

  LogicalResult checkWithLibOnnx(onnx::ModelProto &model);
  Type convertType(const onnx::TypeProto &type);
  FailureOr<ElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                        Location loc, bool allowResource);
  FailureOr<std::string> readTensorBytes(const onnx::TensorProto &tensor,
                                         Location loc);
  Value lookup(StringRef name);
  Type knownType(StringRef name);
  void collectTypes(const onnx::GraphProto &graph);

  LogicalResult importGraphBody(const onnx::GraphProto &graph,
                                SmallVectorImpl<Value> &outputs);
  /// Imports `graph` as the one block of `region`; an input without a type
  /// takes the one at its position in `impliedTypes`, if any.
  LogicalResult importSubgraph(const onnx::GraphProto &graph, Region &region,
                               Location loc, ArrayRef<Type> impliedTypes = {});
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult importScan8(const onnx::NodeProto &node, int index,
                            Location loc);
  LogicalResult importConstantNode(const onnx::NodeProto &node, Location loc);
  FailureOr<Attribute> convertAttribute(const onnx::NodeProto &node,
                                        const onnx::AttributeProto &attr,
                                        const OpInfo &info, Location loc);
  LogicalResult upgradeNode(const onnx::NodeProto &node, const OpInfo &info,
                            Location loc, SmallVectorImpl<Value> &inputs,
                            NamedAttrList &attrs, bool &handled);
  FailureOr<Operation *> buildOp(const onnx::NodeProto &node,
                                 const OpInfo &info, Location loc,
                                 ArrayRef<Value> inputs, NamedAttrList &attrs,
                                 unsigned numOutputs);
  LogicalResult typeResults(const onnx::NodeProto &node, Operation *op,
                            Location loc, const OpInfo *info = nullptr);
  void typeWithLibOnnx(const onnx::NodeProto &node, Operation *op,
                       const OpInfo &info);
  Value constI64(Location loc, ArrayRef<int64_t> values, bool scalar = false);

  MLIRContext *ctx;
  OpBuilder b;
  const OnnxImportOptions &options;
  std::string fileName;
  std::string modelDir;
  /// The default-domain opset (kTrainingOnlyDefaultOpset when the model
  /// imports only the training domain, see `defaultDomainImported`).
  int64_t opset = 0;
  bool defaultDomainImported = true;
  /// The `ai.onnx.preview.training` opset, -1 when not imported.
  int64_t trainingOpset = -1;
  SmallVector<Scope> scopes;
  int64_t resourceCounter = 0;
};

/// The most refined type that describes values of both types (If branches):
/// dims that differ become dynamic, ranks that differ unranked; null when
/// the element types differ.
Type joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto x = dyn_cast<TensorType>(a), y = dyn_cast<TensorType>(b);
  if (!x || !y || x.getElementType() != y.getElementType())
    return {};
  if (!x.hasRank() || !y.hasRank() || x.getRank() != y.getRank())
    return UnrankedTensorType::get(x.getElementType());
  SmallVector<int64_t> shape;
  for (auto [p, q] : llvm::zip(x.getShape(), y.getShape()))
    shape.push_back(p == q ? p : ShapedType::kDynamic);
  return RankedTensorType::get(shape, x.getElementType());
}

Value Importer::lookup(StringRef name) {
  for (auto &scope : llvm::reverse(scopes)) {
    auto it = scope.values.find(name);
    if (it != scope.values.end())
      return it->second;
  }
  return {};
}

Type Importer::knownType(StringRef name) {
  for (auto &scope : llvm::reverse(scopes)) {
    auto it = scope.types.find(name);
    if (it != scope.types.end())
      return it->second;
  }
  return {};
}

Type Importer::convertType(const onnx::TypeProto &type) {
  switch (type.value_case()) {
  case onnx::TypeProto::kTensorType: {
    const auto &t = type.tensor_type();
    Type elt = getElementTypeFromOnnx(ctx, t.elem_type());
    if (!elt)
      return {};
    if (!t.has_shape())
      return UnrankedTensorType::get(elt);
    SmallVector<int64_t> shape;
    for (const auto &d : t.shape().dim())
      shape.push_back(d.has_dim_value() && d.dim_value() >= 0
                          ? d.dim_value()
                          : ShapedType::kDynamic);
    return RankedTensorType::get(shape, elt);
  }
  case onnx::TypeProto::kSequenceType: {
    Type elt = convertType(type.sequence_type().elem_type());
    return elt ? SeqType::get(ctx, elt) : Type();
  }
  case onnx::TypeProto::kOptionalType: {
    Type elt = convertType(type.optional_type().elem_type());
    return elt ? OptType::get(ctx, elt) : Type();
  }
  default:
    return {};
  }
}

void Importer::collectTypes(const onnx::GraphProto &graph) {
  auto add = [&](const onnx::ValueInfoProto &vi) {
    if (!vi.has_type())
      return;
    if (Type t = convertType(vi.type()))
      scopes.back().types[vi.name()] = t;
  };
  for (const auto &vi : graph.value_info())
    add(vi);
  for (const auto &vi : graph.output())
    add(vi);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

FailureOr<std::string>
Importer::readTensorBytes(const onnx::TensorProto &tensor, Location loc) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
    return tensor.raw_data();
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      uint64_t v;
      if (StringRef(kv.value()).getAsInteger(10, v))
        return emitError(loc) << "tensor '" << tensor.name() << "': bad "
                              << kv.key() << " '" << kv.value() << "'",
               failure();
      (kv.key() == "offset" ? offset : length.emplace()) = v;
    }
  }
  if (modelDir.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data but the model was not "
                             "read from a file",
           failure();
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](StringRef c) { return c == ".."; }))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': external data location '" << location
                          << "' must be a relative path inside the model's "
                             "directory",
           failure();
  SmallString<256> path(modelDir), real, realDir;
  llvm::sys::path::append(path, location);
  if (llvm::sys::fs::real_path(path, real) ||
      llvm::sys::fs::real_path(modelDir, realDir))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': cannot open external data file '" << path
                          << "'",
           failure();
  if (!StringRef(real).starts_with((realDir + "/").str()))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': external data file '" << location
                          << "' resolves outside the model's directory",
           failure();
  auto buffer = llvm::MemoryBuffer::getFile(real, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "tensor '" << tensor.name() << "': cannot read '"
                          << real << "': " << buffer.getError().message(),
           failure();
  uint64_t size = (*buffer)->getBufferSize();
  uint64_t len = length.value_or(size >= offset ? size - offset : 0);
  if (offset > size || len > size - offset)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': external data range [" << offset << ", "
                          << offset + len << ") exceeds the " << size
                          << "-byte file '" << location << "'",
           failure();
  return std::string((*buffer)->getBufferStart() + offset, len);
}

FailureOr<ElementsAttr> Importer::convertTensor(const onnx::TensorProto &tensor,
                                                Location loc,
                                                bool allowResource) {
  Type elt = getElementTypeFromOnnx(ctx, tensor.data_type());
  if (!elt)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has unsupported data type "
                          << tensor.data_type(),
           failure();
  SmallVector<int64_t> shape;
  int64_t n = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return emitError(loc) << "tensor '" << tensor.name()
                            << "' has a negative dimension " << d,
             failure();
    if (d > 0 && n > (int64_t(1) << 40) / d)
      return emitError(loc) << "tensor '" << tensor.name()
                            << "' has more than 2^40 elements",
             failure();
    shape.push_back(d);
    n *= d;
  }
  auto type = RankedTensorType::get(shape, elt);

  if (isa<StringType>(elt)) {
    if (tensor.string_data_size() != n)
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' holds "
                 << tensor.string_data_size() << " strings, expected " << n,
             failure();
    SmallVector<StringRef> strs(tensor.string_data().begin(),
                                tensor.string_data().end());
    return cast<ElementsAttr>(DenseStringElementsAttr::get(type, strs));
  }

  // Booleans are stored one byte per element, not bit-packed.
  unsigned bits =
      elt.isInteger(1) ? 8
      : isa<ComplexType>(elt)
          ? 2 * cast<ComplexType>(elt).getElementType().getIntOrFloatBitWidth()
          : elt.getIntOrFloatBitWidth();
  bool hasRaw = tensor.has_raw_data() ||
                tensor.data_location() == onnx::TensorProto::EXTERNAL;
  // Unpacked little-endian bytes of every element, `bytes` each; sub-byte
  // types are widened to one byte per element.
  unsigned bytes = std::max(1u, bits / 8);
  std::string data;
  if (hasRaw) {
    auto raw = readTensorBytes(tensor, loc);
    if (failed(raw))
      return failure();
    if (bits < 8) {
      unsigned perByte = 8 / bits;
      if (raw->size() != static_cast<size_t>((n + perByte - 1) / perByte))
        return emitError(loc)
                   << "tensor '" << tensor.name() << "' holds " << raw->size()
                   << " bytes, expected " << (n + perByte - 1) / perByte,
               failure();
      data.resize(n);
      for (int64_t i = 0; i < n; ++i)
        data[i] =
            ((*raw)[i / perByte] >> ((i % perByte) * bits)) & ((1 << bits) - 1);
    } else {
      if (raw->size() != static_cast<size_t>(n) * bytes)
        return emitError(loc)
                   << "tensor '" << tensor.name() << "' holds " << raw->size()
                   << " bytes, expected " << n * bytes,
               failure();
      data = std::move(*raw);
    }
  } else {
    // The typed fields hold at most 8 bytes per value (sub-byte types up to
    // 8 per int32): a tensor claiming more elements than they can hold is
    // refused before its buffer is allocated.
    int64_t present =
        std::max({tensor.float_data_size(), tensor.double_data_size(),
                  tensor.int64_data_size(), tensor.uint64_data_size(),
                  tensor.int32_data_size()});
    if (n > 8 * static_cast<int64_t>(present))
      return emitError(loc) << "tensor '" << tensor.name() << "' holds "
                            << present << " values, expected " << n,
             failure();
    // Which field holds which types (ONNX's TensorProto): float_data float32
    // and complex64, double_data float64 and complex128, the integer
    // fields one value of at most 8 bytes each (found by the importer
    // fuzzer: float_data under an 8-byte type read past the field).
    auto fieldFor = [&](StringRef name, unsigned valueBytes,
                        int64_t perElement) -> LogicalResult {
      if (bytes != valueBytes * perElement)
        return emitError(loc)
                   << "tensor '" << tensor.name() << "' of data type "
                   << onnx::TensorProto_DataType_Name(tensor.data_type())
                   << " holds its values in " << name
                   << ", which is not for that type",
               failure();
      return success();
    };
    // The same order as the copies below: the first field that holds
    // values is the one read.
    int64_t per = isa<ComplexType>(elt) ? 2 : 1;
    if (tensor.float_data_size()) {
      if (failed(fieldFor("float_data", 4, per)))
        return failure();
    } else if (tensor.double_data_size()) {
      if (failed(fieldFor("double_data", 8, per)))
        return failure();
    } else if (bytes > 8) {
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' of data type "
                 << onnx::TensorProto_DataType_Name(tensor.data_type())
                 << " holds its values in an integer field",
             failure();
    }
    data.resize(static_cast<size_t>(n) * bytes);
    auto store = [&](int64_t i, uint64_t v) {
      std::memcpy(&data[i * bytes], &v, bytes);
    };
    auto mismatch = [&](int64_t have) {
      return emitError(loc) << "tensor '" << tensor.name() << "' holds " << have
                            << " values, expected " << n,
             failure();
    };
    if (tensor.float_data_size()) {
      int64_t per = isa<ComplexType>(elt) ? 2 : 1;
      if (tensor.float_data_size() != n * per)
        return mismatch(tensor.float_data_size());
      std::memcpy(data.data(), tensor.float_data().data(), data.size());
    } else if (tensor.double_data_size()) {
      int64_t per = isa<ComplexType>(elt) ? 2 : 1;
      if (tensor.double_data_size() != n * per)
        return mismatch(tensor.double_data_size());
      std::memcpy(data.data(), tensor.double_data().data(), data.size());
    } else if (tensor.int64_data_size()) {
      if (tensor.int64_data_size() != n)
        return mismatch(tensor.int64_data_size());
      for (int64_t i = 0; i < n; ++i)
        store(i, tensor.int64_data(i));
    } else if (tensor.uint64_data_size()) {
      if (tensor.uint64_data_size() != n)
        return mismatch(tensor.uint64_data_size());
      for (int64_t i = 0; i < n; ++i)
        store(i, tensor.uint64_data(i));
    } else if (tensor.int32_data_size()) {
      if (bits < 8) {
        unsigned perByte = 8 / bits;
        if (tensor.int32_data_size() != (n + perByte - 1) / perByte)
          return mismatch(tensor.int32_data_size());
        for (int64_t i = 0; i < n; ++i)
          data[i] = (tensor.int32_data(i / perByte) >> ((i % perByte) * bits)) &
                    ((1 << bits) - 1);
      } else {
        if (tensor.int32_data_size() != n)
          return mismatch(tensor.int32_data_size());
        for (int64_t i = 0; i < n; ++i)
          store(i, static_cast<uint32_t>(tensor.int32_data(i)));
      }
    } else if (n != 0) {
      return mismatch(0);
    }
  }

  ArrayRef<char> buffer(data.data(), data.size());
  if (elt.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : data)
      values.push_back(c != 0);
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  if (bits < 8) {
    SmallVector<APInt> values;
    for (char c : data)
      values.push_back(
          APInt(bits, static_cast<uint8_t>(c) & ((1u << bits) - 1)));
    if (isa<FloatType>(elt)) {
      SmallVector<APFloat> floats;
      for (const APInt &v : values)
        floats.emplace_back(cast<FloatType>(elt).getFloatSemantics(), v);
      return cast<ElementsAttr>(DenseElementsAttr::get(type, floats));
    }
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  if (allowResource && n > options.inlineElementsLimit) {
    std::string key = tensor.name().empty()
                          ? "constant_" + std::to_string(resourceCounter++)
                          : tensor.name();
    auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
        buffer, alignof(uint64_t));
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(type, key, std::move(blob)));
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, buffer, splat))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has a malformed data buffer",
           failure();
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, buffer));
}

Value Importer::constI64(Location loc, ArrayRef<int64_t> values, bool scalar) {
  auto type = RankedTensorType::get(
      scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{(int64_t)values.size()},
      b.getI64Type());
  return ConstantOp::create(
      b, loc, type, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

FailureOr<Attribute>
Importer::convertAttribute(const onnx::NodeProto &node,
                           const onnx::AttributeProto &attr, const OpInfo &info,
                           Location loc) {
  if (!attr.ref_attr_name().empty())
    return nodeError(node, loc) << "attribute '" << attr.name()
                                << "' refers to a function attribute, "
                                   "which is only valid inside a function",
           failure();
  bool isTypeEnum = listContains(info.typeAttrs, attr.name());
  switch (attr.type()) {
  case onnx::AttributeProto::FLOAT:
    return Attribute(b.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::INT:
    if (isTypeEnum) {
      Type t = getElementTypeFromOnnx(ctx, attr.i());
      if (!t)
        return nodeError(node, loc) << "attribute '" << attr.name()
                                    << "' names unknown data type " << attr.i(),
               failure();
      return Attribute(TypeAttr::get(t));
    }
    return Attribute(b.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::STRING:
    return Attribute(b.getStringAttr(attr.s()));
  case onnx::AttributeProto::FLOATS:
    return Attribute(b.getDenseF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case onnx::AttributeProto::INTS:
    return Attribute(b.getDenseI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case onnx::AttributeProto::STRINGS: {
    SmallVector<StringRef> strs(attr.strings().begin(), attr.strings().end());
    return Attribute(b.getStrArrayAttr(strs));
  }
  case onnx::AttributeProto::TENSOR: {
    auto t = convertTensor(attr.t(), loc, /*allowResource=*/true);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  case onnx::AttributeProto::TENSORS: {
    SmallVector<Attribute> ts;
    for (const auto &t : attr.tensors()) {
      auto e = convertTensor(t, loc, /*allowResource=*/true);
      if (failed(e))
        return failure();
      ts.push_back(*e);
    }
    return Attribute(b.getArrayAttr(ts));
  }
  case onnx::AttributeProto::TYPE_PROTO: {
    Type t = convertType(attr.tp());
    if (!t)
      return nodeError(node, loc) << "attribute '" << attr.name()
                                  << "' holds an unsupported type",
             failure();
    return Attribute(TypeAttr::get(t));
  }
  default:
    return nodeError(node, loc)
               << "attribute '" << attr.name() << "' has unsupported kind "
               << onnx::AttributeProto::AttributeType_Name(attr.type()),
           failure();
  }
}

//===----------------------------------------------------------------------===//
// Upgrading nodes of older opsets
//===----------------------------------------------------------------------===//

/// An attribute that became an input at opset `before`.
struct AttrToInput {
  const char *op;
  int before;
  const char *attr;
  unsigned index;
  enum Kind { I64s, I64Scalar, I64Scalar1D, F32s, DataScalar } kind;
};

const AttrToInput kAttrToInput[] = {
    {"Squeeze", 13, "axes", 1, AttrToInput::I64s},
    {"Unsqueeze", 13, "axes", 1, AttrToInput::I64s},
    {"ReduceSum", 13, "axes", 1, AttrToInput::I64s},
    {"ReduceMean", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceMax", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceMin", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceProd", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceL1", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceL2", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceLogSum", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceLogSumExp", 18, "axes", 1, AttrToInput::I64s},
    {"ReduceSumSquare", 18, "axes", 1, AttrToInput::I64s},
    {"Split", 13, "split", 1, AttrToInput::I64s},
    {"Clip", 11, "min", 1, AttrToInput::DataScalar},
    {"Clip", 11, "max", 2, AttrToInput::DataScalar},
    {"Pad", 11, "pads", 1, AttrToInput::I64s},
    {"Pad", 11, "value", 2, AttrToInput::DataScalar},
    {"Slice", 10, "starts", 1, AttrToInput::I64s},
    {"Slice", 10, "ends", 2, AttrToInput::I64s},
    {"Slice", 10, "axes", 3, AttrToInput::I64s},
    {"TopK", 10, "k", 1, AttrToInput::I64Scalar1D},
    {"Upsample", 9, "scales", 1, AttrToInput::F32s},
    {"DFT", 20, "axis", 2, AttrToInput::I64Scalar},
};

/// Attributes dropped when upgrading (their only legal value is the newer
/// opset's behaviour, or they do not matter for inference).
struct DroppedAttr {
  const char *op;
  int before;
  const char *attr;
  int64_t requiredValue; // INT_MIN: any value
};
const DroppedAttr kDroppedAttrs[] = {
    {"Dropout", 12, "ratio", INT64_MIN},
    {"Dropout", 7, "is_test", INT64_MIN},
    {"BatchNormalization", 9, "spatial", 1},
    {"BatchNormalization", 14, "momentum", INT64_MIN},
};

LogicalResult Importer::upgradeNode(const onnx::NodeProto &node,
                                    const OpInfo &info, Location loc,
                                    SmallVectorImpl<Value> &inputs,
                                    NamedAttrList &attrs, bool &handled) {
  StringRef op = node.op_type();
  handled = false;
  for (const DroppedAttr &d : kDroppedAttrs) {
    if (op != d.op || opset >= d.before)
      continue;
    handled = true;
    if (auto a = attrs.get(d.attr)) {
      if (d.requiredValue != INT64_MIN) {
        auto i = dyn_cast<IntegerAttr>(a);
        if (!i || i.getInt() != d.requiredValue)
          return nodeError(node, loc)
                     << "attribute '" << d.attr << "' other than "
                     << d.requiredValue << " is not supported",
                 failure();
      }
      attrs.erase(d.attr);
    }
  }
  for (const AttrToInput &r : kAttrToInput) {
    if (op != r.op || opset >= r.before)
      continue;
    handled = true;
    Attribute a = attrs.get(r.attr);
    if (!a)
      continue;
    attrs.erase(r.attr);
    if (inputs.size() <= r.index)
      inputs.resize(r.index + 1);
    Value v;
    switch (r.kind) {
    case AttrToInput::I64s: {
      auto ints = dyn_cast<DenseI64ArrayAttr>(a);
      if (!ints)
        return nodeError(node, loc)
                   << "attribute '" << r.attr << "' must be a list of ints",
               failure();
      v = constI64(loc, ints.asArrayRef());
      break;
    }
    case AttrToInput::I64Scalar:
    case AttrToInput::I64Scalar1D: {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i)
        return nodeError(node, loc)
                   << "attribute '" << r.attr << "' must be an int",
               failure();
      v = constI64(loc, {i.getInt()}, r.kind == AttrToInput::I64Scalar);
      break;
    }
    case AttrToInput::F32s: {
      auto fs = dyn_cast<DenseF32ArrayAttr>(a);
      if (!fs)
        return nodeError(node, loc)
                   << "attribute '" << r.attr << "' must be a list of floats",
               failure();
      auto type = RankedTensorType::get({(int64_t)fs.size()}, b.getF32Type());
      v = ConstantOp::create(
          b, loc, type,
          cast<ElementsAttr>(DenseElementsAttr::get(type, fs.asArrayRef())));
      break;
    }
    case AttrToInput::DataScalar: {
      auto f = dyn_cast<FloatAttr>(a);
      Type elt = inputs[0] ? getElementTypeOrSelf(inputs[0].getType()) : Type();
      auto ft = dyn_cast_or_null<FloatType>(elt);
      if (!f || !ft)
        return nodeError(node, loc)
                   << "attribute '" << r.attr << "' needs a float input tensor",
               failure();
      APFloat value = f.getValue();
      bool lost;
      value.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
      auto type = RankedTensorType::get({}, ft);
      v = ConstantOp::create(
          b, loc, type,
          cast<ElementsAttr>(DenseElementsAttr::get(type, value)));
      break;
    }
    }
    inputs[r.index] = v;
  }
  // Before opset 6 `consumed_inputs` was a memory hint with no meaning for
  // the result.
  if (opset < 6 && attrs.get("consumed_inputs")) {
    attrs.erase("consumed_inputs");
    handled = true;
  }
  // Before opset 7 binary ops broadcast only when asked, the second operand
  // aligned at `axis`; numpy-style broadcasting covers the trailing-aligned
  // case, which is the one exporters emitted.
  static const llvm::StringSet<> legacyBroadcast = {
      "Add", "Sub",   "Mul",     "Div",  "Pow",   "And", "Or",
      "Xor", "Equal", "Greater", "Less", "PRelu", "Gemm"};
  if (opset < 7 && op == "PRelu" && inputs.size() == 2 && inputs[0] &&
      inputs[1]) {
    // PRelu-6 applies a 1-D slope along the channel axis (1).
    auto x = dyn_cast<RankedTensorType>(inputs[0].getType());
    auto slope = dyn_cast<RankedTensorType>(inputs[1].getType());
    if (x && slope && x.getRank() > 2 && slope.getRank() == 1 &&
        slope.getDimSize(0) != 1) {
      SmallVector<int64_t> axes, shape = {slope.getDimSize(0)};
      for (int64_t i = 1; i + 1 < x.getRank(); ++i) {
        axes.push_back(i);
        shape.push_back(1);
      }
      OperationState unsq(loc, "kiln.unsqueeze");
      unsq.addOperands({inputs[1], constI64(loc, axes)});
      unsq.addTypes(RankedTensorType::get(shape, slope.getElementType()));
      inputs[1] = b.create(unsq)->getResult(0);
    }
  }
  if (opset < 7 && legacyBroadcast.contains(op)) {
    handled = true;
    if (auto axis = dyn_cast_or_null<IntegerAttr>(attrs.get("axis"))) {
      auto a = inputs.size() > 1 && inputs[0]
                   ? dyn_cast<RankedTensorType>(inputs[0].getType())
                   : RankedTensorType();
      auto bt = inputs.size() > 1 && inputs[1]
                    ? dyn_cast<RankedTensorType>(inputs[1].getType())
                    : RankedTensorType();
      int64_t ax = axis.getInt();
      if (a && ax < 0)
        ax += a.getRank();
      if (!a || !bt || ax != a.getRank() - bt.getRank())
        return nodeError(node, loc) << "legacy broadcasting at axis "
                                    << axis.getInt() << " is not supported",
               failure();
      attrs.erase("axis");
    }
    attrs.erase("broadcast");
  }
  if (op == "BatchNormalization" && opset < 7)
    attrs.erase("is_test");
  if (op == "BatchNormalization" && opset < 14) {
    // Before opset 14 the optional outputs were training statistics; kiln
    // follows the inference form with a single output.
    for (int i = 1; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        return nodeError(node, loc) << "training-mode outputs of "
                                       "BatchNormalization before opset "
                                       "14 are not supported",
               failure();
    handled = true;
  }
  if (op == "Dropout" && opset < 12)
    handled = true;
  if (op == "Concat" && opset < 4) {
    // `axis` was optional, defaulting to 1.
    if (!attrs.get("axis"))
      attrs.set("axis", b.getI64IntegerAttr(1));
    handled = true;
  }
  if (op == "RoiAlign" && opset < 16) {
    // RoiAlign-10 shifts no half pixel (the later default does).
    attrs.set("coordinate_transformation_mode",
              b.getStringAttr("output_half_pixel"));
    handled = true;
  }
  if (op == "Resize" && opset < 11) {
    // Resize-10 (X, scales) behaves as the asymmetric, floor-rounding mode.
    if (inputs.size() != 2)
      return nodeError(node, loc) << "expects 2 inputs", failure();
    Value x = inputs[0], scales = inputs[1];
    inputs.assign({x, Value(), scales});
    attrs.set("coordinate_transformation_mode", b.getStringAttr("asymmetric"));
    attrs.set("nearest_mode", b.getStringAttr("floor"));
    handled = true;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

FailureOr<Operation *> Importer::buildOp(const onnx::NodeProto &node,
                                         const OpInfo &info, Location loc,
                                         ArrayRef<Value> inputs,
                                         NamedAttrList &attrs,
                                         unsigned numOutputs) {
  OperationState state(loc, info.mlirName);
  StringRef kinds = info.inputKinds;
  SmallVector<int32_t> sizes;
  size_t next = 0;
  for (auto [i, kind] : llvm::enumerate(kinds)) {
    if (kind == 'v') {
      int32_t count = 0;
      for (; next < inputs.size(); ++next, ++count) {
        if (!inputs[next])
          return nodeError(node, loc)
                     << "variadic input #" << next << " must not be empty",
                 failure();
        state.operands.push_back(inputs[next]);
      }
      sizes.push_back(count);
      continue;
    }
    Value v = next < inputs.size() ? inputs[next] : Value();
    ++next;
    if (!v && kind == 's')
      return nodeError(node, loc) << "missing required input #" << i, failure();
    if (v)
      state.operands.push_back(v);
    sizes.push_back(v ? 1 : 0);
  }
  if (next < inputs.size())
    return nodeError(node, loc)
               << "has " << inputs.size()
               << " inputs; the operator takes at most " << kinds.size(),
           failure();

  StringRef outKinds = info.outputKinds;
  SmallVector<int32_t> resultSizes;
  SmallVector<std::string> resultNames;
  size_t out = 0;
  for (char kind : outKinds) {
    if (kind == 'v') {
      int32_t count = 0;
      for (; out < numOutputs; ++out, ++count)
        resultNames.push_back(node.output(out));
      resultSizes.push_back(count);
      continue;
    }
    bool present =
        kind == 's' || (out < numOutputs && !node.output(out).empty());
    if (present)
      resultNames.push_back(out < numOutputs ? node.output(out) : "");
    resultSizes.push_back(present ? 1 : 0);
    ++out;
  }
  if (out < numOutputs)
    return nodeError(node, loc)
               << "has " << numOutputs << " outputs; the operator has at most "
               << outKinds.size(),
           failure();
  for (const std::string &name : resultNames) {
    Type t = name.empty() ? Type() : knownType(name);
    state.types.push_back(t ? t : b.getNoneType());
  }

  auto opName = state.name.getRegisteredInfo();
  if (opName && opName->hasTrait<OpTrait::AttrSizedOperandSegments>())
    attrs.set("operandSegmentSizes", b.getDenseI32ArrayAttr(sizes));
  if (opName && opName->hasTrait<OpTrait::AttrSizedResultSegments>())
    attrs.set("resultSegmentSizes", b.getDenseI32ArrayAttr(resultSizes));
  state.attributes = attrs;

  // What a Loop's or Scan's body inputs are given, for a body that does not
  // declare their types (function expansions often do not): Loop's
  // iteration number and condition, then the carried values; Scan's states,
  // then its scan inputs' slices (ranked later, by kiln-infer-shapes).
  SmallVector<Type> bodyArgTypes;
  if (node.op_type() == "Loop" && sizes.size() == 3) {
    bodyArgTypes = {RankedTensorType::get({}, b.getI64Type()),
                    RankedTensorType::get({}, b.getI1Type())};
    for (Value v : ArrayRef(state.operands).drop_front(sizes[0] + sizes[1]))
      bodyArgTypes.push_back(v.getType());
  } else if (node.op_type() == "Scan") {
    auto numScan = dyn_cast_or_null<IntegerAttr>(attrs.get("num_scan_inputs"));
    int64_t states = static_cast<int64_t>(state.operands.size()) -
                     (numScan ? numScan.getInt() : 0);
    for (auto [i, v] : llvm::enumerate(state.operands))
      bodyArgTypes.push_back(
          static_cast<int64_t>(i) < states || !isa<TensorType>(v.getType())
              ? v.getType()
              : UnrankedTensorType::get(getElementTypeOrSelf(v.getType())));
  }

  SmallVector<StringRef> regionAttrs;
  StringRef(info.regionAttrs).split(regionAttrs, ',', -1, false);
  for (StringRef regionName : regionAttrs) {
    Region *region = state.addRegion();
    const onnx::AttributeProto *graph = nullptr;
    for (const auto &a : node.attribute())
      if (a.name() == regionName)
        graph = &a;
    if (!graph || graph->type() != onnx::AttributeProto::GRAPH)
      return nodeError(node, loc)
                 << "missing graph attribute '" << regionName << "'",
             failure();
    if (failed(importSubgraph(graph->g(), *region, loc, bodyArgTypes)))
      return failure();
  }
  return b.create(state);
}

/// Types the results the model leaves undeclared of an op that has no Kiln
/// shape function with the ONNX schema's own inference function (libonnx
/// 1.12's), run on this one node with its inputs' types and small constant
/// inputs' values: whatever the graph around it (a convolution keeps
/// libonnx's whole-graph inference off), and whatever the model's opset,
/// where libonnx's schema of the op means what the node means.
void Importer::typeWithLibOnnx(const onnx::NodeProto &node, Operation *op,
                               const OpInfo &info) {
  if (isa<InferResultTypesOpInterface>(op) || op->getNumRegions() ||
      llvm::none_of(op->getResultTypes(),
                    [](Type t) { return isa<NoneType>(t); }))
    return;
  int64_t domainOpset =
      node.domain() == kTrainingDomain ? trainingOpset : opset;
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(domainOpset), domain);
  if (!schema || !schema->has_type_and_shape_inference_function() ||
      schema->SinceVersion() < info.compatibleSince)
    return;
  // Inputs by name: their types, and the values of small constants (the
  // shapes, sizes and axes an inference function reads).
  std::deque<onnx::TypeProto> typeStore;
  std::deque<onnx::TensorProto> dataStore;
  std::unordered_map<std::string, onnx::TypeProto *> types;
  std::unordered_map<std::string, const onnx::TensorProto *> data;
  for (const std::string &name : node.input()) {
    Value v = name.empty() ? Value() : lookup(name);
    auto t = v ? dyn_cast<TensorType>(v.getType()) : TensorType();
    int64_t dtype = t ? getOnnxDataType(t.getElementType()) : 0;
    if (!dtype)
      continue;
    onnx::TypeProto &tp = typeStore.emplace_back();
    auto *tensor = tp.mutable_tensor_type();
    tensor->set_elem_type(static_cast<int32_t>(dtype));
    if (auto ranked = dyn_cast<RankedTensorType>(t)) {
      auto *shape = tensor->mutable_shape();
      for (int64_t d : ranked.getShape()) {
        auto *dim = shape->add_dim();
        if (!ShapedType::isDynamic(d))
          dim->set_dim_value(d);
      }
    }
    types[name] = &tp;
    auto cst = v.getDefiningOp<ConstantOp>();
    auto dense = cst ? dyn_cast<DenseIntElementsAttr>(cst.getValue()) : nullptr;
    if (!dense || dense.getNumElements() > 64 ||
        !dense.getElementType().isInteger(64))
      continue;
    onnx::TensorProto &tensorData = dataStore.emplace_back();
    tensorData.set_name(name);
    tensorData.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dense.getType().getShape())
      tensorData.add_dims(d);
    for (const APInt &x : dense.getValues<APInt>())
      tensorData.add_int64_data(x.getSExtValue());
    data[name] = &tensorData;
  }
  onnx::NodeProto copy = node;
  onnx::shape_inference::InferenceContextImpl ctx(copy, types, data, {});
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception &) {
    return; // Left to the model's types and the error below.
  }
  // Results stand for the node's present outputs, in order.
  unsigned r = 0;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (r >= op->getNumResults())
      return;
    OpResult result = op->getResult(r++);
    const onnx::TypeProto *inferred = ctx.getOutputType(i);
    if (!isa<NoneType>(result.getType()) || !inferred ||
        !inferred->has_tensor_type() || !inferred->tensor_type().elem_type())
      continue;
    if (Type t = convertType(*inferred))
      result.setType(t);
  }
}

LogicalResult Importer::typeResults(const onnx::NodeProto &node, Operation *op,
                                    Location loc, const OpInfo *info) {
  if (info)
    typeWithLibOnnx(node, op, *info);
  if (auto infer = dyn_cast<InferResultTypesOpInterface>(op)) {
    SmallVector<Type> inferred;
    // Report the shape function's complaint as the node's error.
    std::string reason;
    LogicalResult inferredOk = success();
    {
      ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
        if (reason.empty())
          reason = diag.str();
        return success();
      });
      inferredOk = infer.inferResultTypes(inferred);
    }
    if (failed(inferredOk)) {
      StringRef r(reason);
      r.consume_front("'" + op->getName().getStringRef().str() + "' op ");
      return nodeError(node, loc) << r, failure();
    }
    for (auto [result, want] : llvm::zip(op->getResults(), inferred)) {
      Type have = result.getType();
      if (isa<NoneType>(want))
        continue;
      if (isa<NoneType>(have)) {
        result.setType(want);
        continue;
      }
      if (!areCompatibleTypes(want, have)) {
        // A declared shape that contradicts the inputs is the exporter's
        // mistake, not the model's meaning: ONNX Runtime warns and runs with
        // the shape the inputs imply, and so does kiln. A declared element
        // type that differs would change the numbers: that stays an error.
        auto haveT = dyn_cast<TensorType>(have);
        auto wantT = dyn_cast<TensorType>(want);
        if (!haveT || !wantT ||
            haveT.getElementType() != wantT.getElementType())
          return nodeError(node, loc) << "output #" << result.getResultNumber()
                                      << " is declared " << have
                                      << " but its inputs imply " << want,
                 failure();
        nodeWarning(node, loc)
            << "output #" << result.getResultNumber() << " is declared " << have
            << " but its inputs imply " << want
            << "; the implied shape is used";
        result.setType(want);
        continue;
      }
      result.setType(refineType(have, want));
    }
  }
  // Control flow: results follow the subgraph outputs when the model gives
  // no types.
  if (node.op_type() == "If") {
    Operation *thenYield = op->getRegion(0).front().getTerminator();
    Operation *elseYield = op->getRegion(1).front().getTerminator();
    if (thenYield->getNumOperands() != op->getNumResults() ||
        elseYield->getNumOperands() != op->getNumResults())
      return nodeError(node, loc) << "both branches must yield "
                                  << op->getNumResults() << " values",
             failure();
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      Type joined = joinTypes(thenYield->getOperand(i).getType(),
                              elseYield->getOperand(i).getType());
      if (!joined)
        return nodeError(node, loc) << "the branches yield incompatible "
                                       "types for output #"
                                    << i,
               failure();
      if (isa<NoneType>(result.getType()))
        result.setType(joined);
      else if (!areCompatibleTypes(joined, result.getType()) &&
               !areCompatibleTypes(result.getType(), joined))
        return nodeError(node, loc)
                   << "output #" << i << " is declared " << result.getType()
                   << " but the branches yield " << joined,
               failure();
    }
  } else if (node.op_type() == "Loop" || node.op_type() == "Scan") {
    // Loop yields (cond, carried..., scan outputs...); Scan yields
    // (carried..., scan outputs...). Scan outputs gain a leading dim.
    Operation *term = op->getRegion(0).front().getTerminator();
    unsigned first = node.op_type() == "Loop" ? 1 : 0;
    unsigned carried;
    if (node.op_type() == "Loop") {
      auto seg = op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
      carried = seg ? seg[2] : 0;
    } else {
      carried = op->getNumOperands() -
                static_cast<unsigned>(
                    op->getAttrOfType<IntegerAttr>("num_scan_inputs").getInt());
    }
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      if (!isa<NoneType>(result.getType()) ||
          first + i >= term->getNumOperands())
        continue;
      Type t = term->getOperand(first + i).getType();
      if (i >= carried) {
        auto ranked = dyn_cast<RankedTensorType>(t);
        if (ranked && node.op_type() == "Loop") {
          SmallVector<int64_t> shape = {ShapedType::kDynamic};
          llvm::append_range(shape, ranked.getShape());
          t = RankedTensorType::get(shape, ranked.getElementType());
        } else {
          t = UnrankedTensorType::get(getElementTypeOrSelf(t));
        }
      }
      result.setType(t);
    }
  }
  // Sequence and optional ops (their own shape inference is libonnx's,
  // which does not reach every opset): element types, shapes left to
  // kiln-infer-shapes, which resolves sequences of known elements.
  if (op->getNumResults() == 1 && isa<NoneType>(op->getResult(0).getType())) {
    auto elementOf = [](Value v) -> Type {
      Type t = v.getType();
      if (auto opt = dyn_cast<OptType>(t))
        t = opt.getValueType();
      if (auto seq = dyn_cast<SeqType>(t))
        t = seq.getElementType();
      return isa<TensorType>(t) ? getElementTypeOrSelf(t) : Type();
    };
    auto seqOf = [&](Type elt) -> Type {
      return elt ? SeqType::get(ctx, UnrankedTensorType::get(elt)) : Type();
    };
    StringRef type = node.op_type();
    Type t;
    Value in0 = op->getNumOperands() ? op->getOperand(0) : Value();
    if (type == "SequenceConstruct" || type == "SequenceInsert" ||
        type == "SequenceErase" || type == "SplitToSequence")
      t = in0 ? seqOf(elementOf(in0)) : Type();
    else if (type == "SequenceAt" || type == "ConcatFromSequence")
      t = in0 && elementOf(in0) ? UnrankedTensorType::get(elementOf(in0))
                                : Type();
    else if (type == "SequenceLength")
      t = RankedTensorType::get({}, b.getI64Type());
    else if (type == "SequenceEmpty") {
      int64_t dtype = 1; // float unless given
      for (const auto &a : node.attribute())
        if (a.name() == "dtype")
          dtype = a.i();
      t = seqOf(getElementTypeFromOnnx(ctx, dtype));
    } else if (type == "OptionalHasElement")
      t = RankedTensorType::get({}, b.getI1Type());
    else if (type == "OptionalGetElement" && in0)
      t = isa<OptType>(in0.getType())
              ? cast<OptType>(in0.getType()).getValueType()
              : in0.getType();
    if (t && !isa<NoneType>(t))
      op->getResult(0).setType(t);
  }
  for (OpResult result : op->getResults())
    if (isa<NoneType>(result.getType()))
      return nodeError(node, loc)
                 << "cannot infer the type of output #"
                 << result.getResultNumber()
                 << ": the model does not give it and kiln has no shape "
                    "function for "
                 << node.op_type(),
             failure();
  return success();
}

LogicalResult Importer::importConstantNode(const onnx::NodeProto &node,
                                           Location loc) {
  if (node.attribute_size() != 1 || node.output_size() != 1)
    return nodeError(node, loc) << "expects exactly one value attribute and "
                                   "one output",
           failure();
  const auto &a = node.attribute(0);
  Attribute value;
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  if (a.name() == "value") {
    auto t = convertTensor(a.t(), loc, /*allowResource=*/true);
    if (failed(t))
      return failure();
    value = *t;
  } else if (a.name() == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, f32), a.f());
  } else if (a.name() == "value_floats") {
    auto type = RankedTensorType::get({a.floats_size()}, f32);
    value = DenseElementsAttr::get(
        type, ArrayRef<float>(a.floats().data(), a.floats_size()));
  } else if (a.name() == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                   static_cast<int64_t>(a.i()));
  } else if (a.name() == "value_ints") {
    auto type = RankedTensorType::get({a.ints_size()}, i64);
    value = DenseElementsAttr::get(
        type, ArrayRef<int64_t>(a.ints().data(), a.ints_size()));
  } else if (a.name() == "value_string" || a.name() == "value_strings") {
    Type st = StringType::get(ctx);
    SmallVector<StringRef> strs;
    if (a.name() == "value_string")
      strs.push_back(a.s());
    else
      strs.assign(a.strings().begin(), a.strings().end());
    auto type = a.name() == "value_string"
                    ? RankedTensorType::get({}, st)
                    : RankedTensorType::get({(int64_t)strs.size()}, st);
    value = DenseStringElementsAttr::get(type, strs);
  } else {
    return nodeError(node, loc)
               << "attribute '" << a.name() << "' is not supported",
           failure();
  }
  auto elements = cast<ElementsAttr>(value);
  Value v = ConstantOp::create(b, loc, elements.getType(), elements);
  scopes.back().values[node.output(0)] = v;
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, int index) {
  Location loc = nodeLoc(node, index);
  StringRef domain = node.domain();
  if (domain == "ai.onnx")
    domain = "";
  // The opset of the node's domain.
  int64_t nodeOpset = opset;
  if (domain == kTrainingDomain) {
    if (trainingOpset < 0)
      return nodeError(node, loc)
                 << "the model imports no opset of domain '" << domain << "'",
             failure();
    nodeOpset = trainingOpset;
  } else if (!domain.empty()) {
    return nodeError(node, loc)
               << "operator domain '" << domain << "' is not supported",
           failure();
  } else if (!defaultDomainImported) {
    return nodeError(node, loc)
               << "the model imports no opset of the default ONNX domain",
           failure();
  }
  if (domain.empty() && node.op_type() == "Constant")
    return importConstantNode(node, loc);
  const OpInfo *info = lookupOp(domain, node.op_type());
  if (!info)
    return nodeError(node, loc) << "unknown operator", failure();

  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Value());
      continue;
    }
    Value v = lookup(name);
    if (!v)
      return nodeError(node, loc)
                 << "input '" << name << "' is not defined before the node",
             failure();
    inputs.push_back(v);
  }
  // Trailing empty names mean absent optional inputs.
  while (!inputs.empty() && !inputs.back())
    inputs.pop_back();

  auto opName = OperationName(info->mlirName, ctx);
  // Each attribute of the kind the operator's schema declares (where
  // libonnx has the schema): the op and its shape function read it so.
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(nodeOpset), domain.str());
  NamedAttrList attrs;
  for (const auto &a : node.attribute()) {
    if (schema) {
      auto declared = schema->attributes().find(a.name());
      if (declared != schema->attributes().end() &&
          declared->second.type != a.type() && a.ref_attr_name().empty())
        return nodeError(node, loc)
                   << "attribute '" << a.name() << "' is of type "
                   << onnx::AttributeProto_AttributeType_Name(a.type())
                   << "; the operator takes "
                   << onnx::AttributeProto_AttributeType_Name(
                          declared->second.type),
               failure();
    }
    if (a.type() == onnx::AttributeProto::GRAPH &&
        listContains(info->regionAttrs, a.name()))
      continue;
    auto converted = convertAttribute(node, a, *info, loc);
    if (failed(converted))
      return failure();
    attrs.set(kilnAttrName(*info, a.name()), *converted);
  }

  if (nodeOpset < info->compatibleSince) {
    if (node.op_type() == "Softmax" || node.op_type() == "LogSoftmax" ||
        node.op_type() == "Hardmax") {
      // Before opset 13 these operate on the input flattened to 2-D at
      // `axis` (default 1).
      int64_t axis = 1;
      if (auto a = dyn_cast_or_null<IntegerAttr>(attrs.get("axis")))
        axis = a.getInt();
      if (inputs.size() != 1)
        return nodeError(node, loc) << "expects 1 input", failure();
      Value x = inputs[0];
      auto xt = dyn_cast<RankedTensorType>(x.getType());
      if (!xt)
        return nodeError(node, loc) << "needs an input of known rank",
               failure();
      int64_t rank = xt.getRank();
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank)
        return nodeError(node, loc)
                   << "axis " << axis << " is out of range for rank " << rank,
               failure();
      NamedAttrList lastAxis;
      lastAxis.set("axis", b.getI64IntegerAttr(-1));
      Value result;
      if (axis == rank - 1) {
        auto op = buildOp(node, *info, loc, {x}, lastAxis, 1);
        if (failed(op) || failed(typeResults(node, *op, loc)))
          return failure();
        result = (*op)->getResult(0);
      } else {
        OperationState flat(loc, "kiln.flatten");
        flat.addOperands(x);
        flat.addAttribute("axis", b.getI64IntegerAttr(axis));
        flat.addTypes(b.getNoneType());
        Operation *f = b.create(flat);
        SmallVector<Type> t;
        (void)cast<InferResultTypesOpInterface>(f).inferResultTypes(t);
        f->getResult(0).setType(t[0]);
        auto sm = buildOp(node, *info, loc, {f->getResult(0)}, lastAxis, 1);
        if (failed(sm))
          return failure();
        (*sm)->getResult(0).setType(t[0]);
        OperationState shape(loc, "kiln.shape");
        shape.addOperands(x);
        shape.addTypes(RankedTensorType::get({rank}, b.getI64Type()));
        Operation *s = b.create(shape);
        OperationState reshape(loc, "kiln.reshape");
        reshape.addOperands({(*sm)->getResult(0), s->getResult(0)});
        reshape.addTypes(x.getType());
        result = b.create(reshape)->getResult(0);
      }
      scopes.back().values[node.output(0)] = result;
      return success();
    }
    if (node.op_type() == "Scan" && opset < 9)
      return importScan8(node, index, loc);
    bool handled = false;
    if (failed(upgradeNode(node, *info, loc, inputs, attrs, handled)))
      return failure();
    if (!handled)
      return nodeError(node, loc) << "kiln follows " << node.op_type()
                                  << " as of opset " << info->compatibleSince
                                  << " and has no upgrade from opset " << opset,
             failure();
  }

  // Attributes the operator does not define are errors, not silently lost.
  for (const NamedAttribute &a : attrs) {
    if (a.getName() == "operandSegmentSizes" ||
        a.getName() == "resultSegmentSizes")
      continue;
    if (!llvm::is_contained(opName.getAttributeNames(), a.getName()))
      return nodeError(node, loc)
                 << "unknown attribute '" << a.getName().getValue() << "'",
             failure();
  }

  SmallVector<StringRef> required;
  StringRef(info->requiredAttrs).split(required, ',', -1, false);
  for (StringRef name : required)
    if (!attrs.get(kilnAttrName(*info, name)))
      return nodeError(node, loc)
                 << "missing required attribute '" << name << "'",
             failure();

  unsigned numOutputs = node.output_size();
  auto op = buildOp(node, *info, loc, inputs, attrs, numOutputs);
  if (failed(op))
    return failure();
  if (failed(typeResults(node, *op, loc, info)))
    return failure();
  // Bind outputs by walking the slots again.
  unsigned r = 0;
  StringRef outKinds = info->outputKinds;
  size_t out = 0;
  for (char kind : outKinds) {
    if (kind == 'v') {
      for (; out < numOutputs; ++out)
        if (!node.output(out).empty())
          scopes.back().values[node.output(out)] = (*op)->getResult(r++);
        else
          ++r;
      continue;
    }
    bool present =
        kind == 's' || (out < numOutputs && !node.output(out).empty());
    if (present) {
      if (out < numOutputs && !node.output(out).empty())
        scopes.back().values[node.output(out)] = (*op)->getResult(r);
      ++r;
    }
    ++out;
  }
  return success();
}

/// Scan before opset 9: every input and output has a batch axis 0 (it
/// scans axis 1), and an optional first input, sequence_lens. Imported as
/// one opset-9 Scan per sample of a static batch: each input's sample
/// taken by a Gather, each result given its batch axis back (Unsqueeze)
/// and the samples' joined (Concat); the body is imported once a sample.
LogicalResult Importer::importScan8(const onnx::NodeProto &node, int index,
                                    Location loc) {
  if (node.input_size() > 0 && !node.input(0).empty())
    return nodeError(node, loc)
               << "Scan before opset 9 with sequence_lens is not supported",
           failure();
  int64_t batch = -1;
  for (int i = 1; i < node.input_size(); ++i) {
    Value v = lookup(node.input(i));
    if (!v)
      return nodeError(node, loc) << "input '" << node.input(i)
                                  << "' is not defined before the node",
             failure();
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() == 0 || t.isDynamicDim(0))
      return nodeError(node, loc)
                 << "Scan before opset 9 needs a static batch (dim 0 of "
                    "every input); input '"
                 << node.input(i) << "' has none",
             failure();
    if (batch >= 0 && t.getDimSize(0) != batch)
      return nodeError(node, loc)
                 << "input '" << node.input(i) << "' has a batch of "
                 << t.getDimSize(0) << " where the first input has " << batch,
             failure();
    batch = t.getDimSize(0);
  }
  if (batch < 0)
    return nodeError(node, loc) << "has no inputs", failure();
  std::string base = (node.name().empty() ? std::string("Scan") : node.name()) +
                     "#" + std::to_string(index) + "/sample";
  auto attr = [](onnx::NodeProto &n, const std::string &name) {
    auto *a = n.add_attribute();
    a->set_name(name);
    return a;
  };
  // Per output, its samples' names.
  std::vector<std::vector<std::string>> samples(node.output_size());
  for (int64_t s = 0; s < batch; ++s) {
    std::string prefix = base + std::to_string(s) + "/";
    onnx::NodeProto at;
    at.set_op_type("Constant");
    at.set_name(prefix + "index");
    at.add_output(prefix + "index");
    auto *value = attr(at, "value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    value->mutable_t()->add_int64_data(s);
    if (failed(importNode(at, index)))
      return failure();
    onnx::NodeProto scan = node;
    scan.set_name(prefix + "Scan");
    scan.clear_input();
    scan.clear_output();
    scan.clear_attribute();
    for (int i = 1; i < node.input_size(); ++i) {
      onnx::NodeProto gather;
      gather.set_op_type("Gather");
      gather.set_name(prefix + "Gather" + std::to_string(i));
      gather.add_input(node.input(i));
      gather.add_input(prefix + "index");
      gather.add_output(prefix + "in" + std::to_string(i));
      auto *axis = attr(gather, "axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(0);
      if (failed(importNode(gather, index)))
        return failure();
      scan.add_input(prefix + "in" + std::to_string(i));
    }
    for (const auto &a : node.attribute()) {
      auto *copy = scan.add_attribute();
      *copy = a;
      if (a.name() == "directions")
        copy->set_name("scan_input_directions");
    }
    for (int o = 0; o < node.output_size(); ++o) {
      std::string name = node.output(o).empty()
                             ? std::string()
                             : prefix + "out" + std::to_string(o);
      scan.add_output(name);
      samples[o].push_back(name);
    }
    int64_t modelOpset = opset;
    opset = 9;
    llvm::scope_exit restore([&] { opset = modelOpset; });
    if (failed(importNode(scan, index)))
      return failure();
  }
  for (int o = 0; o < node.output_size(); ++o) {
    if (node.output(o).empty())
      continue;
    onnx::NodeProto concat;
    concat.set_op_type("Concat");
    concat.set_name(base + "Concat" + std::to_string(o));
    for (const std::string &sample : samples[o]) {
      onnx::NodeProto unsqueeze;
      unsqueeze.set_op_type("Unsqueeze");
      unsqueeze.set_name(sample + "/Unsqueeze");
      unsqueeze.add_input(sample);
      unsqueeze.add_output(sample + "/batch");
      auto *axes = attr(unsqueeze, "axes");
      axes->set_type(onnx::AttributeProto::INTS);
      axes->add_ints(0);
      if (failed(importNode(unsqueeze, index)))
        return failure();
      concat.add_input(sample + "/batch");
    }
    concat.add_output(node.output(o));
    auto *axis = attr(concat, "axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    if (failed(importNode(concat, index)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

LogicalResult Importer::importGraphBody(const onnx::GraphProto &graph,
                                        SmallVectorImpl<Value> &outputs) {
  collectTypes(graph);
  for (const auto &init : graph.initializer()) {
    Location loc = NameLoc::get(StringAttr::get(ctx, init.name()), fileLoc());
    auto value = convertTensor(init, loc, /*allowResource=*/true);
    if (failed(value))
      return failure();
    scopes.back().values[init.name()] =
        ConstantOp::create(b, loc, value->getType(), *value);
  }
  if (graph.sparse_initializer_size())
    return emitError(fileLoc()) << "sparse initializers are not supported",
           failure();
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return failure();
  for (const auto &out : graph.output()) {
    Value v = lookup(out.name());
    if (!v)
      return emitError(fileLoc()) << "graph output '" << out.name()
                                  << "' is not produced by any node",
             failure();
    outputs.push_back(v);
  }
  return success();
}

LogicalResult Importer::importSubgraph(const onnx::GraphProto &graph,
                                       Region &region, Location loc,
                                       ArrayRef<Type> impliedTypes) {
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&region);
  scopes.emplace_back();
  llvm::scope_exit pop([&] { scopes.pop_back(); });
  for (const auto &[i, in] : llvm::enumerate(graph.input())) {
    Type t = in.has_type() ? convertType(in.type()) : Type();
    if (!t && i < impliedTypes.size())
      t = impliedTypes[i];
    if (!t)
      return emitError(loc) << "subgraph '" << graph.name() << "' input '"
                            << in.name() << "' has no supported type",
             failure();
    scopes.back().values[in.name()] = block->addArgument(t, loc);
  }
  SmallVector<Value> outputs;
  if (failed(importGraphBody(graph, outputs)))
    return failure();
  YieldOp::create(b, loc, outputs);
  return success();
}

LogicalResult Importer::checkWithLibOnnx(onnx::ModelProto &model) {
  const auto &versions =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = versions.find("");
  if (it == versions.end() || opset > it->second.second)
    return success(); // Beyond libonnx's schemas: Kiln's own rules only.
  try {
    onnx::checker::CheckerContext checkCtx;
    checkCtx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto &o : model.opset_import())
      opsets[o.domain()] = static_cast<int>(o.version());
    checkCtx.set_opset_imports(opsets);
    checkCtx.set_model_dir(modelDir);
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(model.graph(), checkCtx, lex);
  } catch (const std::exception &e) {
    StringRef msg(e.what());
    return emitError(fileLoc()) << "the ONNX checker rejects the model: "
                                << msg.split("\n\n==>").first.trim(),
           failure();
  }
  // libonnx 1.12's shape inference for convolutions and pooling
  // (convPoolShapeInference, convTransposeShapeInference) indexes the
  // operands' shapes without checking their ranks: a rank-1 ConvTranspose
  // weight, a rank-2 ConvTranspose input and a malformed Conv each crashed
  // the importer (found by fuzz/OnnxImportFuzzer.cpp). A graph with one of
  // those ops anywhere (subgraphs included) skips libonnx's shape
  // inference: Kiln's shape functions, which check ranks and attributes
  // first, type it alone.
  static const llvm::StringSet<> fragile = {
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv",
      "MaxPool", "AveragePool",   "LpPool",      "MaxUnpool"};
  std::function<bool(const onnx::GraphProto &)> hasConvOrPool =
      [&](const onnx::GraphProto &g) {
        for (const auto &node : g.node()) {
          if (fragile.contains(node.op_type()) &&
              (node.domain().empty() || node.domain() == "ai.onnx"))
            return true;
          for (const auto &attr : node.attribute()) {
            if (attr.has_g() && hasConvOrPool(attr.g()))
              return true;
            for (const auto &sub : attr.graphs())
              if (hasConvOrPool(sub))
                return true;
          }
        }
        return false;
      };
  if (hasConvOrPool(model.graph()))
    return success();
  try {
    onnx::ShapeInferenceOptions opts{/*check_type=*/false, /*error_mode=*/0,
                                     /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception &e) {
    // libonnx stops at the first declared type that contradicts what it
    // infers (ONNX Runtime only warns of it). The types it merged before
    // are sound; Kiln's shape functions type the rest and report the
    // contradiction at its node.
    emitWarning(fileLoc()) << "ONNX shape inference stops: "
                           << StringRef(e.what()).trim()
                           << "; kiln's shape functions type the rest";
  }
  return success();
}

OwningOpRef<ModuleOp> Importer::importModel(onnx::ModelProto &model) {
  ctx->loadDialect<KilnDialect, func::FuncDialect>();
  opset = -1;
  trainingOpset = -1;
  defaultDomainImported = true;
  for (const auto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
    else if (o.domain() == kTrainingDomain)
      trainingOpset = o.version();
  }
  if (trainingOpset >= 0 &&
      (trainingOpset < 1 || trainingOpset > kMaxTrainingOpset)) {
    emitError(fileLoc()) << "the model uses " << kTrainingDomain << " opset "
                         << trainingOpset << "; kiln imports opsets 1 to "
                         << kMaxTrainingOpset;
    return nullptr;
  }
  if (opset < 0) {
    if (model.ir_version() < 3) {
      opset = 1;
    } else if (trainingOpset >= 0) {
      opset = kTrainingOnlyDefaultOpset;
      defaultDomainImported = false;
    } else {
      emitError(fileLoc()) << "the model imports no opset of the default "
                              "ONNX domain";
      return nullptr;
    }
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    emitError(fileLoc()) << "the model uses opset " << opset
                         << "; kiln imports opsets " << kMinOpset << " to "
                         << kMaxOpset;
    return nullptr;
  }
  const onnx::GraphProto &graph = model.graph();

  // A negative dim_value is an unknown dim, as ONNX Runtime reads it (some
  // exporters write -1 for a dynamic batch); libonnx's checker and shape
  // inference see it as unknown too.
  clearNegativeDims(*model.mutable_graph());

  // Apply caller-given input shapes before ONNX shape inference sees them.
  llvm::StringSet<> initNames;
  for (const auto &init : graph.initializer())
    initNames.insert(init.name());
  llvm::StringSet<> seen;
  for (auto &in : *model.mutable_graph()->mutable_input()) {
    auto it = options.inputShapes.find(in.name());
    if (it == options.inputShapes.end())
      continue;
    seen.insert(in.name());
    bool optionalTensor =
        in.type().has_optional_type() &&
        in.type().optional_type().elem_type().has_tensor_type();
    if (!in.type().has_tensor_type() && !optionalTensor) {
      emitError(fileLoc()) << "--input-shape: input '" << in.name()
                           << "' is not a tensor";
      return nullptr;
    }
    auto *tt = optionalTensor ? in.mutable_type()
                                    ->mutable_optional_type()
                                    ->mutable_elem_type()
                                    ->mutable_tensor_type()
                              : in.mutable_type()->mutable_tensor_type();
    if (tt->has_shape() && tt->shape().dim_size() != (int)it->second.size()) {
      emitError(fileLoc()) << "--input-shape: input '" << in.name()
                           << "' has rank " << tt->shape().dim_size()
                           << ", the given shape has rank "
                           << it->second.size();
      return nullptr;
    }
    for (auto [i, d] : llvm::enumerate(it->second)) {
      if (tt->has_shape() && tt->shape().dim(i).has_dim_value() && d >= 0 &&
          tt->shape().dim(i).dim_value() >= 0 &&
          tt->shape().dim(i).dim_value() != d) {
        emitError(fileLoc())
            << "--input-shape: input '" << in.name() << "' has static dim " << i
            << " of " << tt->shape().dim(i).dim_value()
            << ", the given shape says " << d;
        return nullptr;
      }
    }
    auto *shape = tt->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second) {
      auto *dim = shape->add_dim();
      if (d >= 0)
        dim->set_dim_value(d);
    }
  }
  for (const auto &entry : options.inputSequences) {
    const onnx::ValueInfoProto *in = nullptr;
    for (const auto &g : graph.input())
      if (g.name() == entry.getKey() && !initNames.contains(g.name()))
        in = &g;
    if (!in) {
      emitError(fileLoc()) << "--input-sequence: the model has no input '"
                           << entry.getKey() << "'";
      return nullptr;
    }
    const onnx::TypeProto &type = in->type().has_optional_type()
                                      ? in->type().optional_type().elem_type()
                                      : in->type();
    if (!type.has_sequence_type() ||
        !type.sequence_type().elem_type().has_tensor_type()) {
      emitError(fileLoc()) << "--input-sequence: input '" << entry.getKey()
                           << "' is not a sequence of tensors";
      return nullptr;
    }
    for (const auto &shape : entry.getValue())
      for (int64_t d : shape)
        if (d < 0) {
          emitError(fileLoc()) << "--input-sequence: the elements of '"
                               << entry.getKey() << "' need static shapes";
          return nullptr;
        }
  }
  for (const auto &name : options.absentInputs) {
    if (options.inputSequences.contains(name.getKey()) ||
        options.inputShapes.contains(name.getKey())) {
      emitError(fileLoc()) << "--input-absent: input '" << name.getKey()
                           << "' is also given a shape (--input-shape or "
                              "--input-sequence); an absent input has none";
      return nullptr;
    }
    if (llvm::none_of(graph.input(), [&](const onnx::ValueInfoProto &g) {
          return g.name() == name.getKey() && !initNames.contains(g.name());
        })) {
      emitError(fileLoc()) << "--input-absent: the model has no input '"
                           << name.getKey() << "'";
      return nullptr;
    }
  }
  for (const auto &entry : options.inputShapes) {
    if (initNames.contains(entry.getKey())) {
      emitError(fileLoc()) << "--input-shape: input '" << entry.getKey()
                           << "' has an initializer: it is a constant of the "
                              "model, not an input";
      return nullptr;
    }
    if (!seen.contains(entry.getKey())) {
      std::string names;
      for (const auto &in : graph.input())
        if (!initNames.contains(in.name()))
          names += (names.empty() ? "" : ", ") + in.name();
      emitError(fileLoc()) << "--input-shape: the model has no input '"
                           << entry.getKey() << "' (inputs: " << names << ")";
      return nullptr;
    }
  }

  if (options.onnxChecks && failed(checkWithLibOnnx(model)))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  b.setInsertionPointToEnd(module->getBody());
  scopes.emplace_back();

  // One argument per graph input, or per element of a sequence input
  // given with --input-sequence, or per value of an optional input (none
  // with --input-absent): rebuilt below into the sequence or the optional.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  struct CompositeInput {
    const onnx::ValueInfoProto *in;
    unsigned first, length;
    Type elementType;
    StringRef kind;
    bool absent;
  };
  SmallVector<CompositeInput> composites;
  SmallVector<std::pair<const onnx::ValueInfoProto *, unsigned>> args;
  for (const auto &in : graph.input()) {
    if (initNames.contains(in.name()))
      continue; // An initializer's default value: a constant.
    Type t = in.has_type() ? convertType(in.type()) : Type();
    if (!t) {
      emitError(fileLoc()) << "graph input '" << in.name()
                           << "' has no supported type";
      return nullptr;
    }
    auto opt = dyn_cast<OptType>(t);
    Type value = opt ? opt.getValueType() : t;
    bool absent = options.absentInputs.contains(in.name());
    if (absent && !opt) {
      emitError(fileLoc()) << "--input-absent: input '" << in.name()
                           << "' is not optional";
      return nullptr;
    }
    auto seq = options.inputSequences.find(in.name());
    if (!opt && seq == options.inputSequences.end()) {
      args.push_back({&in, static_cast<unsigned>(argTypes.size())});
      argTypes.push_back(t);
      argNames.push_back(in.name());
      continue;
    }
    unsigned first = argTypes.size();
    auto seqType = dyn_cast<SeqType>(value);
    if (absent) {
      Type elt =
          getElementTypeOrSelf(seqType ? seqType.getElementType() : value);
      composites.push_back({&in, first, 0, elt,
                            seqType ? "optional_sequence" : "optional_tensor",
                            true});
      continue;
    }
    if (!seqType) {
      // A present optional tensor.
      composites.push_back({&in, first, 1, getElementTypeOrSelf(value),
                            "optional_tensor", false});
      argTypes.push_back(value);
      argNames.push_back(in.name());
      continue;
    }
    if (seq == options.inputSequences.end()) {
      emitError(fileLoc()) << "input '" << in.name()
                           << "' is an optional sequence: give its elements' "
                              "shapes with --input-sequence, or compile it "
                              "absent with --input-absent";
      return nullptr;
    }
    auto elt = cast<TensorType>(seqType.getElementType());
    composites.push_back(
        {&in, first, static_cast<unsigned>(seq->getValue().size()),
         elt.getElementType(), opt ? "optional_sequence" : "sequence", false});
    for (auto [k, shape] : llvm::enumerate(seq->getValue())) {
      argTypes.push_back(RankedTensorType::get(shape, elt.getElementType()));
      argNames.push_back(in.name() + "[" + std::to_string(k) + "]");
    }
  }
  auto fn = func::FuncOp::create(b, fileLoc(), "main",
                                 b.getFunctionType(argTypes, {}));
  Block *entry = fn.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames))
    fn.setArgAttr(i, "kiln.name", b.getStringAttr(name));
  for (auto [in, i] : args)
    scopes.back().values[in->name()] = entry->getArgument(i);
  b.setInsertionPointToEnd(entry);
  SmallVector<Attribute> compositeAttrs;
  for (const CompositeInput &q : composites) {
    Type type = convertType(q.in->type());
    auto opt = dyn_cast<OptType>(type);
    Type valueType = opt ? opt.getValueType() : type;
    Value v;
    if (q.absent) {
      v = nullptr;
    } else if (isa<SeqType>(valueType) && q.length == 0) {
      OperationState st(fileLoc(), "kiln.sequence_empty");
      st.addTypes(valueType);
      v = b.create(st)->getResult(0);
    } else if (isa<SeqType>(valueType)) {
      OperationState st(fileLoc(), "kiln.sequence_construct");
      st.addOperands(entry->getArguments().slice(q.first, q.length));
      st.addTypes(valueType);
      v = b.create(st)->getResult(0);
    } else {
      v = entry->getArgument(q.first);
    }
    if (opt) {
      OperationState st(fileLoc(), "kiln.optional");
      if (v)
        st.addOperands(v);
      st.addTypes(type);
      v = b.create(st)->getResult(0);
    }
    scopes.back().values[q.in->name()] = v;
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("name", b.getStringAttr(q.in->name())),
        b.getNamedAttr("kind", b.getStringAttr(q.kind)),
        b.getNamedAttr("first", b.getI64IntegerAttr(q.first)),
        b.getNamedAttr("length", b.getI64IntegerAttr(q.length)),
        b.getNamedAttr("element_type", TypeAttr::get(q.elementType))};
    if (q.absent)
      attrs.push_back(b.getNamedAttr("absent", b.getUnitAttr()));
    compositeAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  if (!compositeAttrs.empty())
    fn->setAttr("kiln.composites", b.getArrayAttr(compositeAttrs));
  SmallVector<Value> outputs;
  if (failed(importGraphBody(graph, outputs)))
    return nullptr;
  func::ReturnOp::create(b, fileLoc(), outputs);
  fn.setType(b.getFunctionType(argTypes, ValueRange(outputs).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    fn.setResultAttr(i, "kiln.name", b.getStringAttr(out.name()));
  if (!graph.name().empty())
    module->getOperation()->setAttr("kiln.graph_name",
                                    b.getStringAttr(graph.name()));
  module->getOperation()->setAttr("kiln.opset", b.getI64IntegerAttr(opset));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

bool kiln::isOnnxFileName(StringRef path) {
  return path.ends_with(".onnx") || path.ends_with(".onnxtxt");
}

LogicalResult kiln::parseInputShape(StringRef spec, OnnxImportOptions &options,
                                    std::string &error) {
  auto [name, dims] = spec.rsplit(':');
  if (name.empty() || dims.data() == nullptr || !spec.contains(':')) {
    error = "expected NAME:DIMS (for example input:1x3x224x224), got '" +
            spec.str() + "'";
    return failure();
  }
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  if (!dims.empty())
    dims.split(parts, 'x');
  for (StringRef p : parts) {
    int64_t d;
    if (p == "?" || p == "-1") {
      shape.push_back(-1);
    } else if (p.getAsInteger(10, d) || d < 0) {
      error = "bad dimension '" + p.str() + "' in '" + spec.str() + "'";
      return failure();
    } else {
      shape.push_back(d);
    }
  }
  options.inputShapes[name] = shape;
  return success();
}

LogicalResult kiln::parseInputSequence(StringRef spec,
                                       OnnxImportOptions &options,
                                       std::string &error) {
  if (!spec.contains(':')) {
    error = "expected NAME:SHAPE,SHAPE,... (for example x:2x3,4x3), got '" +
            spec.str() + "'";
    return failure();
  }
  auto [name, list] = spec.rsplit(':');
  if (name.empty()) {
    error = "expected NAME:SHAPE,SHAPE,..., got '" + spec.str() + "'";
    return failure();
  }
  SmallVector<SmallVector<int64_t>> shapes;
  SmallVector<StringRef> elements;
  if (!list.empty())
    list.split(elements, ',');
  for (StringRef e : elements) {
    // A scalar element is `scalar` (NAME: alone is an empty sequence).
    if (e == "scalar")
      e = "";
    OnnxImportOptions one;
    if (failed(parseInputShape((name + ":" + e).str(), one, error)))
      return failure();
    shapes.push_back(one.inputShapes.begin()->getValue());
  }
  options.inputSequences[name] = std::move(shapes);
  return success();
}

OwningOpRef<ModuleOp> kiln::importOnnxBuffer(StringRef bytes,
                                             StringRef bufferName, bool isText,
                                             StringRef modelDir,
                                             MLIRContext *context,
                                             const OnnxImportOptions &options) {
  onnx::ModelProto model;
  Location loc = FileLineColLoc::get(context, bufferName, 0, 0);
  if (isText) {
    std::string text = bytes.str();
    auto status = onnx::OnnxParser::Parse(model, text.c_str());
    if (!status.IsOK()) {
      emitError(loc) << "cannot parse ONNX text: " << status.ErrorMessage();
      return nullptr;
    }
  } else {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      emitError(loc) << "the model is larger than 2 GiB; keep its weights as "
                        "external data";
      return nullptr;
    }
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      emitError(loc) << "not a valid ONNX model (protobuf parse failed)";
      return nullptr;
    }
  }
  Importer importer(context, options, bufferName, modelDir);
  return importer.importModel(model);
}

OwningOpRef<ModuleOp> kiln::importOnnxFile(StringRef path, MLIRContext *context,
                                           const OnnxImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "cannot open '" << path << "': " << buffer.getError().message();
    return nullptr;
  }
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return importOnnxBuffer((*buffer)->getBuffer(), path,
                          path.ends_with(".onnxtxt"), dir, context, options);
}
