//===- BatchRange.cpp - kiln-compile for a range of batch sizes -----------===//
//
// See BatchRange.h.
//
//===----------------------------------------------------------------------===//

#include "BatchRange.h"

#include "kiln/Codegen/Pipelines.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Import/OnnxImporter.h"
#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstring>

using namespace mlir;

namespace kiln::compile {

bool parseShapeSpec(const std::string &spec, ShapeSpec &out,
                    std::string &error) {
  // Ranges are read here; the dims, with each range at its maximum, are
  // --input-shape's (kiln::parseInputShape).
  StringRef s(spec);
  auto [name, dims] = s.rsplit(':');
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  std::string plain = (name + ":").str();
  for (auto [i, part] : llvm::enumerate(parts)) {
    StringRef d = part;
    if (part.contains("..")) {
      auto [lo, hi] = part.split("..");
      int64_t mn = 0, mx = 0;
      if (lo.getAsInteger(10, mn) || hi.getAsInteger(10, mx) || mn < 1 ||
          mx < mn) {
        error = "'" + spec + "': a range is MIN..MAX with 1 <= MIN <= MAX";
        return false;
      }
      if (i == 0) {
        out.rangeMin = mn;
        out.rangeMax = mx;
      } else if (out.lengthDim >= 0) {
        error =
            "'" + spec + "': besides the batch (dim 0), one dim may be a range";
        return false;
      } else if (mn < mx) {
        out.lengthDim = static_cast<int64_t>(i);
        out.lengthMin = mn;
        out.lengthMax = mx;
      }
      d = hi;
    }
    plain += (i ? "x" : "") + d.str();
  }
  kiln::OnnxImportOptions options;
  if (failed(kiln::parseInputShape(plain, options, error)))
    return false;
  out.name = name.str();
  out.dims.assign(options.inputShapes[name].begin(),
                  options.inputShapes[name].end());
  return true;
}

std::string specAt(const ShapeSpec &spec, int64_t batch, int64_t length) {
  std::string s = spec.name + ":";
  for (auto [i, d] : llvm::enumerate(spec.dims)) {
    int64_t v = i == 0 && spec.rangeMax ? batch : d;
    if (static_cast<int64_t>(i) == spec.lengthDim)
      v = length ? length : spec.lengthMin;
    s += (i ? "x" : "") + (v < 0 ? std::string("?") : std::to_string(v));
  }
  return s;
}

std::vector<int64_t> batchChunks(int64_t opt) {
  std::vector<int64_t> chunks = {opt};
  int64_t p = 1;
  while (p * 2 < opt)
    p *= 2;
  for (; p >= 1; p /= 2)
    if (p < opt)
      chunks.push_back(p);
  return chunks;
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

namespace {

/// Whether every row (along dim 0) of a constant holds the same values: a
/// batch-shaped constant that does not depend on the sample's index.
bool rowsEqual(Attribute value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return false;
  if (dense.isSplat())
    return true;
  auto type = cast<ShapedType>(dense.getType());
  int64_t rows = type.getDimSize(0);
  int64_t row = rows ? type.getNumElements() / rows : 0;
  auto values = llvm::to_vector(dense.getValues<Attribute>());
  for (int64_t r = 1; r < rows; ++r)
    for (int64_t i = 0; i < row; ++i)
      if (values[r * row + i] != values[i])
        return false;
  return true;
}

/// The op's reason to mix the samples of a batched operand of rank `rank`,
/// or empty: an axis attribute or operand naming dim 0, a permutation that
/// moves it, control flow over batched values.
std::string mixesSamples(Operation *op, int64_t rank) {
  auto isZero = [&](int64_t a) { return a == 0 || a == -rank; };
  if (op->getNumRegions())
    return "its regions would run on the whole batch";
  for (NamedAttribute a : op->getAttrs()) {
    StringRef n = a.getName().strref();
    if (auto i = dyn_cast<IntegerAttr>(a.getValue());
        i && (n == "axis" || n == "time_axis") && isZero(i.getInt()))
      return "its " + n.str() + " is the batch";
    if (auto v = dyn_cast<DenseI64ArrayAttr>(a.getValue())) {
      if (n == "axes" && llvm::any_of(v.asArrayRef(), isZero))
        return "its axes include the batch";
      if (n == "perm" && !v.empty() && v[0] != 0)
        return "its permutation moves the batch";
    }
  }
  StringRef name = op->getName().getStringRef();
  // Axes given as an operand: the reductions (operand 1) and CumSum.
  if ((name.starts_with("kiln.reduce_") || name == "kiln.cum_sum" ||
       name == "kiln.slice") &&
      op->getNumOperands() > 1) {
    unsigned idx = name == "kiln.slice" ? 3 : 1;
    if (name == "kiln.slice" && op->getNumOperands() <= 3)
      return "it slices every axis, the batch among them";
    if (idx < op->getNumOperands() && op->getOperand(idx)) {
      auto axes = getConstantInts(op->getOperand(idx));
      if (!axes)
        return "its axes are known only at run time";
      if (llvm::any_of(*axes, isZero))
        return "its axes include the batch";
    }
  }
  if ((name == "kiln.gather_nd" || name == "kiln.scatter_nd") &&
      (!op->hasAttr("batch_dims") ||
       cast<IntegerAttr>(op->getAttr("batch_dims")).getInt() == 0))
    return "it indexes the batch";
  return "";
}

} // namespace

bool importTwice(MLIRContext &context, const std::string &model,
                 const std::vector<ShapeSpec> &specs, bool onnxChecks,
                 const std::function<std::string(const ShapeSpec &, int)> &at,
                 const std::function<std::string(int)> &what, TwinImports &out,
                 std::string &error) {
  for (int k = 0; k < 2; ++k) {
    kiln::OnnxImportOptions options;
    options.onnxChecks = onnxChecks;
    for (const ShapeSpec &s : specs)
      if (failed(kiln::parseInputShape(at(s, k), options, error)))
        return false;
    out.modules[k] = kiln::importOnnxFile(model, &context, options);
    if (!out.modules[k]) {
      error = "the model does not import at " + what(k);
      return false;
    }
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(kiln::createKilnInferShapes());
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(*out.modules[k]))) {
      error = "shape inference failed at " + what(k);
      return false;
    }
    out.fns[k] = out.modules[k]->lookupSymbol<func::FuncOp>("main");
    if (!out.fns[k]) {
      error = "the model has no main function";
      return false;
    }
    // Constants are left to their uses: the two imports share equal
    // constants differently.
    for (Operation &top : out.fns[k].getBody().front())
      top.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!op->hasTrait<OpTrait::ConstantLike>())
          out.ops[k].push_back(op);
      });
  }
  if (out.ops[0].size() != out.ops[1].size()) {
    error = "the graph folds differently at " + what(0) + " and " + what(1) +
            "; its computation depends on the size";
    return false;
  }
  return true;
}

bool checkSampleIndependence(MLIRContext &context, const std::string &model,
                             const std::vector<ShapeSpec> &specs,
                             bool onnxChecks, std::vector<bool> &batchedOutputs,
                             std::string &error) {
  llvm::StringSet<> ranged;
  for (const ShapeSpec &s : specs)
    if (s.rangeMax)
      ranged.insert(s.name);
  TwinImports twins;
  if (!importTwice(
          context, model, specs, onnxChecks,
          [](const ShapeSpec &s, int k) { return specAt(s, k + 1); },
          [](int k) { return "batch " + std::to_string(k + 1); }, twins, error))
    return false;
  func::FuncOp *fns = twins.fns;
  SmallVector<Operation *> *ops = twins.ops;
  llvm::DenseSet<Value> batched;
  for (BlockArgument arg : fns[0].getArguments())
    if (auto n = fns[0].getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     "kiln.name");
        n && ranged.contains(n.getValue()))
      batched.insert(arg);
  auto where = [](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      os << "node '" << name.getName().strref() << "' (" << op->getName()
         << ")";
    else
      os << "'" << op->getName() << "' at " << op->getLoc();
    return s;
  };
  auto followsBatch = [](Type a, Type b) {
    auto x = dyn_cast<RankedTensorType>(a), y = dyn_cast<RankedTensorType>(b);
    return x && y && x.getRank() >= 1 && x.getRank() == y.getRank() &&
           x.getDimSize(0) == 1 && y.getDimSize(0) == 2 &&
           x.getShape().drop_front() == y.getShape().drop_front();
  };
  for (size_t i = 0; i < ops[0].size(); ++i) {
    Operation *a = ops[0][i], *b = ops[1][i];
    if (a->getName() != b->getName() ||
        a->getNumResults() != b->getNumResults()) {
      error = "the graph differs at batches 1 and 2 at " + where(a);
      return false;
    }
    Value batchedOperand;
    for (Value v : a->getOperands())
      if (batched.contains(v))
        batchedOperand = v;
    // A constant shaped by the batch (ConstantOfShape of an input's shape,
    // folded): batched where its rows do not depend on the sample.
    for (auto [va, vb] : llvm::zip(a->getOperands(), b->getOperands())) {
      Attribute value;
      if (va.getType() == vb.getType() || !matchPattern(va, m_Constant()) ||
          !matchPattern(vb, m_Constant(&value)))
        continue;
      if (!followsBatch(va.getType(), vb.getType()) || !rowsEqual(value)) {
        error = where(a) + " reads a constant whose shape depends on the " +
                "batch size (" + typeString(va.getType()) + " at batch 1, " +
                typeString(vb.getType()) + " at batch 2) but not per sample";
        return false;
      }
      batchedOperand = va;
    }
    // Values a region uses from outside count as its op's operands.
    if (a->getNumRegions())
      a->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (batched.contains(v))
            batchedOperand = v;
      });
    // A Gather whose indices alone are batched (an embedding lookup) reads
    // per sample; where the batch ends up, the result's type says.
    bool lookup = isa<kiln::GatherOp>(a) && !batched.contains(a->getOperand(0));
    if (batchedOperand && !lookup) {
      int64_t rank = cast<RankedTensorType>(batchedOperand.getType()).getRank();
      std::string why = mixesSamples(a, rank);
      if (!why.empty()) {
        error = where(a) + " mixes the samples of a batch (" + why +
                "): a batch range needs samples that are computed "
                "independently";
        return false;
      }
    }
    for (auto [ra, rb] : llvm::zip(a->getResults(), b->getResults())) {
      if (batchedOperand) {
        if (!followsBatch(ra.getType(), rb.getType())) {
          error = where(a) + " mixes the samples of a batch (its result is " +
                  "not batched along dim 0: " + typeString(ra.getType()) +
                  " at batch 1, " + typeString(rb.getType()) + " at batch 2)";
          return false;
        }
        batched.insert(ra);
        continue;
      }
      if (ra.getType() == rb.getType())
        continue;
      // A broadcast to the batch of a value that is not per sample: its
      // rows are copies (Expand from dim 0 of 1, ConstantOfShape).
      auto input = dyn_cast<RankedTensorType>(
          a->getNumOperands() ? a->getOperand(0).getType() : Type());
      if (followsBatch(ra.getType(), rb.getType()) &&
          ((isa<kiln::ExpandOp>(a) && input &&
            input == b->getOperand(0).getType() && input.getRank() &&
            input.getDimSize(0) == 1) ||
           isa<kiln::ConstantOfShapeOp>(a))) {
        batched.insert(ra);
        continue;
      }
      error = where(a) + " computes a value whose shape depends on the " +
              "batch size (" + typeString(ra.getType()) + " at batch 1, " +
              typeString(rb.getType()) + " at batch 2) but not per sample";
      return false;
    }
  }
  batchedOutputs.clear();
  Operation *ret = fns[0].getBody().front().getTerminator();
  for (Value v : ret->getOperands())
    batchedOutputs.push_back(batched.contains(v));
  return true;
}

namespace {

/// Whether two LLVM globals hold the same constant: the weights each
/// chunk's module carries, which the merged module keeps once.
bool sameConstant(LLVM::GlobalOp a, LLVM::GlobalOp b) {
  if (!a.getConstant() || !b.getConstant() ||
      a.getGlobalType() != b.getGlobalType() ||
      a.getLinkage() != b.getLinkage() || a.getAlignment() != b.getAlignment())
    return false;
  Attribute x = a.getValueOrNull(), y = b.getValueOrNull();
  if (!x || !y)
    return false;
  if (x == y)
    return true;
  // Resource blobs parsed from two modules are two resources: compare bytes.
  auto rx = dyn_cast<DenseResourceElementsAttr>(x);
  auto ry = dyn_cast<DenseResourceElementsAttr>(y);
  if (!rx || !ry || rx.getType() != ry.getType())
    return false;
  AsmResourceBlob *bx = rx.getRawHandle().getBlob();
  AsmResourceBlob *by = ry.getRawHandle().getBlob();
  return bx && by && bx->getData().size() == by->getData().size() &&
         std::memcmp(bx->getData().data(), by->getData().data(),
                     bx->getData().size()) == 0;
}

/// Moves `variant`'s top-level ops into `base`: its graph function `main`
/// becomes `main<suffix>`, a symbol that `base` defines already is
/// renamed alike unless it is the same constant or function declaration,
/// which is dropped (its uses then name `base`'s).
LogicalResult mergeInto(ModuleOp base, ModuleOp variant,
                        const std::string &suffix, std::string &error) {
  SymbolTable baseTable(base), variantTable(variant);
  for (Operation &op : llvm::make_early_inc_range(*variant.getBody())) {
    auto sym = dyn_cast<SymbolOpInterface>(&op);
    if (!sym) {
      op.erase();
      continue;
    }
    std::string name = sym.getName().str();
    Operation *existing = baseTable.lookup(name);
    if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(&op);
        fn && fn.isExternal() && existing) {
      op.erase();
      continue;
    }
    if (auto g = dyn_cast<LLVM::GlobalOp>(&op))
      if (auto e = dyn_cast_or_null<LLVM::GlobalOp>(existing);
          e && sameConstant(e, g)) {
        // The variant's copy of the weights, released: nothing reads it.
        auto r =
            dyn_cast_or_null<DenseResourceElementsAttr>(g.getValueOrNull());
        auto kept =
            dyn_cast_or_null<DenseResourceElementsAttr>(e.getValueOrNull());
        op.erase();
        if (r && kept &&
            r.getRawHandle().getKey() != kept.getRawHandle().getKey())
          DenseResourceElementsHandle::getManagerInterface(base.getContext())
              .update(r.getRawHandle().getKey(), AsmResourceBlob());
        continue;
      }
    if (existing || name == "main")
      if (failed(variantTable.rename(&op, name + suffix))) {
        error = "cannot rename '" + name + "'";
        return failure();
      }
  }
  for (Operation &op : llvm::make_early_inc_range(*variant.getBody()))
    op.moveBefore(base.getBody(), base.getBody()->end());
  return success();
}

} // namespace

bool mergeRangeModules(MLIRContext &context, unsigned optLevel,
                       const kiln::CpuTarget &cpu,
                       const std::vector<Variant> &variants,
                       const RangeInfo &range, std::string &out,
                       std::string &report, std::string &error) {
  std::vector<kmod::Module> parts(variants.size());
  OwningOpRef<ModuleOp> base;
  std::vector<CpuEntry> entries;
  auto describe = [](const Variant &v) {
    return (v.batch ? "batch " + std::to_string(v.batch) : std::string()) +
           (v.batch && v.length ? ", " : "") +
           (v.length ? "length " + std::to_string(v.length) : std::string());
  };
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string where = "the module for " + describe(variants[i]);
    auto file = llvm::MemoryBuffer::getFile(variants[i].path,
                                            /*IsText=*/false);
    if (!file) {
      error = "cannot read " + where;
      return false;
    }
    if (!kiln::parseModule((*file)->getBufferStart(), (*file)->getBufferSize(),
                           parts[i], error)) {
      error = where + ": " + error;
      return false;
    }
    file->reset();
    const kmod::CodeObject *code = nullptr;
    for (const auto &c : parts[i].code())
      if (c.format() == "mlir-bytecode")
        code = &c;
    if (!code) {
      error = where + " has no code";
      return false;
    }
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(code->data(), where,
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
    if (!module) {
      error = where + ": its code does not parse";
      return false;
    }
    // Only the signature and the plan are needed from here on.
    for (auto &c : *parts[i].mutable_code())
      c.clear_data();
    auto mainFn = module->lookupSymbol<LLVM::LLVMFuncOp>("main");
    if (!mainFn) {
      error = where + " has no function main";
      return false;
    }
    unsigned numArgs = mainFn.getNumArguments();
    std::string suffix =
        (variants[i].batch ? "_b" + std::to_string(variants[i].batch)
                           : std::string()) +
        (variants[i].length ? "_l" + std::to_string(variants[i].length)
                            : std::string());
    std::string function = i == 0 ? "main" : "main" + suffix;
    entries.push_back({function, "kiln_entry" + suffix, numArgs});
    if (i == 0) {
      base = std::move(module);
      continue;
    }
    if (failed(mergeInto(*base, *module, suffix, error)))
      return false;
  }

  SmallString<256> soPath;
  if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "so", soPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return false;
  }
  llvm::scope_exit removeSo([&] { llvm::sys::fs::remove(soPath); });
  if (failed(kiln::emitCpuSharedObject(*base, entries, optLevel, cpu, soPath,
                                       error)))
    return false;
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false);
  if (!so) {
    error = "cannot read the shared object back";
    return false;
  }

  kmod::Module merged = parts[0];
  merged.clear_code();
  merged.clear_digests();
  auto *code = merged.add_code();
  code->set_target("cpu-x86_64");
  code->set_format("elf-shared-object");
  code->set_entry(entries[0].entry);
  code->set_cpu(cpu.name);
  for (const std::string &f : cpu.checkedFeatures(kiln::usesAmxTiles(*base)))
    code->add_cpu_features(f);
  code->set_data((*so)->getBufferStart(), (*so)->getBufferSize());
  int64_t arena = 0;
  llvm::raw_string_ostream os(report);
  if (range.batchMax) {
    os << "  batch range " << range.batchMin << ".." << range.batchMax
       << " (opt " << range.chunks[0] << "): a batch runs as chunks of";
    for (size_t i = 0; i < range.chunks.size(); ++i)
      os << (i ? ", " : " ") << range.chunks[i];
    os << "\n";
  }
  if (range.lengthMax) {
    os << "  length range " << range.lengthMin << ".." << range.lengthMax
       << " (opt " << range.lengthOpt
       << "): a length runs padded to the next of";
    for (size_t i = 0; i < range.buckets.size(); ++i)
      os << (i ? ", " : " ") << range.buckets[i];
    os << (range.masked ? "; its Softmaxes over positions masked"
                        : "; no Softmax over positions")
       << "\n";
  }
  os << "  arena per variant:";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].inputs_size() != merged.inputs_size() ||
        parts[i].outputs_size() != merged.outputs_size()) {
      error = "the variants of the range have different signatures";
      return false;
    }
    arena = std::max(arena, parts[i].memory_plan().arena_bytes());
    os << (i ? ", " : " ") << parts[i].memory_plan().arena_bytes() << " bytes ("
       << describe(variants[i]) << ")";
  }
  os << "\n  code: " << (*so)->getBufferSize()
     << " bytes of x86-64 shared object for " << cpu.name
     << ", one entry per variant, the weights once\n";
  // The plan of the variant with the largest arena: a session's arena
  // holds every variant's.
  for (const kmod::Module &p : parts)
    if (p.memory_plan().arena_bytes() == arena) {
      *merged.mutable_memory_plan() = p.memory_plan();
      break;
    }
  if (range.masked) {
    if (merged.inputs_size() == 0 ||
        merged.inputs(merged.inputs_size() - 1).name() != "kiln.length_mask") {
      error = "the variants do not take the length mask last";
      return false;
    }
    merged.mutable_inputs()->RemoveLast();
  }
  auto mark = [&](kmod::TensorSignature &sig, bool isBatched,
                  ArrayRef<int64_t> lengthDims, const std::string &what) {
    if (sig.max_extent()) {
      error = what + " '" + sig.name() +
              "' has a data-dependent extent, which a range does not "
              "take yet";
      return false;
    }
    if (isBatched) {
      if (sig.shape_size() < 1) {
        error = what + " '" + sig.name() + "' has no batch dim";
        return false;
      }
      sig.set_shape(0, range.batchMax);
      sig.set_batched(true);
    }
    for (int64_t d : lengthDims) {
      if (d < 0 || d >= sig.shape_size() || (isBatched && d == 0)) {
        error = what + " '" + sig.name() + "' has no dim " + std::to_string(d) +
                " for the length";
        return false;
      }
      sig.set_shape(d, range.lengthMax);
      sig.add_length_dims(d);
    }
    return true;
  };
  for (auto &sig : *merged.mutable_inputs()) {
    std::vector<int64_t> dims;
    for (const auto &[name, d] : range.lengthInputs)
      if (name == sig.name())
        dims.push_back(d);
    if (!mark(sig, llvm::is_contained(range.batchedInputs, sig.name()), dims,
              "input"))
      return false;
  }
  for (auto [i, sig] : llvm::enumerate(*merged.mutable_outputs()))
    if (!mark(sig, i < range.batchedOutputs.size() && range.batchedOutputs[i],
              i < range.outputLengthDims.size()
                  ? ArrayRef<int64_t>(range.outputLengthDims[i])
                  : ArrayRef<int64_t>(),
              "output"))
      return false;
  size_t nb = range.lengthMax ? range.buckets.size() : 1;
  if (range.batchMax) {
    auto *batch = merged.mutable_batch();
    batch->set_min(range.batchMin);
    batch->set_max(range.batchMax);
    batch->set_opt(range.chunks[0]);
    for (size_t i = 0; i < range.chunks.size(); ++i) {
      batch->add_chunks(range.chunks[i]);
      // With a length range too: the entries of the longest bucket.
      batch->add_entries(entries[i * nb + nb - 1].entry);
    }
  }
  if (range.lengthMax) {
    auto *length = merged.mutable_length();
    length->set_min(range.lengthMin);
    length->set_max(range.lengthMax);
    length->set_opt(range.lengthOpt);
    for (int64_t b : range.buckets)
      length->add_buckets(b);
    for (const CpuEntry &e : entries)
      length->add_entries(e.entry);
    length->set_masked(range.masked);
  }
  out = kiln::serializeModule(merged);
  return true;
}

} // namespace kiln::compile
