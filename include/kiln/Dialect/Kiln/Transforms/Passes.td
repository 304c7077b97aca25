//===- Passes.td - kiln graph passes ------------------------*- tablegen -*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnInferShapes : Pass<"kiln-infer-shapes"> {
  let summary = "Refines the result types of kiln ops from their operands";
  let description = [{
    Walks the graph in order and replaces each kiln op's result types by the
    more refined of the present type and the type its shape function infers,
    so that static input shapes (given with `--input-shape` at import, or
    written into the function signature) flow to every value. The function
    signature's result types are updated to match. An op whose inferred type
    contradicts its present one is an error.

    ```mlir
    // before: %0 = kiln.relu(%x) : (tensor<2x3xf32>) -> tensor<?x?xf32>
    // after:  %0 = kiln.relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```

    Ops whose operands are constants are folded as they are inferred. It
    enters If, Loop and Scan bodies; an If on a constant becomes the branch
    it takes. Sequences whose elements are known (built in the function's
    body or in If branches there from constructs, inserts and erases at
    constant positions, splits of static tensors, or sequence inputs given
    by their elements) are resolved: SequenceAt, SequenceLength and
    ConcatFromSequence of one become its element, a constant, a Concat;
    SequenceMap its body once per element; an If whose branches build
    sequences of one length yields their elements; a Loop that reads or
    carries sequences with a trip count known at compile time (and no scan
    outputs) is unrolled. `@main`'s sequence results of known elements
    become those elements, named `NAME[i]` and recorded in its
    `kiln.composites` attribute for the module's signature.

    A Loop in `@main` whose trip count or condition is known only at run
    time and that appends to sequences `@main` returns is unrolled
    `max-sequence-loop-trips` times (a module attribute
    `kiln.max_sequence_loop_trips` overrides the option), each iteration
    predicated on the ones before running and its condition: the sequences
    get a run-time length, one more than the bound when the loop would run
    longer (the runtime then refuses the run).
  }];
  let options = [
    Option<"maxSequenceLoopTrips", "max-sequence-loop-trips", "int64_t",
           "16",
           "The most iterations a Loop of run-time trip count that appends "
           "to sequences is unrolled for">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFoldConstants : Pass<"kiln-fold-constants"> {
  let summary = "Evaluates the ops whose operands are all constants, weights "
                "included, into constants";
  let description = [{
    Replaces each op whose operands are all constants (inline or dense
    resources) by the constant it computes, in program order so that chains
    fold whole: weights an exporter computes in the graph (ConstantOfShape,
    Transpose, Reshape, Slice with any steps, Concat, Expand, Tile, Gather,
    Cast, DequantizeLinear of integer initializers, float32 Add, Sub, Mul,
    Div, Neg and Sqrt) become the same constants, packed and laid out by the
    code generator, as weights the file stores. Results over
    `max-result-bytes` stay computed at run time, and so do those of ops
    that make more elements than they read (ConstantOfShape, Expand, Tile,
    a broadcasting Add) past 65536 elements, unless every user is a product
    or a convolution (perhaps through a Transpose, Reshape or Cast): a
    broadcast costs less read at run time than stored. A splat constant of
    more than 64 elements whose users are all products and convolutions (a
    ConstantOfShape weight, made a splat by its folder) is written out
    element by element, so that the code generator packs it as it packs
    stored weights. `kiln-infer-shapes`
    evaluates the same ops as it infers, except DequantizeLinear: this pass
    runs after `kiln-fold-qdq`, so that a QDQ model's quantized groups are
    recognized first, and folds what dequantization they leave.

    ```mlir
    // before: %w = kiln.dequantize_linear(%q, %s, %z) : (tensor<64x3x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<64x3x3x3xf32>
    // after:  %w = kiln.constant dense_resource<kiln_folded> : tensor<64x3x3x3xf32>
    ```
  }];
  let options = [
    Option<"maxResultBytes", "max-result-bytes", "int64_t", "1073741824",
           "The largest result, in bytes, that is evaluated at compile time">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFuseLayers : Pass<"kiln-fuse-layers"> {
  let summary = "Replaces the decomposed forms exporters write for LayerNorm, "
                "RMSNorm, GELU, SiLU and attention by one op each";
  let description = [{
    Recognizes the chains of primitive ops that PyTorch's exporters write
    for layers ONNX (or an older opset) has no single op for, and replaces
    each by the ONNX op it computes:

    - LayerNorm: `ReduceMean(x)`, `d = Sub(x, mean)`, `ReduceMean(Pow(d, 2))`
      (or `Mul(d, d)`), `Add(eps)`, `Sqrt`, `Div(d, .)` (or `Mul` by its
      `Reciprocal` or `Div(1, .)`), then optionally `Mul` by a scale and
      `Add` of a bias: `LayerNormalization(x, scale, bias)`.
    - RMSNorm: `ReduceMean(Pow(x, 2))`, `Add(eps)`, `Sqrt`, `Reciprocal`
      (or `Div(1, .)`), `Mul(x, .)` (or `Div(x, Sqrt)`), then optionally
      `Mul` by a scale: `RMSNormalization(x, scale)`.
    - GELU, erf form: `0.5 * x * (1 + Erf(x / sqrt(2)))` (or `x *
      0.7071`), and tanh form: `0.5 * x * (1 + Tanh(sqrt(2/pi) * (x +
      0.044715 * x^3)))`, `x^3` as `Pow(x, 3)` or two `Mul`s, the `0.5 *
      x *` in any association: `Gelu(x)` with `approximate` none or tanh.
    - SiLU: `Mul(x, Sigmoid(x))`: `Swish(x)` with `alpha` 1.
    - Attention: `MatMul(Softmax(MatMul(Q, K^T) * scale + mask), V)`, the
      scale after the product (`Div` by sqrt(d), `Mul` by 1/sqrt(d)) or on
      both operands (SDPA's `Mul` of Q and of K^T by d^-1/4), K^T a
      `Transpose` (composed into the K the op reads) or any [B, H, D, S]
      value, an optional additive mask with one value per key, the
      probabilities read directly, through a no-op `Cast`, or through
      SDPA's guard `Where(IsNaN(P), 0, P)`: `Attention(Q, K, V, mask)`
      with that `scale`. The guard goes when the mask is provably finite
      (a constant, or a `Where` between finite constants); otherwise it
      stays as the unit attribute `kiln.zero_nan_rows` (a row the mask
      hides whole gives zeros), which the lowering honors.

    A chain fuses only when no value inside it has a user outside it, its
    reductions are over trailing axes with the dims kept (axes a constant),
    its batch and head dims match exactly (no MatMul broadcasting), its
    mask does not broadcast over the keys,
    its constants have the expected values (within 1e-4 relative: sqrt(2)
    and sqrt(2/pi) are written rounded), its epsilon is a constant, and its
    scale and bias broadcast over the normalized dims only (1 over the
    others); the types must be static. The fused op is named after the
    chain's first node (`LayerNormalization(<node>)`), so kernels and
    profile regions say what they come from.

    ```mlir
    %m = kiln.reduce_mean(%x, %axes) : ...
    %d = kiln.sub(%x, %m) : ...
    %p = kiln.pow(%d, %two) : ...
    %v = kiln.reduce_mean(%p, %axes) : ...
    %e = kiln.add(%v, %eps) : ...
    %s = kiln.sqrt(%e) : ...
    %n = kiln.div(%d, %s) : ...
    %y = kiln.mul(%n, %gamma) : ...
    %z = kiln.add(%y, %beta) : ...
    // becomes
    %z = kiln.layer_normalization(%x, %gamma, %beta) {axis = 2, epsilon = 1.0e-5} : ...
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFoldBatchNorm : Pass<"kiln-fold-batch-norm"> {
  let summary = "Folds an inference BatchNormalization into the Conv before it";
  let description = [{
    `BatchNormalization(Conv(x, W, b), gamma, beta, mean, var)` with constant
    weights and statistics, where the Conv has no other user, becomes
    `Conv(x, W', b')` with `W'[f] = W[f] * s[f]` and
    `b'[f] = (b[f] - mean[f]) * s[f] + beta[f]`, `s = gamma / sqrt(var + eps)`:
    one kernel instead of two, and no per-element normalization at run time.
    Float32 weights only; anything else is left as it is.

    ```mlir
    %c = kiln.conv(%x, %w) : ...
    %y = kiln.batch_normalization(%c, %g, %b, %m, %v) : ...
    // becomes
    %y = kiln.conv(%x, %w2, %b2) : ...
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnExposeCalibrationTensors
    : Pass<"kiln-expose-calibration-tensors", "::mlir::ModuleOp"> {
  let summary = "Makes the tensors that INT8 quantization needs ranges for "
                "results of @main";
  let description = [{
    The first half of post-training quantization (`kiln-compile
    --precision=int8`). Each quantizable op -- a 2-D convolution (group 1)
    or MatMul with constant float32 weights, or a Gemm (alpha = beta = 1,
    A not transposed) with a constant B, rewritten first as MatMul(A, B as
    [K, N]) + C -- has its activation input and its output (the output of
    a Relu that is its only user, which quantization absorbs) appended to
    @main's results, each once, named by a key: a graph input's name, else
    its ONNX node's name, `#` and the result number (`~N` after a repeated
    one). Running this model over calibration samples observes their
    ranges; `kiln-quantize` reads them by the same keys.
  }];
}

def KilnQuantize : Pass<"kiln-quantize", "::mlir::ModuleOp"> {
  let summary = "Writes a float model as a QDQ model from calibrated "
                "ranges";
  let description = [{
    The second half of post-training quantization. `ranges` names a text
    file with one `key<TAB>min<TAB>max` line per tensor (`#` starts a
    comment), keyed as `kiln-expose-calibration-tensors` names them (what
    `kiln-compile --calibration-cache` writes). Each quantizable op whose
    input and output both have a range gets:

    - its activation input quantized per tensor to int8 and dequantized
      (`QuantizeLinear`/`DequantizeLinear`, once per tensor): a range from
      0 uses zero point -128 and scale max / 255, a symmetric one zero
      point 0 and scale max / 127, others the affine map of [min, max]
      onto [-128, 127];
    - its constant weights as int8, symmetric, one scale per output
      channel (a Conv's axis 0, a MatMul's columns: max |w| / 127),
      dequantized;
    - a Conv's bias as int32 at scale x_scale * w_scale, dequantized;
    - its output quantized and dequantized from its range; a Relu that was
      its only user is removed, its range (from 0) being the output's,
      whose saturation at the zero point is the Relu.

    `kiln-fold-qdq` then turns each group into QLinearConv or
    QLinearMatMul. Ops without ranges stay float.

    With `type=fp8` the quantized type is float8 e4m3 (E4M3FN, zero points
    of that type): activations and weights symmetric, each scale its
    tensor's (a weight's output channel's) largest magnitude over 448,
    e4m3's largest finite value (the quantization saturates there);
    weights rounded to nearest even at compile time; a Conv's bias stays
    float, and a Relu after the op stays (the output quantized after it).
    The model then computes in float between the Q/DQ pairs on values
    that float8 represents, which is the accuracy of fp8 products
    accumulated in f32.

    The module gets a
    `kiln.quantized_layers` attribute: per quantized op, its output's key,
    its scales and zero points, the range of its weight scales (what
    `kiln-compile --report` prints); with `expose-outputs`, each quantized
    op's dequantized output is appended to @main's results under its key
    (to measure each layer's error against the float model's).
  }];
  let options = [
    Option<"ranges", "ranges", "std::string", "\"\"",
           "The ranges file (name<TAB>min<TAB>max per line)">,
    Option<"exposeOutputs", "expose-outputs", "bool", "false",
           "Append each quantized op's dequantized output to @main's "
           "results">,
    Option<"type", "type", "std::string", "\"int8\"",
           "The quantized type: int8, or fp8 (float8 e4m3)">,
  ];
}

def KilnFoldQdq : Pass<"kiln-fold-qdq"> {
  let summary = "Turns the float Conv, MatMul and Gemm of a quantized (QDQ) "
                "model into QLinearConv and QLinearMatMul";
  let description = [{
    A QDQ model (onnxruntime's `quantize_static`, a quantization-aware
    training export) writes each quantized layer as float arithmetic
    between `DequantizeLinear` ops on its 8-bit operands and a
    `QuantizeLinear` on its result. Where that group is

    - `QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w),
      DequantizeLinear(b)?))`: becomes `QLinearConv(x, w, b)` with the
      same scales, zero points and attributes;
    - `QuantizeLinear(MatMul(DequantizeLinear(a), DequantizeLinear(w)))`:
      becomes `QLinearMatMul(a, w)`;
    - `QuantizeLinear(Gemm(DequantizeLinear(a), DequantizeLinear(w),
      DequantizeLinear(b)?))` (alpha = beta = 1, `a` [M, K] not
      transposed): becomes the 1x1 `QLinearConv` it is, `a` reshaped to
      [M, K, 1, 1], `w`'s bytes as [N, K, 1, 1], the result reshaped back
      to [M, N] (QLinearMatMul has no bias; the int32 bias is added
      before the requantization, as ONNX Runtime's QGemm does),

    the integer op accumulates the 8-bit products in int32 and requantizes
    once, which is what the QDQ graph specifies up to float rounding, and
    what its lowering runs as integer arithmetic. Conditions: 8-bit
    operands with zero points, the weights a constant (a product of two
    activations, as attention's, stays in float: the integer kernels pack
    constant weights at compile time), the activation per tensor, the weights per
    tensor or per output channel (axis 0 of a Conv's weight, axis 1 of a
    2-D MatMul operand), the result per tensor and saturating with an
    8-bit zero point, the Conv or MatMul used only by the QuantizeLinear,
    and a Conv bias, if any, the int32 bias quantizers write (zero point 0,
    scale x_scale * w_scale within 1e-6 relative, or all zeros at any
    scale). Anything else (a Relu
    between the Conv and its QuantizeLinear, a Gemm, blocked quantization)
    stays in float, which is correct, not faster; a `DequantizeLinear` of
    constants it reads (per tensor or per axis, float32 result) is then
    evaluated at compile time into a float32 constant, so that its weights
    are not dequantized at every run.

    ```mlir
    %x = kiln.dequantize_linear(%xq, %xs, %xz) : ...
    %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0} : ...
    %c = kiln.conv(%x, %w) : ...
    %y = kiln.quantize_linear(%c, %ys, %yz) : ...
    // becomes
    %y = kiln.qlinear_conv(%xq, %xs, %xz, %wq, %ws, %wz, %ys, %yz) : ...
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnSparsify : Pass<"kiln-sparsify", "::mlir::ModuleOp"> {
  let summary = "Marks the contractions whose constant weights are 2:4 "
                "sparse along K (mode=force: prunes them to 2:4 first)";
  let description = [{
    Pruning-aware 2:4 structured sparsity (`kiln-compile --sparsity=on`):
    a `MatMul` or `Gemm` whose weight (operand B) is a constant f32, f16 or
    bf16 matrix, read as [K, N] (`transB`, or a `Transpose` of the constant,
    gives [N, K]), with at most two non-zeros in every group of four
    consecutive k of each output column n (what PyTorch's 2:4 pruning and
    NVIDIA's ASP leave in a Linear layer), gets `kiln.sparsity = "2:4"`.
    The lowering carries it to the contraction, where the target's code
    generation decides whether a sparse kernel pays (the CPU:
    `kiln-cpu-sparse-gemm`; the GPU: `kiln-gpu-sparse-weights`). The
    weights stay dense in the graph: their
    compressed layout is the kernel's.

    With `mode=force` (`--sparsity=force`) every eligible weight that is not
    2:4 is pruned first: in each group of four along K the two largest
    magnitudes stay (the first on ties) and the others become zero; the
    op reads a new constant (a weight shared with other ops is left to
    them).

    The int8 products of a QDQ model or of `--precision=int8`
    (`QLinearMatMul`, `MatMulInteger`, and the 1x1 `QLinearConv` of 1x1
    planes that `kiln-fold-qdq` writes for a QDQ `Gemm`) are checked the
    same way on their stored bytes where the weight is a constant int8
    tensor of zero point 0 (its zeros are then the weight's zeros).

    A 2-D `Conv` (group 1) whose weight is a constant f32, f16 or bf16
    `[F, C, KH, KW]` (or a `QLinearConv` or `ConvInteger` whose weight is
    int8 of zero point 0) is 2:4 when every group of four consecutive input
    channels c at each output channel f and window tap (kh, kw) has at
    most two non-zeros (how NVIDIA's ASP prunes convolutions: the groups
    are consecutive k of the channels-last GEMM, K = (kh, kw, c)), and
    `force` prunes along c the same way; with `convolutions=false` (the
    CPU target, whose convolutions run dense) they stay unmarked.

    Not eligible, with the reason recorded: K (C for a convolution) not a
    multiple of 4, a weight that is not a constant float (or int8) matrix
    (4-D for a convolution), a non-zero weight zero point, grouped and
    transposed convolutions (no sparse kernels for them yet). The module gets
    `kiln.sparsity_layers`: per contraction its node name, op, whether it
    is marked, the reason when not, K, N, the weight's bytes, and with
    `force` how many values were zeroed and the pruned share of the
    weight's L2 norm.

    ```mlir
    %w = kiln.constant dense<[[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [3.0, 4.0]]> : tensor<4x2xf32>
    %y = kiln.matmul(%x, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
    // becomes
    %y = kiln.matmul(%x, %w) {kiln.sparsity = "2:4"} : ...
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"on\"",
           "on: mark the weights that are 2:4; force: prune the others to "
           "2:4 by magnitude first">,
    Option<"convolutions", "convolutions", "bool", "true",
           "Take 2-D convolutions too (false: they stay dense, as on the "
           "CPU target)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnMixedPrecision : Pass<"kiln-mixed-precision"> {
  let summary = "Runs the float32 graph's ops in float16 or bfloat16 where "
                "that is safe, keeping the sensitive ones in float32";
  let description = [{
    Mixed precision (`kiln-compile --precision=fp16|bf16`): every op of a
    fixed list whose float32 computation is safe in half precision
    (contractions, which accumulate in float32 whatever their element type:
    `Conv`, `MatMul`, `Gemm`, `Attention`; elementwise arithmetic and
    activations; max pooling; data movement) reads and writes `type`
    instead of float32:
    each float32 operand goes through a `Cast` to `type` (a constant is
    converted when compiled, rounded to nearest even) and each result is
    cast back to float32 for its users. Casts that meet (`type` to float32
    to `type`) cancel, so a chain of converted ops passes half-precision
    values between them and casts only where it meets a float32 op.

    Ops off the list stay in float32: normalizations (`LayerNormalization`,
    `RMSNormalization`, `BatchNormalization`, ...), `Softmax`, reductions,
    average pooling, `Exp`, `Log`, `Pow`, `Sqrt`, `Reciprocal` and anything
    not named, as
    their range or accumulated rounding is where half precision loses
    accuracy (float16's largest value is 65504), as are the graph's inputs
    and outputs (the module's signature does not change). `keep-ops` adds op
    names (`kiln.matmul`) and `keep-nodes` ONNX node names (the name an op's
    location carries; a fused op's is `LayerNormalization(<first node>)`)
    that stay float32; a `keep-nodes` name the graph does not have is an
    error.

    ```mlir
    %y = kiln.matmul(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %z = kiln.relu(%y) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    // becomes (type=f16)
    %h = kiln.cast(%x) {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
    %y = kiln.matmul(%h, %w16) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
    %r = kiln.relu(%y) : (tensor<4x16xf16>) -> tensor<4x16xf16>
    %z = kiln.cast(%r) {to = f32} : (tensor<4x16xf16>) -> tensor<4x16xf32>
    ```
  }];
  let options = [
    Option<"type", "type", "std::string", "\"f16\"",
           "The half-precision type: f16 or bf16">,
    ListOption<"keepOps", "keep-ops", "std::string",
               "Op names (kiln.softmax) that stay float32 besides the "
               "default ones">,
    ListOption<"keepNodes", "keep-nodes", "std::string",
               "ONNX node names whose ops stay float32">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
