//===- KilnBase.td - kiln dialect, types and op base classes -*- tablegen -*-===//
//
// The `kiln` dialect: a tensor-level graph with ONNX semantics.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNBASE_TD
#define KILN_DIALECT_KILN_IR_KILNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "kiln/Dialect/Kiln/IR/KilnInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level graph with ONNX operator semantics";
  let description = [{
    The `kiln` dialect holds an imported ONNX graph. Every ONNX operator of
    the default domain has one op, named after the operator in snake case
    (`Conv` is `kiln.conv`, `GlobalAveragePool` is `kiln.global_average_pool`).
    Each op carries the semantics of the newest opset that defines the
    operator; the importer upgrades nodes written against older opsets.
    Operands and results are ranked or unranked builtin tensors, or the
    `!kiln.seq` and `!kiln.opt` containers; ONNX unsigned integers are
    unsigned MLIR integers (`ui8`), signed ones signless (`i8`), `bool` is
    `i1` and `string` is `!kiln.string`.

    Absent optional operands and results are written as `none`, as ONNX
    writes an empty name:

    ```mlir
    %y = kiln.clip(%x, none, %hi) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Kiln_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kiln_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kiln_StringType : Kiln_Type<"String", "string"> {
  let summary = "ONNX string element type";
  let description = [{
    The element type of ONNX `string` tensors: `tensor<2x!kiln.string>`.
  }];
}

def Kiln_SeqType : Kiln_Type<"Seq", "seq"> {
  let summary = "ONNX sequence of tensors";
  let description = [{
    An ONNX sequence whose elements all have (a refinement of) the given
    tensor type: `!kiln.seq<tensor<?x3xf32>>`.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Kiln_OptType : Kiln_Type<"Opt", "opt"> {
  let summary = "ONNX optional value";
  let description = [{
    An ONNX optional: holds a value of the given type or nothing,
    `!kiln.opt<tensor<3xf32>>` or `!kiln.opt<!kiln.seq<tensor<f32>>>`.
  }];
  let parameters = (ins "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

// An op generated from an ONNX schema. `onnxName` is the operator,
// `sinceVersion` the opset of the schema the op follows and
// `compatibleSince` the oldest opset whose nodes mean the same thing.
// `inputKinds` and `outputKinds` spell each ONNX input and output as `s`
// (single), `o` (optional) or `v` (variadic), in order. `onnxDomain` is
// the operator's domain, empty for the default one; opsets are of it.
class Kiln_OnnxOp<string mnemonic, string onnxName, int sinceVersion,
                  int compatibleSince, string inputKinds, string outputKinds,
                  list<Trait> traits = [], string onnxDomain = "">
    : Kiln_Op<mnemonic, traits> {
  defvar qualifiedName = !if(!empty(onnxDomain), "", onnxDomain # ".") #
    onnxName;
  let summary = "ONNX `" # qualifiedName # "` (opset " # sinceVersion # ")";
  let description = "Follows the semantics of the ONNX operator `" #
    qualifiedName # "` as of opset " # sinceVersion # "; nodes of opset " # compatibleSince #
    " and later import unchanged, older nodes through an upgrader. Operands, "
    "attributes and results keep the ONNX names. Written in the positional "
    "kiln form: `%r = kiln." # mnemonic # "(%a, none, %c) {attrs} : "
    "(operand types) -> result types`.";
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  string onnxOperator = onnxName;
  // A shared result-type rule (`Same`, `Broadcast`, `Compare`) defines
  // inferResultTypes; empty when the op has its own or none.
  string inferRule = "";
  let extraClassDeclaration = [{
    static constexpr int getOnnxSinceVersion() { return }] # sinceVersion # [{; }
    static constexpr ::llvm::StringLiteral getOnnxName() {
      return ::llvm::StringLiteral("}] # onnxName # [{");
    }
  }];
  let extraClassDefinition = [{
    ::mlir::ParseResult $cppClass::parse(::mlir::OpAsmParser &parser,
                                         ::mlir::OperationState &result) {
      return ::kiln::parseOnnxOp(parser, result, "}] # inputKinds # [{",
                                 "}] # outputKinds # [{");
    }
    void $cppClass::print(::mlir::OpAsmPrinter &printer) {
      ::kiln::printOnnxOp(getOperation(), printer, "}] # inputKinds # [{",
                         "}] # outputKinds # [{");
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::kiln::verifyOnnxOp(getOperation());
    }
  }] # !if(!empty(inferRule), "", [{
    ::llvm::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::infer}] # inferRule # [{ResultTypes(getOperation(), types);
    }
  }]);
}

#endif // KILN_DIALECT_KILN_IR_KILNBASE_TD
