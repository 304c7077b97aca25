//===- Passes.td - Kiln codegen passes ----------------------*- tablegen -*-===//

#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCopyToLinalg : Pass<"kiln-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turns memref.copy into linalg.copy so that it becomes loops";
  let description = [{
    Bufferization emits `memref.copy` between buffers; copies between
    strided views would otherwise lower to a call into MLIR's C runner
    library, which compiled modules do not link. As `linalg.copy` they
    become plain loops with the rest of the kernel. A copy whose source
    is the target seen through reshapes (`memref.expand_shape`,
    `memref.collapse_shape`), at the target's type, copies each element
    onto itself and is dropped: bufferization leaves such copies where a
    contraction in an image loop writes its slice of the loop's result in
    place through reshapes.

    ```mlir
    memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
    // becomes
    linalg.copy ins(%a : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def KilnFuseElementwise
    : Pass<"kiln-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuses elementwise producers into consumers that read each "
                "of their elements once";
  let description = [{
    Upstream elementwise fusion (`linalg-fuse-elementwise-ops`) with a
    control that keeps work from multiplying: a producer `linalg.generic`
    is fused into its consumer only if it has one use and the consumer
    reads it through a permutation of all its loops, so every produced
    element is computed once. Fusing the GELU before a matmul into the
    matmul (read through (m, k), recomputed for every n) is refused; fusing
    it into a bias add or a reduction that reads it once is done.

    ```mlir
    %g = linalg.generic {..., iterator_types = ["parallel", "parallel"]}
           ins(%x) ... { math.erf ... }          // one use: %mm
    %mm = linalg.generic {indexing_maps = [(m, k, n) -> (m, k), ...]}
           ins(%g, %w) ...                       // stays separate
    ```

    With `fold-transposes` (the GPU pipeline), every `linalg.transpose`
    is generalized first, and a single-use producer that only moves data
    (all loops parallel, one input, the body yields it) is fused into any
    consumer generic, reductions included: a Gemm with `transB` reads its
    weight through the permuted map instead of a transposed copy made on
    every run. (The CPU pipeline keeps the copies, which
    `kiln-pack-weights` folds into its packed weights.)

    A fusion is refused where the fused body would pass `max-fused-ops`
    operations. Each fusion copies both bodies into a new op, so fusing a
    chain of N elementwise ops into one costs N^2 / 2 copied operations
    (104 of the 118 s a 16,000-op chain took to compile); with the cap the
    chain becomes N / cap kernels and the pass is linear. A body of 128
    operations does 128 operations per element it reads and writes, so
    splitting there costs no measurable memory traffic.
  }];
  let options = [
    Option<"foldTransposes", "fold-transposes", "bool", "false",
           "Fuse transposes and other pure copies into any consumer">,
    Option<"maxFusedOps", "max-fused-ops", "int64_t", "128",
           "Refuse a fusion whose body would have more operations than "
           "this (keeps the pass linear in long elementwise chains)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def KilnFlattenGlobals : Pass<"kiln-flatten-globals", "::mlir::ModuleOp"> {
  let summary = "Gives constant memref globals a 1-D type";
  let description = [{
    Each `memref.global` of rank 2 or more (the weights, after
    bufferization) becomes a 1-D global over the same data, and each
    `memref.get_global` of it a `memref.get_global` of the 1-D global plus a
    `memref.expand_shape` back to the original type. LLVM then sees every
    weight as one flat constant array instead of nested arrays of arrays,
    which it builds, optimizes and frees element row by element row: on
    ResNet-50 that took most of a minute of the compile.

    ```mlir
    memref.global "private" constant @w : memref<64x3x3x3xf32> = dense<...>
    %0 = memref.get_global @w : memref<64x3x3x3xf32>
    // becomes
    memref.global "private" constant @w : memref<1728xf32> = dense<...>
    %1 = memref.get_global @w : memref<1728xf32>
    %0 = memref.expand_shape %1 [[0, 1, 2, 3]] output_shape [64, 3, 3, 3]
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def KilnFlattenEmptyTensors
    : Pass<"kiln-flatten-empty-tensors", "::mlir::func::FuncOp"> {
  let summary = "Gives zero-element arguments and results a rank-1 type";
  let description = [{
    A tensor with no elements (a zero dim anywhere) carries no data, but a
    zero dim after the first makes its buffer's strides dynamic, and the
    bare-pointer calling convention of compiled modules cannot pass it.
    This pass gives each zero-element argument and result of a function the
    type `tensor<0xT>`: uses of an argument see an empty tensor of the
    original type instead, and a zero-element result is returned as a new
    empty tensor. Only the function type changes; no data moves.

    ```mlir
    func.func @f(%a: tensor<3x0x5xf32>) -> tensor<3x0x5xf32>
    // becomes
    func.func @f(%a: tensor<0xf32>) -> tensor<0xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def KilnSplitEmptyTensors
    : Pass<"kiln-split-empty-tensors", "::mlir::func::FuncOp"> {
  let summary = "Gives each use of a tensor.empty an empty tensor of its own";
  let description = [{
    CSE merges every `tensor.empty` of one type into one, so a graph of N
    layers of one shape has one empty tensor that each layer's ops take as
    their destination. One-shot bufferization's in-place analysis then
    checks each of those ops against every other use of that one value:
    quadratic in the graph (a 48-layer transformer spent 27 of its 29 s of
    compile in `eliminate-empty-tensors` and `one-shot-bufferize`). This
    pass, run just before them, clones a `tensor.empty` with several uses
    next to itself once per further use. Nothing changes in what is
    computed; the analysis sees independent destinations, and the memory
    planner still packs their buffers by live range.

    ```mlir
    %e = tensor.empty() : tensor<16x64xf32>
    %a = linalg.fill ins(%x : f32) outs(%e : tensor<16x64xf32>) -> ...
    %b = linalg.fill ins(%y : f32) outs(%e : tensor<16x64xf32>) -> ...
    // becomes
    %e = tensor.empty() : tensor<16x64xf32>
    %e1 = tensor.empty() : tensor<16x64xf32>
    %a = linalg.fill ins(%x : f32) outs(%e : tensor<16x64xf32>) -> ...
    %b = linalg.fill ins(%y : f32) outs(%e1 : tensor<16x64xf32>) -> ...
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def KilnPlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Places every intermediate buffer of @main in one arena";
  let description = [{
    After bufferization, each statically shaped `memref.alloc` of the graph
    function `@main` gets an offset in one arena from its live range (from
    the allocation to the last use of the buffer or of any view of it);
    buffers live at the same time never overlap, and offsets are 64-byte
    aligned. The arena becomes a trailing `memref<Nxi8>` argument of
    `@main`, so the runtime owns it (one per session) and a run allocates
    nothing. Buffers that escape (returned, or stored) are left alone.

    An allocation in the body of sequential `scf.for` loops (the image
    loops of `kiln-cpu-image-loops`), static and not yielded, carried by a
    loop, stored or returned, first moves before the outermost loop: every
    iteration writes it before reading it, so one buffer serves them all,
    and it is planned like the others. Allocations inside `scf.forall`
    (per thread) stay where they are.

    First, a buffer that the function copies whole into an output argument
    that nothing else touches, with no use of it after the copy (what
    `buffer-results-to-out-params` leaves for a returned allocation; its
    own `hoist-static-allocs` acts only where memref's allocation interface
    is registered, and with it registered crashed on a module with
    data-dependent outputs), becomes that
    argument: the graph output is computed in the caller's buffer, the copy
    is gone and the buffer takes no arena space.

    The module records the plan in `kiln.memory_plan`: the arena size, the
    sum of all planned buffers (what allocating each separately costs) and
    the lower bound (the most bytes live at any one point).

    ```mlir
    %a = memref.alloc() : memref<4x8xf32>
    // becomes, with %arena the new last argument of @main
    %c0 = arith.constant 0 : index
    %a = memref.view %arena[%c0][] : memref<128xi8> to memref<4x8xf32>
    ```

    With `pad-sources-live`, a buffer copied into a subview of another (a
    padded copy: the interior of a convolution's padded input) lives as
    long as that other buffer, so that a consumer of the padded buffer
    may read the source in its place (`kiln-gpu-contractions` does).

    With `epilogue-inputs-live`, a buffer whose last reader is a linalg
    op stays live through the next op that writes memory when that op
    reads what the linalg op wrote (an elementwise op after a
    contraction: a bias, a residual add, an activation), so that the two
    may run as one kernel (`kiln-gpu-contractions`' `fuse-epilogue`)
    without the second writing over an input the first still reads.

    With `attention-inputs-live`, a buffer whose last reader is an op of
    an attention chain (`kiln::matchAttentionChain`: Q, K, V, a mask)
    stays live to the chain's last op, so that `kiln-gpu-flash-attention`
    may run the chain as one kernel.
  }];
  let options = [
    Option<"padSourcesLive", "pad-sources-live", "bool", "false",
           "Keep a buffer copied into a subview of another live as long as "
           "that other buffer">,
    Option<"epilogueInputsLive", "epilogue-inputs-live", "bool", "false",
           "Keep a linalg op's inputs live through the next op when that op "
           "reads the linalg op's output">,
    Option<"attentionInputsLive", "attention-inputs-live", "bool", "false",
           "Keep what an attention chain reads live to the chain's end "
           "(kiln-gpu-flash-attention runs the chain as one kernel)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCloneSharedInits
    : Pass<"kiln-clone-shared-inits", "::mlir::func::FuncOp"> {
  let summary = "Gives each op that writes into a shared fill or constant "
                "broadcast its own copy of that op";
  let description = [{
    CSE merges identical fills and broadcasts: MatMuls with the same output
    shape share one zero fill, convolutions with equal biases one bias
    broadcast. Each writes its result into that init, so bufferization
    would give all but one of them a copy of it (a scalar `memref.copy` of
    the whole output before the op runs). A `linalg` op into a
    `tensor.empty` (or a static reshape of one) that reads only constants
    (a fill, a broadcast) is instead cloned, with its `tensor.empty`, for
    every op that writes into its result (as a DPS init, possibly through
    reshapes, which are first cloned so that each has one user: CSE merges
    them as well: ResNet-50's equal (zero) biases left 33 whole-output
    copies, 2.9 ms of a 29 ms CPU profile); the first writer
    keeps the original when nothing else reads it. Each clone is placed
    right before the op that writes into it, so its buffer lives only as
    long as that op needs it. Clones carry a distinct `kiln.init_clone`
    attribute so that CSE does not merge them again.

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a = linalg.matmul ins(...) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %b = linalg.matmul ins(...) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes: %b writes into its own fill, computed just before it
    %e1 = tensor.empty() : tensor<4x8xf32>
    %z1 = linalg.fill {kiln.init_clone = 0 : i64} ins(%c0 : f32) outs(%e1 : ...)
    %b = linalg.matmul ins(...) outs(%z1 : tensor<4x8xf32>) -> tensor<4x8xf32>
    ```

    With `empties` (the GPU pipeline), an elementwise op that reads the
    result of a contraction with a `tensor.pad` input and writes into a
    `tensor.empty` other ops write too gets its own `tensor.empty`:
    bufferization then gives it its own buffer and the memory plan decides
    what shares bytes. Shared, bufferization could hand it the bytes of
    the padded input's source, which the tiled contraction still reads in
    place, and that keeps the op out of the contraction's epilogue (a
    residual block's add and Relu met this). Other writers keep sharing
    (they may write in place into what they read, which is how many
    epilogues run).
  }];
  let options = [
    Option<"empties", "empties", "bool", "false",
           "Also give an elementwise op after a padded contraction its own "
           "tensor.empty">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnCpuImageLoops : Pass<"kiln-cpu-image-loops", "::mlir::func::FuncOp"> {
  let summary = "Runs convolution chains one image at a time at batch > 1";
  let description = [{
    `kiln-conv-to-gemm` computes a convolution on a wide plane over an
    im2col panel, `C * KH * KW` rows by the output plane, written whole
    before the GEMM reads it. For a whole batch the panel outgrows the
    caches (ResNet-50's 56x56 3x3 convolutions: 7.2 MB per image, 58 MB at
    batch 8 against a 32 MiB L3), and the GEMM reads it back from memory;
    so do the elementwise ops after it (bias, Relu, the residual Add).

    This pass finds, at a static batch over 1, each chain of ops that ends
    in such a convolution's consumers, and runs the chain in an `scf.for`
    over the images: upstream's tile-and-fuse (`scf::tileConsumerAndFuse
    ProducersUsingSCF`) tiles the chain's last op along the batch, tile
    size 1, and fuses into the loop the producers that only it uses:
    convolutions that `kiln-conv-to-gemm` computes over an NCHW panel (not
    the channels-last ones, whose GEMMs want the batch's rows), zero pads
    of their planes, elementwise ops, poolings; and the fills and
    broadcasts (of the bias) that their accumulators start from, copied
    into the loop even when other ops share them. A ResNet bottleneck
    block on 56x56 planes so runs image by image, each image's panels and
    activations cache-resident. Ops without a batch dim as their first
    loop, producers with other users and anything else stay outside.

    `vector-bits`, `channels-last-below` and `pack-panels` must be the
    values `kiln-conv-to-gemm` runs with.

    ```mlir
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] ...
        : tensor<8x64x56x56xf32> to tensor<8x64x58x58xf32>
    %c = linalg.conv_2d_nchw_fchw ins(%p, %w ...) outs(%bias ...)
    %r = linalg.generic {max(%in, 0)} ins(%c) outs(%e) -> tensor<8x64x56x56xf32>
    // becomes
    %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%t = %e) {
      // the pad, the bias broadcast, the convolution and the Relu of
      // image %i (tensor<1x...>), inserted into %t
    }
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "As kiln-conv-to-gemm's">,
    Option<"channelsLastBelow", "channels-last-below", "int64_t", "64",
           "As kiln-conv-to-gemm's">,
    Option<"packPanels", "pack-panels", "bool", "true",
           "As kiln-conv-to-gemm's">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnConvToGemm : Pass<"kiln-conv-to-gemm", "::mlir::func::FuncOp"> {
  let summary = "Rewrites 2-D convolutions as GEMMs over an im2col copy";
  let description = [{
    Each `linalg.conv_2d_nchw_fchw` on static float tensors becomes a copy
    of the input windows into a `[N, C, KH, KW, OH, OW]` tensor (its
    innermost loop walks `ow`, contiguous in both tensors) and a contraction
    `out[n, f, p] += w[f, k] * col[n, k, p]` with `k = (c, kh, kw)` and
    `p = (oh, ow)` collapsed, which `kiln-cpu-tile-and-vectorize` turns
    into register-tiled vector code. A 1x1 convolution at stride 1 needs no
    copy. A static float `linalg.conv_2d_ngchw_gfchw` (a grouped
    convolution of more groups than the lowering splits into one
    convolution each: ResNeXt's 32, RegNet's 8-channel groups) becomes one
    batched GEMM over the groups: the windows copied into
    `[N, G, C, KH, KW, OH, OW]`, and `out[n, g, f, p] += w[g, f, k] *
    col[n, g, k, p]`, the group a batch dim of both operands. Other
    convolutions are left alone.

    With `pack-panels` (the default), when the width `nr` of the register
    tile along `p` (two vectors, else one, as `kiln-pack-weights` picks it)
    divides the plane, the windows are written packed instead,
    `[N, P / nr, C, KH, KW, nr]`, and the contraction reads them as
    `[N, P / nr, K, nr]` panels into a `[N, F, P / nr, nr]` view of the
    output: each `K x nr` panel a register tile streams while `k` advances
    is contiguous, instead of one row of the unpacked panel per step of `k`
    (ResNet-50's 56x56-plane 3x3 convolutions from 43-45% to 52-54% of the
    FMA roofline on a 2-core Sapphire Rapids, its 28x28 ones from 46-48% to
    55-56%: `python3 bench/roofline.py --models resnet50` with
    `pack-panels=false` and with the default, commits a2daa75 and 66a1bfc).
    For f32 the packed panel is written by vector code: an `scf.forall`
    over (batch, block of `nr` positions), each block's positions split
    into rows and columns once, then per input channel and tap one masked
    `vector.gather` per vector from the flattened input (a 1x1 stride-1
    window of an unpadded plane: plain vector reads of the block's run of
    the plane). At stride 1 along the row, a vector whose positions lie in
    one output row reads a run of consecutive input elements per tap;
    where that run is inside the plane (decided per block, before the
    channel loop) one plain vector read replaces the gather (ResNet-50's
    56x56 3x3 panels 0.81 -> 0.32 ms in all, its 28x28 ones 0.49 -> 0.35,
    `bench/roofline.py` on 2 cores). A zero `tensor.pad` of the input's plane is
    read there as the masked-off lanes instead of being copied first
    (ResNet-50's stem copy 0.65 -> 0.27 ms, a 56x56 3x3 one 0.39 -> 0.23
    ms, eight pad copies gone: `kiln-run --profile`, 2 cores). Other
    element types are packed by a generic copy whose loops run batch and
    channels first, the position `pb * nr + pi`
    split into row and column by a floordiv and a mod. A
    plane that no tile width divides and is wider than two vectors (14x14
    = 196) goes channels-last (below) when its output channels allow, and
    so does one whose tile would be a single vector wide (28x28 = 49 x 16
    with 16 f32 lanes: 8 accumulators and a broadcast per FMA; ResNet-50's
    28x28 3x3 convolutions at 40-43% of the FMA roofline so, 59-66%
    channels-last, and the model's profiled time 56-60 -> 50-53 ms on 2
    AVX-512 cores: `python3 bench/roofline.py --models resnet50 --batch 1
    --threads 2 --runs 7`, alternated between builds of commits 94de1e6
    and 6400e6f).

    A convolution whose output plane `p` has fewer than
    `channels-last-below` elements (ResNet-50's 7x7 planes) has too few
    columns for register tiles along `p` (layer4's GEMM ran at 43% of the
    roofline so, 78-86% channels-last: `bench/models/matmul.py 512 4608 49
    DIR --weight-left` against `49 4608 512 DIR`). It becomes the
    transposed GEMM instead,
    `out[n, p, f] += col[n, p, k] * w[f, k]`, vectorized along the output
    channels `f` (when they are a whole number of register tiles, so that
    `kiln-pack-weights` packs the weights): the windows are copied into a
    `[N, OH, OW, C, KH, KW]` tensor -- with constant weights, from the
    input transposed to `[N, H, W, C]` (its zero plane pad applied after
    the transpose) into `[N, OH, OW, KH, KW, C]`, each tap a contiguous
    run of channels, the weights reordered to `[F, KH, KW, C]` at compile
    time, and the input's transpose cancelled by
    `kiln-sink-transposes` against a channels-last convolution's
    before it (ResNet-50's 14x14 and 7x7 window copies and their
    transposes 1.6 -> 0.6 ms, `bench/roofline.py`) -- (a 1x1 stride-1
    input is transposed to `[N, OH, OW, C]`; a strided 1x1 convolution
    whose NCHW input no transpose computes, through elementwise ops and
    reshapes, copies the positions it reads straight from NCHW into
    `[N, OH, OW, C, 1, 1]`, a quarter of the input at stride 2, where a
    transpose of the whole input would not be cancelled: ResNet-50's
    layer2.0 downsample 0.64 -> 0.19 ms at batch 1), the accumulator's fill or broadcast is rebuilt in
    that layout (any other is transposed), and the result is transposed
    back to NCHW by a `linalg.transpose`, through which
    `kiln-cpu-tile-and-vectorize` still applies a following activation in
    registers.

    ```mlir
    %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x3x6x6xf32>,
        tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x4x4xf32>)
        -> tensor<1x4x4x4xf32>
    // becomes a linalg.generic copy into tensor<1x3x3x3x4x4xf32>, then
    // collapse_shape to tensor<1x27x16xf32> and a linalg.generic
    // contraction with tensor<4x27xf32> into tensor<1x4x16xf32>
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "Bits of the CPU's vector registers (as for "
           "kiln-cpu-tile-and-vectorize)">,
    Option<"channelsLastBelow", "channels-last-below", "int64_t", "64",
           "Output planes with fewer elements become GEMMs vectorized "
           "along the output channels (0: never)">,
    Option<"packPanels", "pack-panels", "bool", "true",
           "Write the im2col panel packed, [N, P / nr, K, nr], when a "
           "register tile width nr divides the plane P">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def KilnSinkTransposes
    : Pass<"kiln-sink-transposes", "::mlir::func::FuncOp"> {
  let summary = "Moves layout transposes past elementwise ops until they "
                "cancel";
  let description = [{
    `kiln-conv-to-gemm` computes a small-plane convolution channels-last,
    transposing its result back to NCHW and a 1x1 convolution's input to
    channels-last, so between two such convolutions (ResNet-50's 14x14
    and 7x7 stages) every tensor is transposed out and back in; on the
    GPU, `kiln-gpu-channels-last` does the same around every convolution
    with enough channels. A
    `linalg.generic` that is elementwise (projected-permutation maps, an
    identity one for its init, one result, no `linalg.index`) and whose
    tensor operands -- its init only where the body reads it -- are all
    `linalg.transpose`s of tensors of one shape by one permutation (or
    those collapsed to one dim, as `kiln-collapse-elementwise` leaves
    them), but for broadcasts (a quantized model's per-channel scale, a
    scalar tensor), is rebuilt over the untransposed tensors, the
    broadcasts read through the permutation, and its result transposed
    back. The transpose
    so moves past the Relu and the residual Add + Relu, meets the next
    convolution's transpose, and upstream's folding of a transpose of a
    transpose drops both (run by this pass, with the reshape folds).

    ```mlir
    %t = linalg.transpose ins(%nhwc : tensor<1x7x7x32xf32>)
        outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
    %r = linalg.generic {maximumf} ins(%t) outs(%e2 : tensor<1x32x7x7xf32>)
    %u = linalg.transpose ins(%r : tensor<1x32x7x7xf32>)
        outs(%e3 : tensor<1x7x7x32xf32>) permutation = [0, 2, 3, 1]
    // becomes
    %r = linalg.generic {maximumf} ins(%nhwc) outs(%e4 : tensor<1x7x7x32xf32>)
    // and %u is %r
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnCollapseElementwise
    : Pass<"kiln-collapse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Collapses the trailing dims of elementwise ops whose "
                "innermost loop is short";
  let description = [{
    A `linalg.generic` with only parallel loops, static, whose innermost
    loop runs fewer than `short-below` iterations (an NCHW plane of 14x14
    or 7x7 has a 14- or 7-long innermost loop, which the loop vectorizer,
    working in whole vectors, leaves scalar) gets its longest run of
    trailing dims that is contiguous in every indexing map -- identity
    maps, broadcasts that do not read those dims, such as a per-channel
    scale -- collapsed into one loop (upstream's
    `linalg::populateCollapseDimensions`: the operands collapsed, the
    results expanded back). ResNet-50's quantized residual blocks
    (dequantize, add, Relu, quantize over [1, 1024, 14, 14]) went from
    0.39 to 0.07 ms each (10.5% to 60% of the memory roofline; `kiln-run
    --profile` of `bench/quantization/qdq_models.py`'s QDQ ResNet-50).
  }];
  let options = [
    Option<"shortBelow", "short-below", "int64_t", "32",
           "Collapse when the innermost loop has fewer iterations">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def KilnCpuDepthwiseConv
    : Pass<"kiln-cpu-depthwise-conv", "::mlir::func::FuncOp"> {
  let summary = "Writes depthwise 2-D convolutions and max pooling as rows "
                "of vectors, their padding folded into lane shuffles";
  let description = [{
    The `linalg.generic` that a depthwise `Conv` (group = input channels =
    output channels, 2-D, NCHW, f32) lowers to, or a depthwise
    `QLinearConv` (int32 operands, zero points already subtracted, summed
    with integer multiplies and adds), or a bf16/f16 one summed in f32
    (`--precision=bf16|fp16`: its input rows read as half vectors and
    widened, its taps' weights widened), over `(n, c, oh, ow, kh,
    kw)` with any strides and dilations, its input possibly a
    `tensor.pad` of the spatial dims with zeros, becomes an `scf.forall`
    over `(n, c)` planes, each a loop over output rows. An output row is
    `ceil(OW / lanes)` vector accumulators that start from the bias (or a
    fill, or the init read). For each window row the input row is loaded
    as whole vectors (lanes past its end read as zero; a row in the top or
    bottom padding is selected to zeros) and for each tap every output
    vector's inputs are a static lane permutation of those vectors and
    zeros (`vector.shuffle`: one at stride 1, two at stride 2), multiplied
    by the tap's broadcast weight in a `vector.fma`. The padded copy of the
    input is not written. An elementwise op that is the convolution's only
    user (Clip, Relu) is applied to the accumulators before they are
    stored.

    A f32 `MaxPool`'s window generic (the same loops and input map, the
    window's shape as an unread second input, a body of `maximumf` or
    `maxnumf`) takes the same rows: its input padded with any constant
    (MaxPool's -inf, which then fills the lanes outside the input), the
    taps combined with the body's maximum, no weights (ResNet-50's 3x3
    stride-2 MaxPool over 64 planes of 112x112 on 2 threads: 0.32 ->
    0.04 ms).

    A row of more than 8 output vectors, or reading more than 16 input
    vectors, is computed in chunks of output vectors that stay within
    those registers (MobileNetV2's 112-wide rows on AVX2, 14 vectors, in
    two chunks of 7), each chunk loading only the input vectors it reads.
    Windows of more than 81 taps, strides above 4, and rows of which one
    output vector alone reads more than 16 input vectors stay generic
    (scalar loops).

    A float depthwise convolution whose input comes from, or whose result
    goes to, a convolution that `kiln-conv-to-gemm` computes channels-last
    (MobileNetV2's 1x1 expansions and projections at 14x14 and 7x7) is
    computed channels-last itself, when its channels are whole vectors:
    an `scf.forall` over `(n, oh, block of channels)` (one 64-byte line of
    channels a block), each output position's accumulators summing the
    taps' channel vectors of the NHWC input with the taps' weights
    (reordered to `[kh, kw, 1, c]` at compile time); rows in the top or
    bottom padding, and the columns at the borders (a loop of their own
    each side), select zeros; the interior takes no selects. Its input is
    a transpose of the NCHW source to NHWC and its result is transposed
    back, so that `kiln-sink-transposes` cancels both against the
    neighbours' transposes (on a 2-core Zen 3 with AVX2, MobileNetV2's
    profiled regions at batch 1 went from 7.9 to 6.2 ms: `python3
    bench/roofline.py --models mobilenet_v2`). A row too wide for the NCHW
    kernel's registers is not reason enough: two transposes of large
    planes cost more than its chunks.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "512",
           "Bits of the CPU's vector registers">,
    Option<"channelsLastBelow", "channels-last-below", "int64_t", "64",
           "kiln-conv-to-gemm's option of that name: a depthwise "
           "convolution next to a convolution that pass computes "
           "channels-last is computed channels-last (0: never)">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def KilnCpuInt8Gemm : Pass<"kiln-cpu-int8-gemm", "::mlir::func::FuncOp"> {
  let summary = "Writes 8-bit GEMMs and convolutions with constant weights "
                "as VNNI dot-product register tiles";
  let description = [{
    Two forms of int32 contraction of 8-bit operands with constant signed
    weights become an `scf.forall` over blocks of rows and columns, each a
    loop nest over register tiles of `register-tile-m` rows by one or two
    vectors of 16 int32 lanes that keep their accumulators in registers
    across `k`. Each step adds four products per lane: one operand's four
    bytes of a row broadcast, the other's 64 bytes (16 lanes by 4 `k`)
    loaded from a layout packed for it, summed in plain vector ops with the
    semantics of AVX-512 VNNI's `vpdpbusd` (unsigned bytes times signed
    ones), which `kiln-cpu-vnni-dot` substitutes after bufferization where
    the CPU has it. Signed activations are read flipped (`a ^ 0x80`, i.e.
    `a + 128`) and the accumulators start lower by 128 times the matching
    weight sums, computed at compile time.

    - `acc[..., m, n] += ext(a[..., m, k]) * ext(b[k, n])` (a QLinearMatMul;
      `b` over `(n, k)` or `(k, n)`, possibly behind reshapes, `n` a
      multiple of 16): rows of `a` are broadcast, `b` is packed into
      `[n / 16, k / 4, 16, 4]` bytes (`k` padded with zeros); blocks of
      columns keep a block's packed panel within `panel-bytes`.
    - `linalg.conv_2d_nchw_fchw` of int8 input and constant int8 weights
      into int32 (a QLinearConv): the GEMM `out[n, f, p] += w[f, k] *
      col[n, k, p]` written directly in NCHW, the output plane along the
      vectors: the input's windows are copied, flipped, into
      `[n, p / 16, k / 4, 16, 4]` bytes (`p` padded to a whole register
      tile, `k` to a multiple of four, from the input padded to cover
      them), rows of the weights (`[F, K]`, padded) are broadcast, and a
      plane that no register tile divides ends in a tile with masked
      reads and writes. No transposes.

    Blocks of rows make at least `parallel-chunks` blocks. Other
    contractions are left alone (`kiln-conv-to-gemm` and
    `kiln-cpu-tile-and-vectorize` take the float ones).

    With `signed-dot` (for CPUs with AVX2 and no AVX-512 VNNI) a
    contraction whose weights hold no -128 sums products of signed bytes
    instead: the unsigned operand read back as signed (`u ^ 0x80`, i.e.
    `u - 128`), and the accumulators start without the weight sums'
    correction (or, for unsigned activations, higher by 128 times them).
    Its chains of four products are marked `kiln.avx2_dot` for
    `kiln-cpu-avx2-dot`. Weights with a -128 keep the unsigned form.

    With `amx` (CPUs with AMX-INT8) both forms are written for AMX's tile
    multiply instead (a MatMul only from 16 rows on; fewer keep the
    register tiles): in each block of the `scf.forall`, one `linalg.generic`
    marked `kiln.amx_tiles`, `c[i, j] += ext(x[i, kq, kr]) * ext(y[j
    floordiv 16, kq, j mod 16, kr])`, with `x` the tiles' rows as `[R, K4,
    4]` bytes (the activations of a MatMul, the weights of a convolution)
    and `y` 16 columns by 4 `k` per 64-byte row of a tile (the packed
    weights of a MatMul; a convolution's windows, copied as they are),
    accumulating onto the contraction's init. The operands are padded
    with zeros to whole tiles (rows and channels to multiples of 16, `k`
    to 64, the plane to whole panels of 16) and a padded result is sliced
    back: the mark promises whole tiles. A convolution whose init is the
    same along each channel (QLinearConv's bias) fills its blocks with
    zeros instead and adds the bias where the sums are read (the
    requantization after it, rebuilt with the bias as one more input, or
    an add of its own; nothing where the bias is zero). Signed and
    unsigned bytes multiply as they are (AMX has all four products), so
    no weight sums are needed. `kiln-cpu-amx-tiles` runs the marked
    generics on AMX after bufferization; unmarked, each computes the same
    sums in scalar loops.
  }];
  let options = [
    Option<"amx", "amx", "bool", "false",
           "Write the products as tile products for AMX "
           "(kiln-cpu-amx-tiles)">,
    Option<"registerTileM", "register-tile-m", "int64_t", "8",
           "Rows of a register tile">,
    Option<"tileVectors", "tile-vectors", "int64_t", "2",
           "The most 16-lane vectors per register tile row (1 or 2)">,
    Option<"signedDot", "signed-dot", "bool", "false",
           "Sum products of signed bytes, marked for kiln-cpu-avx2-dot, "
           "where the weights hold no -128">,
    Option<"panelBytes", "panel-bytes", "int64_t", "262144",
           "Bytes of packed weights one block of columns may read">,
    Option<"parallelChunks", "parallel-chunks", "int64_t", "8",
           "Blocks to make at least, for threads">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCpuSparseGemm : Pass<"kiln-cpu-sparse-gemm", "::mlir::ModuleOp"> {
  let summary = "Runs 2:4-sparse float and int8 products with their "
                "weights compressed, expanded in registers";
  let description = [{
    A float32 contraction `out[..., m, n] += a[..., m, k] * b[k, n]` marked
    `kiln.sparsity = "2:4"` (by `kiln-sparsify`, carried by the lowering)
    whose `b` is a constant (possibly behind a 2-D transpose) with at most
    two non-zeros in each group of four consecutive `k` of a column gets
    `b` stored compressed in two private memref globals: per column, per
    chunk of `L` `k` (one vector: 16 with 512-bit vectors, 8 with 256),
    the `L/2` kept values in `k` order (`kiln_sparse_values`,
    `[n / nc, k / L, nc, L/2]` f32) and an `L`-bit mask of their positions
    (`kiln_sparse_masks`, `[n / nc, k / L, nc]` i16 or i8), a group with
    fewer than two non-zeros padded with zeros. The contraction becomes an
    `scf.forall` over blocks of `nc` columns; for tiles of up to 4 rows, a
    loop over the chunks expands each column's chunk in a register and adds
    its product with `L` consecutive `k` of each row into a vector
    accumulator; each accumulator is summed across its lanes at the end and
    added to the output (the init). The expansion is one
    `vector.expandload` (AVX-512 `vexpandps`) with 512-bit vectors; with
    256-bit ones (AVX2) the 4 values are loaded into a vector's low half,
    the high half zero, and permuted into place by the indices of the
    mask's row in a 256-entry table (`kiln_sparse_permutes`): a
    `vector.from_elements` of lanes extracted at those indices, marked
    `kiln.avx2_permute` for `kiln-cpu-avx2-dot` to make one `vpermps` of.
    The weight bytes read are 53% of the dense ones.

    With `int8`, the pass takes the int8 contractions instead
    (`out[..., m, n] += ext(a[..., m, k]) * ext(b[k, n])` into int32, `b`
    signed bytes: a QDQ model's or `--precision=int8`'s products, which
    must reach it before `kiln-cpu-int8-gemm` packs them): per column and
    chunk of 64 `k`, the 32 kept bytes (`[n / nc, k / 64, nc, 32]` i8)
    and a 64-bit mask (`[n / nc, k / 64, nc]` i64), 62.5% of the dense
    bytes. Each chunk is expanded with one `vector.expandload` of 64 bytes
    (AVX-512 VBMI2's `vpexpandb`) and multiplied with 64 consecutive bytes
    of each row in the plain vector ops that `kiln-cpu-vnni-dot` makes
    one `vpdpbusd` of (signed rows read flipped, `a ^ 0x80`, and the sums
    lowered by 128 times the column's weight sum). `expand-bytes` says the
    CPU has `vpexpandb` and VNNI at 512 bits; without them the int8
    products stay dense.

    It stays dense (its mark removed) with the reason recorded when it has
    more than `max-rows` rows (the dense register tiles reuse each weight
    element over 6 or 8 rows and win), its weight is under
    `min-weight-bytes`, `vector-bits` is under 256, K is not a multiple of
    `L`, or the weight is not 2:4. The module's `kiln.sparse_kernels` gets,
    per marked contraction, its node name, `kernel` (sparse or dense), the
    reason, and the weight's bytes dense and compressed (`kiln-compile
    --report`).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "512",
           "The CPU's vector register width in bits: 512 (vexpandps) or 256 "
           "(AVX2's vpermps; the kernel needs one of them)">,
    Option<"maxRows", "max-rows", "int64_t", "4",
           "Rows (the product of the output's dims but the last) above "
           "which a product stays dense">,
    Option<"minWeightBytes", "min-weight-bytes", "int64_t", "32768",
           "Dense weight bytes below which a product stays dense">,
    Option<"int8", "int8", "bool", "false",
           "Take the marked int8 products (i8 x i8 into i32) instead of the "
           "float32 ones">,
    Option<"expandBytes", "expand-bytes", "bool", "true",
           "With int8: the CPU has AVX-512 VBMI2's vpexpandb and AVX-512 "
           "VNNI (else the int8 products stay dense)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCpuAvx2Dot : Pass<"kiln-cpu-avx2-dot", "::mlir::func::FuncOp"> {
  let summary = "Turns marked 4-way s8 x s8 dot products into AVX2 "
                "vpsignb, vpmaddubsw and vpmaddwd, and marked lane "
                "permutations into vpermps";
  let description = [{
    Replaces each chain of four `arith.addi` on `vector<16xi32>` that ends
    in an add marked `kiln.avx2_dot` and adds to an accumulator the
    products `extsi(shuffle(a, a, [q, q + 4, ...])) * extsi(shuffle(b, b,
    [q, q + 4, ...]))` for q = 0, 1, 2, 3 of the same `vector<64xi8>`
    operands -- what `kiln-cpu-int8-gemm{signed-dot}` writes, `b` being
    weights without -128 -- by AVX2 instructions on each 32-byte half:
    `|a|` (vpabsb), `b` with `a`'s signs (vpsignb), their pairwise
    products summed in int16 (vpmaddubsw: at most 2 x 128 x 127, so never
    saturated), and those pairs summed in int32 (vpmaddwd by ones): the
    same sums, four instructions per 32 products.

    It also replaces each `vector.from_elements` marked `kiln.avx2_permute`
    whose lane `l` is `v[index_cast(p[l])]` (`v` a `vector<8xf32>`, `p` a
    `vector<8xi32>`: what `kiln-cpu-sparse-gemm` writes to expand 2:4
    weights on AVX2) by one `vpermps` (`llvm.x86.avx2.permps`); unmarked or
    differently shaped ones stay as they are (the same values, lane by
    lane). It runs after bufferization, for CPUs with AVX2.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect"];
}

def KilnCpuAmxBf16 : Pass<"kiln-cpu-amx-bf16", "::mlir::func::FuncOp"> {
  let summary = "Writes bf16 MatMuls and convolutions with constant weights "
                "as AMX tile products";
  let description = [{
    For CPUs with AMX-BF16. Each contraction `acc[..., m, n] +=
    extf(a[..., m, k]) * extf(b[k, n])` of bf16 operands summed in f32
    (`kiln-mixed-precision`'s MatMuls and Gemms under
    `--precision=bf16`), `b` a constant over `(k, n)` or `(n, k)`
    (possibly behind reshapes, or a 2-D transpose: a Gemm's transB) and at
    least 16 rows `m` (the leading dims together), becomes an `scf.forall`
    over blocks of rows and columns,
    each one `linalg.generic` marked `kiln.amx_tiles` for
    `kiln-cpu-amx-tiles`: `c[i, j] += extf(x[i, kq, kr]) * extf(y[j
    floordiv 16, kq, j mod 16, kr])`, with `x` the activations as
    `[M16, K32 / 2, 2]` and `y` the weights packed at compile time into
    `[N16 / 16, K32 / 2, 16, 2]` (pairs of `k` per 32-bit lane, AMX's
    layout for `tdpbf16ps`), padded with zeros to whole tiles (16 rows and
    columns, 32 `k`) and sliced back. A zero init becomes a zero fill of
    each block; another init is padded and accumulated onto. Blocks of
    columns keep a block's packed panel within `panel-bytes`, blocks of
    rows make at least `parallel-chunks` blocks. Other contractions (fewer
    rows, weights computed at run time such as attention's) are left to
    `kiln-cpu-tile-and-vectorize`. Unlowered, a marked generic computes the
    same sums in scalar loops.

    Each `linalg.conv_2d_nchw_fchw` of bf16 input and constant bf16
    weights into f32 becomes the AMX form of `kiln-cpu-int8-gemm{amx}`'s
    convolutions in pairs of `k`: `out[n, f, p] += w[f, k] * col[n, k,
    p]` with the weights as the tiles' rows (`[F16, K32 / 2, 2]`, packed
    at compile time) and the input's windows copied by the same vector
    copy (lanes shuffled as 16-bit integers) into `[n, P16, K32 / 2, 16,
    2]`, accumulating onto the padded init (the bias broadcast), the
    result sliced back to `[n, F, P]`.
  }];
  let options = [
    Option<"panelBytes", "panel-bytes", "int64_t", "262144",
           "Bytes of packed weights one block of columns may read">,
    Option<"parallelChunks", "parallel-chunks", "int64_t", "8",
           "Blocks to make at least, for threads">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCpuAmxTiles : Pass<"kiln-cpu-amx-tiles", "::mlir::func::FuncOp"> {
  let summary = "Runs 8-bit and bf16 tile products on AMX's tile multiply";
  let description = [{
    After bufferization, each `linalg.generic` marked `kiln.amx_tiles` by
    `kiln-cpu-int8-gemm{amx}` or `kiln-cpu-amx-bf16`, `c[i, j] += ext(x[i,
    kq, kr]) * ext(y[j floordiv 16, kq, j mod 16, kr])` over memrefs `x`
    (`[R, KG, G]`), `y` (`[J, KG, 16, G]`) and `c` (`[R, C]`) -- i8 in
    groups of G = 4 into i32, or bf16 in pairs (G = 2) into f32 -- with
    unit strides within rows of 64 bytes, `R`, `C` and `KG` multiples of 16
    (the mark's promise where they are dynamic), becomes loops over blocks
    of 2 x 2 accumulator tiles (2 x 1, 1 x 2 and 1 x 1 at the ends; 16 x 16
    int32 or f32 each, `amx.tile_load` from `c`, or `amx.tile_zero` where a
    zero fill of `c` precedes the product with only memory-effect-free ops
    between: the fill goes) that stay in tile registers across `k`: per
    step of 16 groups of `k`, a tile of 16 rows of `x` and one of 16 groups
    of `y` for each row and column of tiles, one `amx.tile_muli`
    (`tdpbssd`, `tdpbsud`, `tdpbusd` or `tdpbuud` by the operands'
    extensions) or `amx.tile_mulf` (`tdpbf16ps`) per accumulator.
    Every tile has the full 16 x 64-byte shape: LLVM's tile register
    allocation runs out of registers or spills once a function mixes
    shapes. The accumulators are carried through the `k` loop as
    `!llvm.x86_amx`
    values, cast to and from tiles (upstream's
    `convert-vector-to-llvm{enable-amx}`, which lowers the AMX ops, runs
    after `convert-scf-to-cf`, and a branch argument of tile type is one it
    cannot convert). A marked generic whose operands do not have that form
    is left alone with a warning: its scalar loops compute the same sums.
  }];
  let dependentDialects = ["::mlir::amx::AMXDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCpuVnniDot : Pass<"kiln-cpu-vnni-dot", "::mlir::func::FuncOp"> {
  let summary = "Turns 4-way u8 x s8 dot products into AVX-512 VNNI "
                "vpdpbusd";
  let description = [{
    Replaces each chain of four `arith.addi` on `vector<16xi32>` that adds
    to an accumulator the products `extui(shuffle(a, a, [q, q + 4, ...]))
    * extsi(shuffle(b, b, [q, q + 4, ...]))` for q = 0, 1, 2, 3 of the same
    `vector<64xi8>` operands `a` and `b` -- the sums of four products per
    lane that `kiln-cpu-int8-gemm` writes -- by one
    `llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"`, which computes
    exactly that (without saturation, wrapping like `arith.addi`). It runs
    after bufferization (the intrinsic call has no memory-effect
    interface) and only for CPUs with AVX-512 VNNI; `kiln-compile
    --cpu-int8-dot` chooses. With `bits=256` (CPUs with AVX-VNNI and no
    AVX-512: Alder Lake and later client CPUs) each is two
    `llvm.x86.avx512.vpdpbusd.256` on the 32-byte halves, the
    accumulator's halves joined after.
  }];
  let options = [
    Option<"bits", "bits", "unsigned", "512",
           "The vpdpbusd width: 512 (AVX-512 VNNI) or 256 (AVX-VNNI, or "
           "AVX-512 VNNI with VL)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KilnCpuPrefetchPanels
    : Pass<"kiln-cpu-prefetch-panels", "::mlir::func::FuncOp"> {
  let summary = "Prefetches the next block's weight panel into L2 while a "
                "register-tiled contraction's later row tiles run";
  let description = [{
    Finds the loops that `kiln-cpu-tile-and-vectorize` writes for a
    contraction with a constant weight: an `scf.forall` over blocks, in
    each block an `scf.for` of at least two row tiles, in each an innermost
    `scf.for` over k that reads vectors of the block's weight, a
    `memref.subview` (made in the forall) of a view of a constant global
    that is one contiguous region (every dim after the first whole, as
    `kiln-pack-weights`' [N / nr, K, nr] panels are sliced) of at least
    `min-bytes`. In every step of the k loops of the row tiles after the
    first it adds a `memref.prefetch` (read, locality 2: prefetcht1 on
    x86, into L2) of a line of the region that follows the block's, the
    lines advancing evenly over those tiles' steps (up to `max-per-step`
    lines a step where the region has more lines than the steps). The
    first row tile streams its own block; the blocks after it find theirs
    in L2, read from memory at an even rate while the FMAs run, instead
    of at the first row tile's rate while the others leave the memory
    idle. The k loop is first unrolled by up to `unroll` steps (a factor
    that divides its trip count), and each unrolled step computes one
    address and issues the prefetches of its steps together, so that the
    address arithmetic is not paid per k step. The addresses are clamped
    to the global; a prefetch changes no value. It runs after
    bufferization, before `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", "32768",
           "Blocks of the weight smaller than this are not prefetched">,
    Option<"maxPerStep", "max-per-step", "int64_t", "4",
           "Most prefetches a k step issues">,
    Option<"unroll", "unroll", "int64_t", "4",
           "Unroll the k loop by the largest factor up to this that divides "
           "its trip count, and issue one group of prefetches per unrolled "
           "step (1: a prefetch computed in every step)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnCpuOutlineKernels
    : Pass<"kiln-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Moves each loop nest of a large function into a function "
                "of its own";
  let description = [{
    LLVM's loop passes (scalar evolution, loop strength reduction) walk the
    dominator tree of the whole function, so a function of N sequential
    loop nests costs them about N^2: a 48-layer transformer's one entry
    function spent most of its 192 s compile there. In every function
    with at least `min-kernels` top-level ops that hold regions (loops,
    OpenMP regions, `scf.if`), each such op moves into a private function
    of its own, marked `noinline`, and is replaced by a call; LLVM then
    compiles N small functions, in time linear in N.

    The callee takes the values the op reads from outside it. The
    side-effect-free ops that compute them (constants, index arithmetic,
    strided views) are cloned into it, so its loops keep constant bounds,
    except those whose result is a buffer the calling convention passes as
    a pointer (a weight's `memref.get_global`, a view of the arena of static
    shape): those are passed. So the nests of a network's repeated layers,
    which differ only in their weights and arena slots, give equivalent
    functions (the same ops on the same arguments, locations aside), and
    each group of them becomes one function that every nest of the group
    calls: a 12-layer transformer's layers are compiled once. An op is left
    in place if a value it would take is not one that the bare-pointer
    calling convention passes (a memref with a dynamic shape or a strided
    layout, or any other non-scalar type), or if it returns anything but
    scalars. It runs on loops (after `convert-linalg-to-loops` and the
    `scf.forall` lowering), before `convert-scf-to-cf`.

    ```mlir
    func.func @main(%in: memref<64xf32>, %out: memref<64xf32>) {
      scf.for %i = %c0 to %c64 step %c1 { ... }    // one of many
    ```
    becomes
    ```mlir
    func.func @main(%in: memref<64xf32>, %out: memref<64xf32>) {
      call @main_kernel_0(%in, %out) : (memref<64xf32>, memref<64xf32>) -> ()
    func.func private @main_kernel_0(%in: memref<64xf32>, %out: memref<64xf32>)
        attributes {passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index ...
      scf.for %i = %c0 to %c64 step %c1 { ... }
    ```
  }];
  let options = [
    Option<"minKernels", "min-kernels", "int64_t", "16",
           "Outline only in functions with at least this many top-level "
           "ops that hold regions">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnCpuKeepOuterLoops
    : Pass<"kiln-cpu-keep-outer-loops", "::mlir::func::FuncOp"> {
  let summary = "Asks LLVM not to unroll loops around long loops";
  let description = [{
    LLVM's full unrolling sizes a loop by its body before vectorization, so
    a loop of a few constant iterations around a long scalar loop (the 16
    rows of a thread's block of a row reduction, each over 768 elements)
    looks small: it is unrolled, then each copy of the inner loop is
    vectorized and interleaved on its own. That gains nothing at run time
    (the inner loop's work dominates) and multiplies the code the later
    passes see: one 128x768 LayerNorm became 8,800 lines of LLVM IR, and
    loop strength reduction on those copies took 24 of the 94 s that
    BERT-base took to compile.

    Each `scf.for` that holds a loop LLVM will keep as a loop (an `scf.for`
    whose trip count is unknown or at least `min-inner-trips`, or an
    `scf.while`) gets `loop_annotation = #llvm.loop_annotation<unroll =
    <disable = true>>`, which `convert-scf-to-cf` carries to the loop's
    back edge and the translation to `!llvm.loop` metadata. Loops of short
    loops (a 3x3 window) are still unrolled whole.

    ```mlir
    scf.for %r = %c0 to %c16 step %c1 {
      scf.for %k = %c0 to %c768 step %c1 { ... }
    }
    ```
    becomes
    ```mlir
    scf.for %r = %c0 to %c16 step %c1 {
      scf.for %k = %c0 to %c768 step %c1 { ... }
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    ```
  }];
  let options = [
    Option<"minInnerTrips", "min-inner-trips", "int64_t", "32",
           "An inner scf.for of at least this many iterations (or an "
           "unknown count) keeps its enclosing loops rolled">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KilnCpuRowReductions
    : Pass<"kiln-cpu-row-reductions", "::mlir::func::FuncOp"> {
  let summary = "Computes reductions over contiguous rows with vector "
                "accumulators";
  let description = [{
    A `linalg.generic` on buffers whose only reduction is its innermost
    loop, whose inputs read that loop's dim as their last, contiguous
    index (or not at all: a per-row value such as Softmax's maximum), and
    whose outputs each accumulate with one combining op (`addf`, `mulf`,
    `maxnumf`, `minnumf`, `maximumf`, `minimumf`, or their integer kin)
    becomes a loop nest over its parallel dims in which each row is read
    `vector-bits` at a time: the body (arith and math ops) runs on whole
    vectors, combined lane by lane into `unroll` independent accumulators,
    a masked tail, and one `vector.reduction` across the lanes (a tree).
    Softmax's maximum and sum, LayerNorm's mean and variance and
    ReduceSum/Mean/Max over the last axis are such generics; lowered to
    scalar loops instead, a float sum is one chain of dependent adds,
    which LLVM may not reorder (an add's latency per element).

    The sum is taken in a different order than the scalar loop's (lanes
    and accumulators, then the tree): float results may differ in the last
    bits, as any vectorized reduction's do. The parallel dims may be
    dynamic (the tiles of an `scf.forall` over rows, the last one shorter:
    the loops run to the operand's dim); the row's length must be static.
    Rows shorter than one vector, rows of dynamic length and ops with index
    computations (`linalg.index`) are left alone. It runs after
    bufferization, before `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "512",
           "The CPU's vector register width in bits">,
    Option<"unroll", "unroll", "int64_t", "4",
           "Independent vector accumulators per output (hide the "
           "combining op's latency)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnPackWeights : Pass<"kiln-pack-weights", "::mlir::func::FuncOp"> {
  let summary = "Packs constant right-hand sides of contractions into "
                "contiguous register panels";
  let description = [{
    A contraction's vectorized operand, the one that holds the output's
    contiguous dim `n`, is read one register tile of `nr` elements at a
    time while `k` advances. When that operand is a constant (a MatMul or
    Gemm weight, possibly behind a transpose such as Gemm's `transB`, or a
    reshape), its elements are reordered at compile time into panels
    `packed[n / nr, ..., k, n % nr]`, so that each `K x nr` panel is
    contiguous: the register tile streams it instead of jumping a row per
    step of `k` (or gathering, when transposed). The contraction becomes a
    `linalg.generic` with `n` split into an outer loop `n / nr` and a new
    innermost parallel loop `n % nr`; it writes an `expand_shape` view of
    its output, and a `collapse_shape` gives the original result back.

    `nr` is two vectors of `vector-bits` when that divides `n`, else one;
    contractions with `n` at most two vectors wide, non-constant, splat or
    dynamic operands, and `n` that no vector width divides are left alone.

    ```mlir
    %r = linalg.matmul ins(%x, %w : tensor<4x64xf32>, tensor<64x32xf32>)
        outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
    // becomes (vector-bits=256, f32: nr = 16)
    %p = arith.constant dense_resource<kiln_packed> : tensor<2x64x16xf32>
    %e = tensor.expand_shape %acc [[0], [1, 2]] output_shape [4, 2, 16]
    %g = linalg.generic ... ins(%x, %p) outs(%e) -> tensor<4x2x16xf32>
    %r = tensor.collapse_shape %g [[0], [1, 2]]
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "Width of one SIMD register in bits">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnMathApproximation
    : Pass<"kiln-math-approximation", "::mlir::func::FuncOp"> {
  let summary = "Computes f32 transcendental math ops with upstream's "
                "polynomial approximations";
  let description = [{
    Rewrites the f32 `math` ops named in `ops` with MLIR's polynomial
    approximations (`populateMathPolynomialApproximationPatterns`): arith
    and `math.fma` instead of calls to libm, so that LLVM can vectorize
    the loops around them. The CPU pipeline names the ops of activation
    functions and normalizations: `erf` (GELU), `exp` (Softmax, Sigmoid),
    `expm1`, `tanh`, `log`, `log1p` and `log2`; with no `ops`, nothing
    changes. Their results are within
    a few ulp of libm's (the ONNX node tests check them, at their
    tolerances, in `test/conformance`). Other types and ops are left to
    `convert-math-to-libm`. Upstream's algebraic simplifications run
    first: `math.powf` with a constant exponent of -2, -1, -0.5, 0, 0.5,
    1, 2, 3 or 4 (splat or scalar) becomes multiplications, divisions and
    square roots (GPT-2's GELU cubes its input with Pow), for any type.

    ```mlir
    %y = math.erf %x : f32
    // becomes a clamp, two rational polynomials in %x and selects
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "The math ops to approximate, by name without 'math.'">,
  ];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def KilnCpuTileAndVectorize
    : Pass<"kiln-cpu-tile-and-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Tiles float contractions for the cache and registers and "
                "vectorizes them";
  let description = [{
    Every static float contraction on tensors (what MatMul, Gemm and
    `kiln-conv-to-gemm` produce) is tiled twice: an `scf.forall` over the
    batch dims and over blocks of the output's contiguous dim, sized so
    that the right-hand panel (K x block) fits in `panel-bytes`; then
    `scf.for` loops over a register tile of `register-tile-m` rows by two
    vectors of `vector-bits` (6 x 16 f32 for AVX2), with the reduction
    loops innermost at tile 1. The register tile becomes a
    `vector.contract` (an outer product per step of k) and its
    accumulator is hoisted out of the reduction loops. Register loops that
    do not divide their dim are peeled, so every tile has a static shape.
    When the `scf.forall` would have fewer than `parallel-chunks` blocks
    (batch 1 with a small output plane), it also splits the register
    tile's row dim into blocks of whole register tiles that divide it
    (the register tile then takes the nearest row count that divides the
    dim), so that every thread gets work.

    An elementwise op that is the only consumer of a contraction with one
    reduction dim (through reshapes: the activation after a convolution
    or a GEMM, such as Relu, Clip or Sigmoid) becomes its epilogue: its
    body is applied, on vectors, to each register tile's accumulator after
    the reduction loop, just before the tile's one write, and the separate
    pass over the result disappears. The consumer must read one input
    elementwise (identity maps, its init unread) with elementwise,
    side-effect-free body ops whose other operands are scalars. With
    `fuse-residuals`, one that also reads another tensor of the same
    shape, elementwise, defined before the contraction (a ResNet block's
    residual Add + Relu), is fused too, through expand/collapse reshapes
    only: each register tile reads the residual's vector at the indices
    it writes (summed through the tiled loops' slices), from the residual
    reshaped back to the contraction's result, before applying the body.
    Off by default: on ResNet-50 at batch 1 (2 cores) the 16 residual
    passes (0.47 ms) went, but the 1x1 convolutions that took them grew
    by more (0.71 ms; each register tile's residual rows lie in different
    channel planes, read with their latency exposed, where the separate
    pass streamed them); the arena shrinks (20.7 -> 17.6 MiB).

    First, a contraction whose vectorized input (the one holding the
    output's contiguous dim) is computed at run time with another dim
    innermost -- attention's K read as K^T -- gets that input copied once
    by a `linalg.transpose` with that dim innermost (composed with the
    transpose that made it), where each copied element is then read at
    least 4 times: its register tiles would otherwise gather each vector
    element by element at every step of k.

    A contraction with one reduction dim whose init is a broadcast value --
    a `linalg.fill`, or a 1-D tensor broadcast along one dim (a
    convolution's or Gemm's bias), seen through transposes and reshapes
    that keep that dim or split it (a channels-last convolution's output
    channels in blocks of the tile's width, read at `16 * fb + fi`) --
    starts each register tile's accumulators from
    it in registers (the bias values of the tile's rows read as one
    vector and broadcast), not from a read of the init. When every tile
    did, the op that computed the init is replaced by its own destination,
    so the broadcast, and on the channels-last path its transpose, are not
    run at all (MobileNetV2 5.93 -> 5.52 ms on 2 cores, `kiln-run
    --benchmark`; a MatMul's zero fill no longer writes its output first).
    If such a contraction also has an epilogue whose destination is not an
    empty tensor (in an image loop of `kiln-cpu-image-loops`, the slice of
    the loop's result it fills), the contraction writes into that
    destination, reshaped, instead of the empty tensor, moved before it
    with the pure ops it is computed from; bufferization then writes the
    tiles in place instead of copying a buffer into the slice.

    Every other static linalg op on tensors with at least 16384 iterations
    gets an `scf.forall` that splits its outermost
    parallel loop with two or more iterations into `parallel-chunks`
    blocks, so that it too may run on several threads; its loops stay
    scalar. Fills are split too: a fill of a value whose bytes differ (the
    -inf that MaxPool starts from) is a loop of stores, not a memset
    (ResNet-50's 0.32 -> 0.16 ms on 2 cores, `bench/roofline.py`). Loops that an indexing map reads through a floordiv or a mod
    are not split (a block of them would not read the span of its ends).

    An elementwise generic whose body is a long chain (12 ops or more: a
    QDQ model's QuantizeLinear/DequantizeLinear pairs around each op of a
    GELU) is latency-bound element by element, and LLVM's vectorizer
    steps one vector at a time; such a generic (all loops parallel,
    projected-permutation maps, its init unread), inside its `scf.forall`
    block, has its innermost loop tiled by four vectors (of its widest
    element type) where four vectors divide it, and is vectorized at that
    width, so that each op of the chain is four independent vector ops in
    a row (BERT's QDQ GELU, 128 x 3072 elements on a 2-core Zen 3: 1.09
    -> 0.73 ms; two vectors 1.05, eight 0.77).

    Copies are vectorized the same way: a `linalg.transpose`,
    `linalg.copy` or generic that only yields an input whose innermost
    loop reads that input's last dim (or does not read it: a broadcast),
    at the widest of four, two or one vectors that divides the row. As
    loops, LLVM unrolled each row of attention's head split ([b, s, h, 64]
    to [b, h, s, 64]) into 64 scalar loads and stores that it could not
    vectorize (source and destination are views of one arena), and loop
    strength reduction spent about 0.15 s on each: 7 s of BERT-base's
    compile.

    Contractions of f16 or bf16 inputs summed in f32 (what
    `kiln-mixed-precision` writes) are tiled the same way, their register
    tiles as wide as the f32 accumulators' vectors, each value widened
    once it is loaded. With `bf16-dot` (CPUs with AVX-512 BF16), a bf16
    one whose single reduction dim is even steps k by two, and its
    register tile's `vector.contract` (the vectorized operand over (k, n),
    the other over (m, k), n a multiple of `vector-bits / 32`) becomes
    `x86vector.avx512.dot` (vdpbf16ps: two products per f32 lane): the
    vectorized operand's two rows interleaved by one shuffle per vector,
    each row's pair of the other broadcast as one 32-bit value. The sums
    differ from f32 FMAs only in rounding (vdpbf16ps rounds after each
    product's add and flushes denormals; each product of two bf16 values
    is exact in f32).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "Width of one SIMD register in bits">,
    Option<"registerTileM", "register-tile-m", "int64_t", "6",
           "Rows of the output's register tile">,
    Option<"panelBytes", "panel-bytes", "int64_t", "262144",
           "Bytes of the right-hand panel one block may touch (about half "
           "of one core's L2)">,
    Option<"parallelChunks", "parallel-chunks", "int64_t", "8",
           "Blocks the outermost parallel loop of other ops is split into "
           "(1: none)">,
    Option<"fuseResiduals", "fuse-residuals", "bool", "false",
           "Fuse an elementwise consumer that also reads a residual "
           "tensor (a residual Add + Relu) into the contraction">,
    Option<"bf16Dot", "bf16-dot", "bool", "false",
           "Sum bf16 products two per lane with AVX-512 BF16's vdpbf16ps "
           "(x86vector.avx512.dot)">,
    Option<"kChunkBytes", "k-chunk-bytes", "int64_t", "-1",
           "Sweep a contraction's reduction in chunks whose slice of a "
           "register tile's panel takes this many bytes, around the "
           "register tiles, where the panel is larger and the block has "
           "several row tiles (0: one sweep per row tile; -1: 16 KiB "
           "chunks where the panel is an operand read in place whose "
           "rows are wider than the register tile, its slice larger "
           "than panel-bytes and the block at least 8 row tiles, else "
           "one sweep)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnGpuChannelsLast
    : Pass<"kiln-gpu-channels-last", "::mlir::func::FuncOp"> {
  let summary = "Computes NCHW convolutions channels-last on the GPU";
  let description = [{
    `kiln-gpu-contractions` runs a convolution as an implicit GEMM that
    reads its input in place. From NCHW its K runs over `(c, kh, kw)`,
    strided along all three, so each thread stages its tile element by
    element (ResNet-50's 3x3 convolutions ran at 16-30 TFLOP/s in f16 on
    an H200). Channels-last, K runs over `(kh, kw, c)` with the channels
    contiguous in both operands: a run of 16 bytes of channels is one
    aligned `cp.async` copy, inside or outside the zero padding as a
    whole.

    Each static float (or int8 into i32) `linalg.conv_2d_nchw_fchw` whose
    input and output channels fill whole `group-bytes` runs becomes a
    `linalg.conv_2d_nhwc_fhwc` between transposes: its input transposed to
    NHWC (a pad of its plane with a constant, zero or an int8 zero point,
    re-applied after the transpose), constant weights reordered to
    `[f, kh, kw, c]` at compile time (others transposed at run time), its
    initial value (a zero fill or a bias broadcast) rebuilt in NHWC, and
    its result transposed back. `kiln-sink-transposes` then moves the
    transposes past the elementwise ops between convolutions (Relu, a
    residual Add), where they cancel against the next convolution's.
    Fewer input channels than one run (an RGB stem) are widened to a run
    with zeros where the weights are constants (widened too, at compile
    time): the tile multiplies the zeros but copies whole runs (ResNet-50's
    stem, 3 channels of f16 widened to 8). Other channel counts, and
    narrow outputs (a loop kernel rather than a tile), stay NCHW.

    ```mlir
    %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x64x56x56xf16>,
        tensor<64x64x3x3xf16>) outs(%b : tensor<1x64x54x54xf32>)
    // becomes
    %xt = linalg.transpose ins(%x) ... permutation = [0, 2, 3, 1]
    %wt = arith.constant dense_resource<kiln_taps_major> : tensor<64x3x3x64xf16>
    %yt = linalg.conv_2d_nhwc_fhwc ins(%xt, %wt) outs(%bt : tensor<1x54x54x64xf32>)
    %y = linalg.transpose ins(%yt) ... permutation = [0, 3, 1, 2]
    ```
  }];
  let options = [
    Option<"groupBytes", "group-bytes", "int64_t", "16",
           "Convolutions whose input and output channels are each a "
           "multiple of this many bytes go channels-last">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnGpuContractions : Pass<"kiln-gpu-contractions", "::mlir::func::FuncOp"> {
  let summary = "Turns bufferized contractions into tiled GEMM kernels with "
                "shared-memory operands (and tensor cores)";
  let description = [{
    Runs after bufferization and memory planning, before
    `convert-linalg-to-parallel-loops`. Each top-level linalg op of the
    graph function (named or generic) that is a contraction with static
    sizes becomes a `gpu.launch` of a tiled GEMM (named and costed by
    `kiln-gpu-form-kernels`, which keeps it as it is). Its loop dimensions
    must fall in four groups: batch (read by both inputs and the output),
    M (one input and the output), N (the other input and the output) and
    K (reductions both inputs read); each group is flattened in loop order,
    N being the group of the output's innermost dimension. The output is
    indexed by a projected permutation, the inputs by any affine
    expressions: a convolution is an implicit GEMM that reads its input in
    place (K = channel and kernel window, N = image and output position).
    The body is `out + A * B`, the inputs possibly extended, over f32, f16
    or bf16, or over int8 operands sign-extended into an i32 accumulator
    (a quantized model's products), with M and N of at least `min-size`:

    * one block of 128 threads per 64x64 output tile and batch index (f16
      and bf16: `half-tile`, by default 64x64 with steps of 32 and warps of
      32x32, or `wide-tile` where that gives at least `wide-min-blocks`
      blocks);
    * per step of K (16 for f32, 32 for f16/bf16), the threads stage the A
      tile (as [k][m]) and the B tile (as [k][n]) in shared memory (f16
      and bf16: each tile keeps the operand's contiguous side contiguous,
      [m][k] or [k][m], [k][n] or [n][k]),
      consecutive threads reading consecutive elements along the dimension
      each operand's innermost index follows, with zeros where the tile
      overhangs the operand; a barrier; the tile's products; a barrier.
      Where that dimension is contiguous in the operand's buffer (its
      innermost varying loop dim steps the address by one element and has
      a multiple of W values, every other term of the address a multiple
      of W) each thread loads W consecutive elements with one aligned
      access of `vector-bytes` (W = 4 f32 or 8 f16/bf16 for 16 bytes):
      MatMul and Gemm operands, convolution weights and the input of a
      1x1 convolution; padded inputs are read element by element;
    * f32 without `tf32`: each thread accumulates an 8x4 register tile
      with f32 multiply-adds (exact f32 arithmetic, in another order than
      the CPU's);
    * f16 and bf16: fragments are loaded with `ldmatrix`
      (`nvgpu.ldmatrix` .x4, transposed where the tile is [k][m] or
      [k][n]); with `stages` > 1, a pipeline of that many shared buffers
      per operand (fewer where they would pass 48 KiB): the tiles of the
      next `stages - 1` steps are in flight as `cp.async` copies
      (`nvgpu.device_async_copy`, zero-filled outside the operand;
      operands that cannot be copied in 16-, 8- or 4-byte groups are
      stored synchronously) while this step's products run, one barrier
      per step;
    * f32 with `tf32`, f16 and bf16: each warp accumulates a 32x32 tile
      (f16 and bf16: the tile shape's warp tile)
      on tensor cores in f32 registers: `nvgpu.mma.sync` m16n8k8 tf32
      (which reads f32 operands as tf32, a 10-bit mantissa) or m16n8k16
      f16, and `nvvm.mma.sync` m16n8k16 bf16 directly (upstream's
      `nvgpu.mma.sync` has no bf16 lowering), two bf16 per register;
    * int8: the f16 tiles' shapes with twice the k a step (64 by default),
      `nvgpu.mma.sync` m16n8k32 s8 into i32 accumulators (`.satfinite`);
      both shared tiles are k-contiguous ([m][k], [n][k]: 8-bit `ldmatrix`
      does not transpose), an operand whose contiguous side is m or n
      loaded 16 bytes at a time and stored transposed;
    * the epilogue adds each accumulator to its output element (which
      holds the initial value: zeros or a bias), converting to the
      output type.

    With `fold-padding`, an input that is a zero-padded copy (a zero fill
    of a buffer, then a copy of a source into its interior at static
    offsets: how a padded convolution's input bufferizes) is read from the
    source in place, zero outside it, and the fill and the copy are
    erased. It is not folded where the padded buffer has another use, or
    where an op between the copy and the contraction (the contraction's own
    output included) may write the source's bytes, which the memory plan
    may reuse once the copy has read them.

    With `fold-init`, the op right before the contraction that writes the
    output's initial value (a fill with a constant, or a generic that
    broadcasts a bias into it through a projected permutation, its source
    sharing no bytes with the output) is folded into the epilogue, which
    adds the accumulators to that value (the constant, or the bias element)
    and stores: no fill or broadcast kernel, and the output is written
    once instead of written, read and written again.

    With `fuse-epilogue`, the next op with memory effects after the
    contraction, when it is an elementwise generic over the output (read
    once, through a permutation: a bias add that writes the heads
    transposed) with one output written through a permutation, runs in
    the epilogue: each result goes through the
    generic's body, with its other inputs loaded at the element, and is
    stored into the generic's output; the contraction's own output is not
    written when nothing else reads it. A bias add, a residual add, a
    GELU or a Relu after a MatMul, Gemm or Conv costs no kernel and no
    round trip through memory. It is refused where the generic's output
    shares bytes with anything the tile reads (another block may still
    read it) or with one of its other inputs read otherwise than element
    by element.

    A split product of `kiln-gpu-split-k` (its output [S, ...] the
    partials, the split a batch dim of the tile) followed by the sum of
    its S partials (an elementwise generic reading the partials S times,
    at split 0 to S - 1, with its bias, residual and activation fused)
    sums in its own kernel where the module has
    `@kiln_split_k_counters` with a counter for each of its tiles: every
    block stores its partial tile, fences (`membar.gl`) and synchronizes;
    one thread adds 1 to the tile's counter (an atomic add) and tells
    the block through shared memory whether it was the S-th; that block
    (the last of the tile's S to finish) sets the counter back to 0,
    fences, and for each element of the tile loads the S partials and
    runs the sum's body in the same order as the sum kernel would:
    ResNet-50 loses one kernel per split convolution, and the outputs
    are bit for bit those of the separate sum. Refused (the sum stays a
    kernel) where the sum's output shares bytes with anything the tiles
    read, or where the module has no counters or too few.

    With `wgmma` (Hopper, sm_90a), f16 and bf16 contractions (whose
    weight is not 2:4), and int8 and fp8 ones, take a warpgroup tile
    instead of `wide-tile` (8-bit ones with twice the tile's k, the same
    bytes a row, both operands K-major): the
    first of `wgmma-tile` of which they give at least `wide-min-blocks`
    blocks and no later one covers the output with fewer outputs (an N of
    128 in 128x256 tiles would compute twice its outputs; by default
    128x256x64, then 128x128x64, then 128x128x32;
    convolutions, whose staged groups need more registers for their
    indices, only tiles with N up to 128 and steps of 32 k). A tile of
    M x N outputs is M / 64 warpgroups (128 threads each) of 64 rows by N
    columns. Both operands' tiles of a stage share one shared buffer
    (aligned to 1024 bytes by `kiln-gpu-align-workgroup`), each in one of
    wgmma's swizzled layouts: a K-major operand as rows of the step's k
    (64 or 128 bytes) with 64- or 128-byte swizzling, an M- or N-major
    one (read transposed) as atoms of 8 k by 64 elements with 128-byte
    swizzling, so that each phase of 8 threads' 16-byte copies fills
    whole 32-byte sectors and hits distinct banks. `wgmma-stages` such
    buffers (fewer where they would pass 227 KiB) past 48 KiB in all are
    the launch's dynamic shared memory (`gpu.dynamic_shared_memory`,
    viewed as the buffer), else a workgroup attribution. The tiles are
    staged by `cp.async` as for the other 16-bit tiles; each step waits
    for its tile's copies, makes them visible to the async proxy
    (`fence.proxy.async`) and synchronizes, issues per 32 bytes of k one
    `nvvm.wgmma.mma_async` per warpgroup (m64nNk16 for 16-bit operands,
    m64nNk32 for s8 into s32 with `.satfinite` or e4m3 into f32) from
    two matrix descriptors (start address, strides, swizzle mode) into
    f32 or s32 accumulators (a struct of N / 2 registers per thread), waits until
    only this step's products are in flight (`wgmma.wait_group 1`: the
    step before is done), synchronizes, and refills the buffer of the step
    before. The last products are waited for after the loop.

    Other linalg ops are left to the loop kernels of `kiln-gpu-form-kernels`.
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", "false",
           "f16/bf16, int8 and fp8 contractions with at least "
           "wide-min-blocks wgmma-tile tiles use Hopper's warpgroup "
           "products (wgmma; sm_90a only)">,
    Option<"wgmmaTile", "wgmma-tile", "std::string",
           "\"128x256x64,128x128x64,128x128x32\"",
           "The tiles of wgmma contractions, MxNxK[,MxNxK...]: each "
           "contraction takes the first of which it has at least "
           "wide-min-blocks, convolutions the first with N up to 128 and "
           "K 32 (M in warpgroups of 64 rows up to 256, N a multiple of 64 "
           "up to 256, K 32 or 64)">,
    Option<"wgmmaStages", "wgmma-stages", "int64_t", "3",
           "Shared-memory buffers of the wgmma tiles (fewer where they would "
           "pass 227 KiB; past 48 KiB they are dynamic shared memory)">,
    Option<"unrollKLoop", "unroll-k-loop", "bool", "true",
           "Leave ptxas free to unroll the loop over K (false: an "
           "llvm.loop_annotation disables unrolling, which ptxas sees as "
           "`.pragma \"nounroll\"`; int8 tiles are never unrolled)">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 contractions on tensor cores with tf32 inputs (faster, "
           "about 3 decimal digits per product)">,
    Option<"fp8", "fp8", "bool", "false",
           "float8 e4m3 contractions (f32 accumulators) on the fp8 tensor "
           "cores: mma.sync m16n8k32 e4m3 (sm_89 and later, PTX ISA 8.4)">,
    Option<"minSize", "min-size", "int64_t", "16",
           "Contractions with M or N below this stay loop kernels">,
    Option<"vectorBytes", "vector-bytes", "int64_t", "16",
           "Bytes each thread loads at once when staging a tile, where the "
           "operand's layout makes them contiguous and aligned (0: one "
           "element)">,
    Option<"stages", "stages", "int64_t", "3",
           "Shared-memory buffers per operand of the f16/bf16 tiles: with "
           "more than one, the next tiles are copied (cp.async) while the "
           "current one is multiplied">,
    Option<"halfTile", "half-tile", "std::string", "\"64x64x32/32x32\"",
           "The tile of f16/bf16 contractions: MxNxK/WMxWN, the block's "
           "output tile, its step of K, and each warp's tile">,
    Option<"wideTile", "wide-tile", "std::string", "\"128x128x32/64x64\"",
           "The tile of f16/bf16 contractions with at least wide-min-blocks "
           "of them">,
    Option<"wideMinBlocks", "wide-min-blocks", "int64_t", "0",
           "f16/bf16 contractions with at least this many wide-tile blocks "
           "(batches included) take wide-tile (0: never)">,
    Option<"foldPadding", "fold-padding", "bool", "true",
           "Read a zero-padded copy's source in place (zero outside it) "
           "and drop the fill and the copy">,
    Option<"fuseEpilogue", "fuse-epilogue", "bool", "true",
           "Apply the elementwise op right after the contraction that reads "
           "its output element by element (bias, residual, activation) in "
           "the epilogue">,
    Option<"splitSumLoads", "split-sum-loads", "int64_t", "64",
           "Loads of partials each thread of a split product's last block "
           "keeps in flight as it sums the tile (elements of all splits, "
           "loaded before their stores; at least one element a round)">,
    Option<"foldInit", "fold-init", "bool", "true",
           "Fold the fill or bias broadcast that writes the output's "
           "initial value right before the contraction into its epilogue">,
    Option<"testMutation", "test-mutation", "std::string", "\"\"",
           "Plants a bug for the emulator's mutation tests: "
           "swap-b-fragment (tensor-core B registers swapped), "
           "skip-last-k-tile (the last step of K is skipped), "
           "swap-sparse-meta (mma.sp metadata lanes swapped), "
           "swap-wgmma-strides (wgmma descriptors' core-matrix strides "
           "swapped), early-split-sum (the first block of a split tile "
           "to finish sums the partials, not the last), "
           "keep-split-counters (the split counters are not set back to "
           "zero)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnGpuAlignWorkgroup
    : Pass<"kiln-gpu-align-workgroup", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Aligns every shared-memory buffer of a kernel module";
  let description = [{
    Runs inside each `gpu.module` after `convert-gpu-to-nvvm`. Every
    shared-memory global (`addr_space = 3`: the workgroup attributions'
    arrays, and the zero-length array of `gpu.dynamic_shared_memory`) gets
    an alignment of `alignment` bytes unless it has a larger one; in a
    module with wgmma, 1024 bytes, where the swizzled layouts' pattern
    repeats. The NVVM lowering aligns a workgroup buffer to its element
    type only (2 bytes for f16) and dynamic shared memory to 16, and the
    tensor-core tiles' `cp.async` 16-byte copies and `ldmatrix` rows need
    16-byte aligned addresses.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "16",
           "Bytes every shared-memory buffer is aligned to (1024 at least "
           "in modules with wgmma)">,
  ];
}

def KilnGpuReductionsInnermost
    : Pass<"kiln-gpu-reductions-innermost", "::mlir::func::FuncOp"> {
  let summary = "Puts the reduction loops of each reducing generic after its "
                "parallel loops, for the GPU's kernels";
  let description = [{
    Runs after bufferization, before `convert-linalg-to-parallel-loops`.
    A reduction over a dimension that is not the innermost (ReduceMean
    over axis 1 of `[N, S, C]`: loops `(n, s, c)` with `s` reducing)
    would become a parallel loop around a sequential one around another
    parallel loop, which `kiln-gpu-form-kernels` can only run in one
    thread. Each such `linalg.generic` is interchanged (upstream's
    `linalg::interchangeGenericOp`) so that its parallel loops come first
    in their order, then its reductions in theirs: one parallel loop over
    the outputs around the reduction, which gets a thread or a block per
    output. The result is the same computation; only the loop order
    changes.

    ```mlir
    // iterator_types = ["parallel", "reduction", "parallel"]
    // becomes
    // iterator_types = ["parallel", "parallel", "reduction"]
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def KilnExpandFloat8 : Pass<"kiln-expand-float8"> {
  let summary = "Rewrites conversions to and from float8 types as integer "
                "arithmetic on their bits";
  let description = [{
    LLVM has no float8 types (they are stored as i8), so `arith.truncf` to
    and `arith.extf` from f8E4M3FN, f8E4M3FNUZ, f8E5M2 and f8E5M2FNUZ
    (scalars or vectors) become integer and f32 arithmetic on the bits:
    rounding to nearest even, subnormals included; a magnitude past the
    largest finite value after rounding becomes infinity (E5M2) or NaN
    (the others); NaN stays NaN; the FNUZ types have no negative zero and
    one NaN (0x80). This is ONNX's Cast without saturation; its saturating
    Cast clamps to the largest finite value first (`convert-kiln-to-linalg`).
    Other float types go through f32. Runs in both code generators before
    arith reaches LLVM.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def KilnGpuSparseWeights : Pass<"kiln-gpu-sparse-weights", "::mlir::ModuleOp"> {
  let summary = "Compresses the 2:4 weights of half-precision and int8 "
                "products in the layout of the sparse tensor cores (mma.sp)";
  let description = [{
    Runs first in the GPU code generation, on tensors. A contraction
    `out[..., m, n] += a[..., m, k] * w[k, n]` (or `w[n, k]`; the weight
    possibly behind a 2-D transpose) over f16, bf16 or int8 (signed bytes
    into i32) that `kiln-sparsify` marked `kiln.sparsity = "2:4"`, whose
    weight is a constant with at most two non-zeros in each group of four
    consecutive `k` of a column `n`, gets the weight compressed for
    `mma.sp.sync` with the weight as the A operand (rows `n`, K rounded up
    to Kp, a multiple of S, the k of one mma.sp: m16n8k32 for 16-bit
    values, S = 32; m16n8k64 for int8, S = 64):

    * `kiln_sparse_values`, `[N][Kp / 2]`: per row, the two kept values of
      each group of four `k`, in `k` order (zeros where a group has fewer
      than two non-zeros);
    * `kiln_sparse_meta`, `[ceil(N / 16)][Kp / S][W]` i32: per 16 rows and
      S `k`, the metadata registers of one mma.sp by lane. m16n8k32
      (W = 16, sparsity selector 0): lane `4g + h`'s bits `16r + 4c` to
      `16r + 4c + 3` hold the positions within their group of the kept
      values of row `g + 8r`, group `4h + c` (the first in the low two
      bits; increasing). m16n8k64 (W = 32, every lane): lane `4g + t`'s
      bits `4q` to `4q + 3` hold those of row `g + 8 (t % 2)`, group
      `8 (t / 2) + q`.

    56.25% of the dense weight bytes (int8: 62.5%). The weight becomes a private global
    `kiln_sparse_weight` whose attributes name the compressed globals,
    read by the contraction through `bufferization.to_tensor`, so the mark
    survives the fusions that rebuild the contraction; `kiln-gpu-split-k`
    leaves such a product whole, and `kiln-gpu-contractions` builds its
    sparse kernel. The mark is removed from every contraction; the
    module's `kiln.sparse_kernels` gets, per marked contraction, its node
    name, `kernel` (sparse or dense), the reason for dense (float32, not
    a constant weight, not 2:4 after rounding), and the
    weight's bytes dense and compressed (`kiln-compile --report`).

    With `convolutions` (a second run, after `kiln-gpu-channels-last`) it
    takes the marked 2-D convolutions instead (`kiln-sparsify` marks those
    2:4 along their input channels at each window tap, as NVIDIA's ASP
    prunes them): a `linalg.conv_2d_nhwc_fhwc` whose constant weight is
    `[F, KH, KW, C]` in f16 or bf16 is the product above with N = F and
    K = (kh, kw, c), the order in which `kiln-gpu-contractions` walks the
    implicit GEMM's reduction, so it is compressed the same way and its
    kernel reads the input in place as before; one left NCHW (channels
    not in whole 16-byte runs, or `--gpu-channels-last=false`) walks K as
    (c, kh, kw), where the groups are not consecutive, and stays dense
    with that reason.
  }];
  let options = [
    Option<"convolutions", "convolutions", "bool", "false",
           "Take the marked 2-D convolutions (after kiln-gpu-channels-last) "
           "instead of the other products">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def KilnGpuSplitK : Pass<"kiln-gpu-split-k", "::mlir::ModuleOp"> {
  let summary = "Splits the reduction of contractions too small to fill "
                "the GPU into partial products and a sum";
  let description = [{
    Runs on tensors, before bufferization. `kiln-gpu-contractions` gives
    each block one 64x64 output tile and walks all of K in it, so a
    contraction with a small output and a long reduction runs few blocks
    on a GPU of many multiprocessors: ResNet-50's 3x3 convolutions on 7x7
    positions (M 512, N 49, K 4608) run 8 blocks on an H100's 132, at
    under 1% of its peak. Each contraction that kernel tiles, with an f32
    output, M and N of at least `min-size` and fewer than `target-blocks`
    blocks, has its longest reduction dim (extent E: a matrix product's K,
    a convolution's input channels) split into S x E/S: S the least
    divisor of E (at most `max-splits`) that gives at least
    `target-blocks` blocks, else the greatest, keeping at least `min-k`
    reduction steps per split (no split where none does). The inputs are
    expanded (`tensor.expand_shape`, a view; a zero-padded input is
    expanded before its padding, so the tile still reads its source in
    place), the contraction computes S partial results into a zero-filled
    [S, ...] tensor (S a batch dim of the tiled kernel: a block per tile
    and split), and an elementwise generic adds the S partials to the
    contraction's initial value (its bias):

    ```mlir
    %y = linalg.matmul ins(%a, %b : tensor<128x3072xf32>, tensor<3072x768xf32>)
                       outs(%init : tensor<128x768xf32>)
    // becomes, with S = 4
    %a4 = tensor.expand_shape %a [[0], [1, 2]] : ... into tensor<128x4x768xf32>
    %b4 = tensor.expand_shape %b [[0, 1], [2]] : ... into tensor<4x768x768xf32>
    %p = linalg.generic {(m, n, k, s): a4[m, s, k], b4[s, k, n] -> p[s, m, n]}
           ins(%a4, %b4) outs(%zeros : tensor<4x128x768xf32>)
    %y = linalg.generic {(m, n): p[0, m, n], p[1, m, n], p[2, m, n],
           p[3, m, n] -> init[m, n]} (init + p0 + p1 + p2 + p3)
    ```

    The sum is an elementwise op, so `kiln-fuse-elementwise` (run again
    after this pass) fuses it with the contraction's epilogue (bias,
    residual add, activation). Deterministic: every partial and the sum
    are computed in a fixed order.

    With `last-block-sum` (the default), the module also gets one
    zero-initialized global of i32 counters, `@kiln_split_k_counters`,
    one per output tile of the largest split (tiles of 16x16 at the
    least): `kiln-gpu-contractions` then runs the sum in the split
    kernel itself, in the last block of each tile to finish (see
    there), so that a split costs no second kernel. The counters go back
    to zero as each tile's sum starts, so that every split kernel, and
    every run, finds them zero; kernels on one stream share them.
    kiln-compile's pipeline sets it only with `--gpu-split-k-last-block`:
    on an H200, ResNet-50 in fp16 at batch 1 ran in 0.50 ms with the sum
    kernels and in 0.56 ms with the sums in the last blocks (31 fewer
    kernels), each last block reading all the tile's partials alone.
  }];
  let options = [
    Option<"targetBlocks", "target-blocks", "int64_t", /*default=*/"132",
           "Split contractions with fewer blocks than this (the GPU's "
           "multiprocessors); 0 splits none">,
    Option<"minK", "min-k", "int64_t", /*default=*/"256",
           "Reduction steps each split keeps at least">,
    Option<"keepAttention", "keep-attention", "bool", /*default=*/"false",
           "Split no product of softmax probabilities (an attention's "
           "context, which kiln-gpu-flash-attention fuses whole)">,
    Option<"maxSplits", "max-splits", "int64_t", /*default=*/"32",
           "The most splits of one contraction">,
    Option<"minSize", "min-size", "int64_t", /*default=*/"16",
           "M and N that kiln-gpu-contractions tiles at least (its "
           "min-size)">,
    Option<"lastBlockSum", "last-block-sum", "bool", /*default=*/"true",
           "Give the module the counters with which kiln-gpu-contractions "
           "sums the partials in the last block of each tile to finish "
           "(false: the sum is a kernel of its own)">,
    Option<"testMutation", "test-mutation", "std::string", /*default=*/"",
           "Plants a bug for the emulator's mutation tests: "
           "skip-last-split (the sum leaves out the last partial)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnGpuFoldDequantize
    : Pass<"kiln-gpu-fold-dequantize", "::mlir::func::FuncOp"> {
  let summary = "Makes float8 contractions of dequantized operands "
                "contractions of the float8 values";
  let description = [{
    Runs on tensors, in the GPU pipeline of targets with float8 tensor
    cores (sm_89 and later; `kiln-compile --precision=fp8`). A model
    quantized to float8 (`kiln-quantize{type=fp8}`) multiplies, in f32,
    operands that a DequantizeLinear made: `(extf(q) - extf(zp)) * s` of
    float8 values `q` with a zero point of zero. Where both operands of a
    contraction (a MatMul's generic, a 2-D convolution) are such, each
    read directly or through a pad with zero (a convolution's), and the
    contraction starts from zero, it becomes the same contraction of the
    float8 values themselves, extended to f32 in its body (what the fp8
    tensor cores compute: exact products, f32 sums), followed by an
    elementwise product with both scales, each indexed by the output
    dims it depends on (the activation's per tensor, the weight's per
    output channel). Scales that depend on a reduction dim leave the
    contraction as it is.

    An operand reached through transposes (a channels-last
    convolution's input and weights) is not left for the tiles to
    gather: a float8 constant's bytes are reordered at compile time, and
    the QuantizeLinear that made an activation is copied to write its
    bytes in the transposed layout (its inputs read through the
    permutation); pads before a transpose move after it. Each product
    then reads its operands in the order its loops walk them (16-byte
    `cp.async` runs of channels). A QuantizeLinear's bytes then stand
    for it: its other users (the DequantizeLinear of a residual) read
    them back through an elementwise bitcast, so the tensor kept in
    memory is one byte an element.

    `kiln-gpu-contractions{fp8=true}` then computes the float8
    contraction with `mma.sync` m16n8k32 e4m3, the scaling as its
    epilogue.
  }];
}

def KilnGpuFlashAttention
    : Pass<"kiln-gpu-flash-attention", "::mlir::func::FuncOp"> {
  let summary = "Runs each bufferized attention with f16/bf16 Q, K and V as "
                "one flash-attention kernel";
  let description = [{
    Runs after bufferization and memory planning, before
    `kiln-gpu-contractions`. The Attention lowering writes
    softmax(Q K^T * scale + mask) V as a zero-filled contraction into the
    scores S, elementwise ops in place on S (scale, softcap, masks; their
    other inputs read at each score's indices), the softmax (row maximum,
    exp of the difference, row sum, division rounded to the half type into
    the probabilities P) and a zero-filled contraction of P with V into O,
    perhaps followed by an elementwise op on O (the output's rounding).
    Where S, the row buffers and P are used by nothing else, Q, K and V are
    f16 or bf16, and the head sizes are multiples of 16 (Q, K) and 8 (V)
    up to 128, the chain becomes one `gpu.launch` (FlashAttention-2's
    order of work):

    - a block of 4 warps owns 64 query rows of one batch index, each warp
      16 rows whose Q fragments stay in registers;
    - the block walks the keys 64 at a time, K and V (transposed) staged
      in shared memory; each warp computes its 16x64 scores with
      `mma.sync` m16n8k16 (f32 accumulators), applies the elementwise
      ops' bodies to each score (-inf past the last key), updates each
      row's running maximum and sum (the 4 threads of a quad hold a row:
      shuffles combine them), rescales its output accumulators by
      exp(m_old - m_new), and multiplies exp(s - m), rounded to the half
      type, by V: two 8-key score tiles are the A fragment of one
      m16n8k16 step, so the probabilities stay in registers;
    - each row is divided by its sum and stored, through the elementwise
      op after the chain when there is one.

    S never reaches memory. A row whose scores are all -inf gives NaN, as
    the unfused softmax does. The probabilities are rounded to the half
    type before they are normalized rather than after (FlashAttention
    does the same), so the outputs differ from the unfused chain's by
    about one rounding of P. An attention whose output may share memory
    with an input (kiln-plan-memory without `attention-inputs-live`)
    stays unfused, with a remark, as does one with other head sizes.

    `test-mutation=skip-rescale` plants a bug for the emulator's tests:
    the output accumulators are not rescaled when the maximum grows.
  }];
  let options = [
    Option<"testMutation", "test-mutation", "std::string", "\"\"",
           "Plant a known bug (skip-rescale), for the emulator tests">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def KilnGpuKMajorWeights
    : Pass<"kiln-gpu-k-major-weights", "::mlir::func::FuncOp"> {
  let summary = "Stores the 8-bit constant operands of GPU contractions "
                "with their reduction dims innermost";
  let description = [{
    Runs on tensors, in the GPU pipeline. The 8-bit tensor-core tiles of
    `kiln-gpu-contractions` (`mma.sync` m16n8k32 and, on sm_90a,
    `wgmma` k32; s8 or e4m3) take both operands K-major: PTX has no
    transposing `ldmatrix` or wgmma layout for 8-bit elements. An operand
    whose innermost index is not a reduction dim (a MatMul's [K, N]
    weight) is then transposed as it is staged, one byte at a time, with
    no `cp.async`. For each linalg.generic with a reduction loop, each
    input that is a static 8-bit constant read through a projected
    permutation with a reduction dim not innermost is replaced by a copy
    of its bytes reordered so that the dims of its reduction loops come
    last (each group in its order), read through the map's results in the
    same order: the same element at every loop index, whatever the body.
    A constant read so by several generics is reordered once; one whose
    reduction dims are innermost already, a splat, or a tensor that is not
    a constant is left as it is.
  }];
}

def KilnGpuFoldPads : Pass<"kiln-gpu-fold-pads", "::mlir::func::FuncOp"> {
  let summary = "Makes GPU loop kernels read a padded input's source in "
                "place of the padded tensor";
  let description = [{
    Runs on tensors, before bufferization. A padded input (a depthwise
    convolution's, a pooling window's) would become a fill of a buffer
    with the padding value and a copy of the source into its interior:
    two kernels and a buffer only the consumer reads. Each linalg op
    that reads a `tensor.pad` (static padding, a constant padding value,
    the op its only user) becomes a generic that reads the pad's source
    inside its body instead: at the index less the low padding, clamped
    into the source, and the padding value selected where the index
    falls outside it. The pad goes, and the memory plan sees the source
    live until the consumer and no padded buffer.

    ```mlir
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { yield %zero }
    %y = linalg.generic ins(%p, %w ...) { ^bb0(%in, %wt, %acc): ... }
    // becomes
    %y = linalg.generic ins(%w ...) {
      ^bb0(%wt, %acc):
        %h = affine.apply (linalg.index 2, linalg.index 4) - 1
        %ok = arith.cmpi ult, %h, 16  (and so on per padded dim)
        %in = select(%ok, tensor.extract %x[..., select(%ok, %h, 0), ...], %zero)
        ...
    ```

    Ops that `kiln-gpu-contractions` makes tiled GEMM kernels keep their
    pads: those kernels read a zero-padded input through in their own
    tile loads, which this body would hide from them.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnGpuVectorize : Pass<"kiln-gpu-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Gives each thread of an elementwise GPU kernel several "
                "consecutive elements, read and written in 16-byte accesses";
  let description = [{
    Runs after `kiln-gpu-contractions`, before
    `convert-linalg-to-parallel-loops`. A top-level linalg op of the graph
    function (generic, map, copy, fill) with only parallel loops and static
    sizes is vectorized along its innermost loop where that loop walks the
    innermost dimension of every operand that it indexes (the others, a
    broadcast, are read once per thread):

    * W is `max-bytes` divided by the widest element size (4 f32 or 8 f16
      for 16 bytes); the innermost loop's size must be a multiple of W;
    * each operand it walks has unit innermost stride, and its offset and
      outer strides are static multiples of W, so every group of W
      elements starts W-aligned (buffers themselves are 16-byte aligned:
      the memory plan aligns to 64 bytes, weights to 256, and the runtime
      requires it of a GPU module's inputs and outputs);
    * the body is one the linalg vectorizer takes, and does not read its
      indices (`linalg.index`: index vectors do not lower in kernels).

    The op is tiled by 1x..xW into an `scf.parallel` (upstream's linalg
    tiling; `kiln-gpu-form-kernels` gives each iteration a thread), the
    tile is vectorized (upstream's vectorizer), and its transfers become
    `vector.load` and `vector.store` on the operands carrying the alignment
    of W elements, which the NVPTX backend emits as `ld.global.v4` and
    `st.global.v4` (for 16 bytes). Ops that do not qualify keep one element
    per thread.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", "16",
           "Bytes per access for the widest operand (0: do nothing)">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnGpuFormKernels : Pass<"kiln-gpu-form-kernels", "::mlir::func::FuncOp"> {
  let summary = "Puts every computation of a bufferized graph function into "
                "a gpu.launch";
  let description = [{
    Runs after bufferization, memory planning and
    `convert-linalg-to-parallel-loops`, when the graph function is a
    sequence of loop nests over views of its arguments, the arena and the
    weights. Each op of the function body is either host bookkeeping that
    stays (constants, `memref.get_global`, views whose operands are host
    values) or work for the GPU:

    * a top-level `scf.parallel` with constant bounds becomes one
      `gpu.launch` with one thread per iteration: its iteration space is
      linearized, split into blocks of `block-size` threads, guarded by a
      bounds check and delinearized back into the loop's induction
      variables;
    * a parallel loop around a nest of sequential loops that accumulate
      into one element per parallel iteration (what a reducing
      `linalg.generic` becomes: sums, maxima, means, the rows of softmax and
      layer normalization) with at least `reduction-min-size` elements per
      output becomes a launch of one block per output: each thread folds a
      strided share of the elements (consecutive threads read consecutive
      elements), the block combines the partial values in shared memory in
      a tree with a barrier after each step down to 32 values, which warp 0
      combines with butterfly shuffles (32-bit types; others finish the
      tree), and thread 0 combines the result into the output;
    * everything else (loops that carry values, `scf.if` on loaded data, a
      value that a later op uses) becomes a launch of one thread that runs
      the ops in order; ops that define a value used further down are
      grouped with everything up to that use, so no value computed on the
      device is needed on the host.

    With `row-groups`, consecutive loops whose accesses to every buffer
    they write are indexed by their leading (row) dimensions, and whose
    buffers share no arena bytes otherwise, are merged: around a reduction
    that gets a block per output, the loops that share its rows (same
    leading bounds) become one kernel of a block per row that runs them
    one after another with a barrier between (a LayerNorm's or a
    softmax's passes: one kernel); other runs of loops over one and the
    same space become one kernel of a thread per point that runs them
    one after another (a bias broadcast, a short window accumulation into
    it, an activation). Before grouping, a loop that reads nothing an
    earlier op writes (a fill, a bias broadcast from the weights, a
    transpose of a graph input) moves down to right before the first op
    that touches what it writes, past work that touches none of it nor
    writes what it reads (bufferization may leave a depthwise
    convolution's bias broadcast before the convolution that makes its
    input); and a loop whose bounds permute those of the loop before it,
    reading what that loop writes through a permutation of its induction
    variables (an activation that writes channels-last for the
    convolution after it), has its dimensions reordered to read it at the
    same point, so that the two share a kernel, the store transposed.
    MobileNetV2 went from 80 kernels to 56 for sm_90 (ONNX Runtime's
    graph has 56 nodes), ResNet-50 from 60 to 58 (at commit 070e0fb, and
    after it).

    Nested `scf.parallel` loops inside a launch become `scf.for` nests;
    `memref.alloc` of a static shape inside one becomes a per-thread
    `memref.alloca`; `memref.dealloc` is dropped (the arena and the
    weights are owned by the runtime). Every launch names the kernel it
    will be outlined to (`k<N>_<op>`, in module `kiln_kernels`), so
    `gpu-kernel-outlining` puts all kernels in one `gpu.module`.

    The function records what each kernel computes and moves, counted on
    the loop nests before they become kernels (see
    `kiln/Codegen/CostModel.h`), as `kiln.kernel_costs = {k0 = array<i64:
    FLOPS, BYTES>, ...}` (-1: not known statically); the GPU emitter puts
    them in the `.kmod` for the profiler's roofline.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c300) step (%c1, %c1) {
      ... memref.store %v, %out[%i, %j]
    }
    // becomes
    gpu.launch blocks(%bx, ...) in (%gx = %c3, ...)
               threads(%tx, ...) in (%tx_n = %c256, ...)
               module(@kiln_kernels) function(@k0_store) {
      %id = bx * 256 + tx;  scf.if (%id < 600) { i = id / 300; j = id % 300 ... }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block of the launches of parallel loops (a "
           "multiple of 32)">,
    Option<"reductionMinSize", "reduction-min-size", "int64_t", "32",
           "Reductions of at least this many elements per output (and at "
           "most 65536 outputs) get a block per output (0: never)">,
    Option<"rowGroupsOption", "row-groups", "bool", "true",
           "Runs a reduction that gets a block per output together with the "
           "loops before and after it that share its rows as one kernel of "
           "a block per row, and consecutive loops over one space that each "
           "write only their own point as one kernel of a thread per point">,
    Option<"testMutation", "test-mutation", "std::string", "\"\"",
           "Plants a bug for the emulator's mutation tests: drop-barrier "
           "(the barrier after the partial sums), short-reduction (the "
           "last element of each reduction is skipped), shuffle-up (warp "
           "shuffles read the wrong lane)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnNvvmToEmulator : Pass<"kiln-nvvm-to-emulator", "::mlir::ModuleOp"> {
  let summary = "Turns kernels in the LLVM and NVVM dialects into host code "
                "for the kernel emulator";
  let description = [{
    Runs on a module holding the body of a `gpu.module` after
    `convert-gpu-to-nvvm`: the same `llvm.func` kernels that become PTX.
    Each NVVM operation the kernels use is replaced by a call through the
    emulator's hook table, the global `kiln_emu_hooks` that the runtime
    fills when it loads the code: special registers (thread, block, grid
    indices and sizes, lane id) call hook 0 with a register number,
    `nvvm.barrier0` calls hook 1, `nvvm.shfl.sync` (32-bit values) hook 2,
    and `nvvm.mma.sync` (m16n8k8 tf32, m16n8k16 f16/bf16; row.col; f32
    accumulators) hook 3 with its kind and two stack arrays: the lane's A,
    B and C registers as 32-bit words, and its four D registers. Every
    pointer becomes a pointer of the
    default address space; shared-memory globals become thread-local, so
    that blocks run on different host threads do not share them.
    libdevice calls (`__nv_expf`) become calls of the C library function
    of the same name (`expf`). An NVVM operation the emulator does not
    implement is an error naming it.

    ```mlir
    %0 = nvvm.read.ptx.sreg.tid.x : i32
    // becomes
    %hooks = llvm.mlir.addressof @kiln_emu_hooks : !llvm.ptr
    %fn = llvm.load %hooks : !llvm.ptr -> !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %0 = llvm.call %fn(%c0) : !llvm.ptr, (i32) -> i32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KilnProfileRegions : Pass<"kiln-profile-regions", "::mlir::ModuleOp"> {
  let summary = "Marks the start of every top-level computation of @main for "
                "the runtime's profiler";
  let description = [{
    For `kiln-compile --profile` on the CPU: before each top-level op of the
    graph function `@main` that computes (a linalg op, a loop nest, a copy;
    not constants, views or allocations) inserts
    `func.call @kiln_profile_mark(%i)` with the region's number, and one
    more mark before the return. The module records the region names
    (`kiln.profile_regions`: the ONNX node and the op, numbered from the
    second computation of one kind of a node on, as in
    `Conv_3 (scf.forall #2)`) for the `.kmod`; the
    runtime times each region from its mark to the next. Runs after
    bufferization, before the ops become loops.

    For the profiler's roofline it also records what each region computes
    and moves (`kiln.profile_flops`, `kiln.profile_bytes`, one entry per
    region, -1 where not known statically): arithmetic ops on data times
    the static trip counts and iteration domains around them (a
    multiply-add and each step of a contraction count two; casts,
    constants and index arithmetic nothing), and the size of every buffer
    from outside the region that it reads or writes, once each.

    ```mlir
    linalg.matmul ins(%a, %b : ...) outs(%c : ...)    // loc("MatMul_3")
    // becomes
    %c0_i32 = arith.constant 0 : i32
    func.call @kiln_profile_mark(%c0_i32) : (i32) -> ()
    linalg.matmul ins(%a, %b : ...) outs(%c : ...)
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
