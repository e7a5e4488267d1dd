"""Where this model departs from torchao, and what no roofline here captures.

Data, not prose in a page: the README summarises it and the site's Methodology page
renders every entry (``site_gen/templates/methodology.md.j2``), so both say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.specs import DEFAULT_LAUNCH_OVERHEAD_S
from roofline.units import microseconds

_LAUNCH = microseconds(DEFAULT_LAUNCH_OVERHEAD_S)


@dataclass(frozen=True)
class Note:
    """One deviation or limitation: a title, the reason, and where it comes from."""

    title: str
    reason: str
    reference: str = ""


#: Differences from the 2025-11 reference (torchao roofline utils), each with its reason.
DEVIATIONS: tuple[Note, ...] = (
    Note(
        "NVFP4 inference quantize kernels follow torchao 0.18",
        "The reference modelled every nvfp4* recipe as one cast writing an extra 4-byte "
        "scale. torchao 0.18 models dynamic nvfp4 as an amax read plus the cast (summed into "
        "one kernel, one launch floor) and nvfp4_static / nvfp4_no_global_scale as one cast "
        "without the extra bytes. torchao corrected it; we follow the correction.",
        "torchao 0.18 roofline_utils.get_inference_tensor_memory_traffic_ovhd_s",
    ),
    Note(
        "Inference fusion modelling",
        "With --fusion in inference the bf16 baseline pays an activation kernel that reads "
        "and writes M × K in bf16 (column r_bf16_ovhd_s), which the low-precision path fuses "
        "into its quantize kernel. The reference had no inference fusion; torchao 0.18 does.",
        "torchao 0.18 get_inference_bf16_activation_mem_sympy",
    ),
    Note(
        "Blockwise fp8 training",
        "Added from torchao 0.18: six quantize kernels (1x128 activation and gradient "
        "scales, 128x128 weight scales), three fp8 GEMMs whose scale reads are ignored; K and "
        "N must be multiples of 128.",
        "torchao 0.18 get_blockwise_float8_mem_sympy",
    ),
    Note(
        "B200 bandwidth 7.672 TB/s",
        "The reference used the marketed 8.0 TB/s; CUDA 13 reports a 7680-bit bus at "
        "3.996 GHz (x2 for DDR): 7680 / 8 B x 3.996e9 x 2 = 7.672e12 B/s, as torchao now uses.",
        "pytorch/ao PR #4002",
    ),
    Note(
        "RTX 5090 bandwidth corrected and efficiencies assumed",
        "The reference's 1.792e15 B/s is 1000× too large (1.792 TB/s is right) and its entry "
        "has no efficiency fractions, so the reference raised KeyError. The bundled entry "
        "uses 1.792e12 and H100's measured fractions, flagged as assumed.",
        "NVIDIA RTX Blackwell GPU architecture whitepaper, appendix A",
    ),
    Note(
        "Vendor figures where torchao's differ",
        "The bundled database carries the vendors' figures; torchao's stay in the parity "
        "spec file (roofline/data/torchao018_specs.toml). GB200: 2.5 / 5 / 10 PFLOPS dense per "
        "GPU from the GB200 NVL72 table divided by 72 (torchao uses HGX B200's 2.25 / 4.5 / "
        "9). B300: 7.7 TB/s from the HGX B300 column (torchao: 8.0), GEMM efficiency 0.786 "
        "from public measured matmul throughput (torchao: 0.82) and memory 0.873 (torchao's "
        "measured 6.72 TB/s against 7.7). MI300X, MI325X, MI355X and A100: GEMM efficiency "
        "from public measured matmul throughput (0.511, 0.600, 0.622, 0.869) instead of "
        "H100's 0.78.",
        "NVIDIA Blackwell and Blackwell Ultra datasheets; ml-engineering MAMF table",
    ),
    Note(
        "Entries without efficiencies default to H100's, flagged assumed",
        "Any spec entry lacking pct_achievable_gemm_tops / pct_achievable_mem_bw gets "
        "torchao's H100 measurement (0.78 / 0.92) and is labelled 'assumed' wherever shown, "
        "instead of failing.",
    ),
    Note(
        "Recipe names are checked",
        "The reference's inference path took any name starting with mxfp8 / mxfp4 / nvfp4. "
        "Here a name must be registered (mxfp4 is an alias of mxfp4_cutlass); an unknown "
        "name is an error that lists the valid ones.",
    ),
    Note(
        "Launch floor per kernel",
        "Each kernel (GEMM or cast) takes at least the kernel launch overhead of the spec "
        f"file ({_LAUNCH} by default), as torchao does; the model applies it per kernel, "
        "including zero-traffic reduction stages.",
    ),
    Note(
        "Grouped (mixture-of-experts) layers in torchao's style",
        "torchao 0.18's roofline has no grouped GEMMs; its MoE script "
        "(benchmarks/prototype/moe_training/mxfp8/roofline_unified.py) sums compute-only "
        "grouped GEMMs and bytes-only quantize and scale-rearrangement kernels. Atlas times "
        "the grouped layer like its dense one instead (each GEMM the longest of compute, "
        "memory and the launch floor, with G x K x N weight bytes or grad_weight output; 3D "
        "weight casts over G x K x N; one rearrangement kernel per block-scaled operand, one "
        "byte read and written per scale), which makes a layer of one group the dense layer.",
        "roofline/model/grouped.py; torchao "
        "benchmarks/prototype/moe_training/mxfp8/roofline_unified.py",
    ),
    Note(
        "NVFP4 training added",
        "torchao 0.18's roofline models NVFP4 for inference only. The nvfp4 training recipe "
        "follows torchao's prototype NVFP4 training kernels (and Transformer Engine's "
        "NVFP4BlockScaling): three fp4 GEMMs; per activation an RHT + amax pass and one cast "
        "writing the row copy and the Hadamard-transformed column copy (stochastic rounding "
        "for gradients); for the weight an amax pass and one 16 x 16 block cast writing "
        "both layouts.",
        "torchao prototype nvfp4_training; roofline/recipes/kernels.py nvfp4_training",
    ),
)

#: What the roofline does not capture (shown beside every estimate's method).
LIMITATIONS: tuple[Note, ...] = (
    Note(
        "Small shapes are optimistic by about 2×",
        "Below roughly 1k in M, K or N, real kernels reach far less than the achievable "
        "fractions (tile quantization, wave quantization, launch and scheduling overheads "
        f"beyond one {_LAUNCH} floor per kernel): the model undercounts GEMM time by around "
        "2×. Measured speedups there are typically about half of the modelled ones, or below "
        "1 where the model says slightly above. This is torchao's model; the calibrated "
        "model's fixed latencies address it (see the Validation page for how well).",
        "torchao roofline_utils comment",
    ),
    Note(
        "No activation checkpointing",
        "Training counts one forward and one backward; recomputing the forward pass would "
        "add casts and a GEMM that the model does not count.",
    ),
    Note(
        "No float8 all-gather",
        "Communication is out of scope: no distributed-training traffic. Distributed training "
        "that all-gathers weights in float8 saves communication the model does not see; the "
        "weight casts are modelled as local kernels every step.",
    ),
    Note(
        "One layer in isolation",
        "No overlap between kernels, no caches shared between them, no communication, no "
        "optimizer step.",
    ),
    Note(
        "Dense peaks",
        "All peaks are dense (no 2:4 sparsity) with the accumulate dtype each spec records.",
    ),
    Note(
        "Efficiencies are per GPU constants",
        "The achievable fractions of peak are a single fraction per GPU that does not vary "
        "with shape, measured (torchao on H100) or, for most GPUs, copied from that "
        "measurement (labelled assumed). This is torchao's model; the calibrated model has "
        "one per operand format and cast-kernel kind.",
    ),
    Note(
        "Hypothetical recipes",
        "Where a GPU lacks a format natively (e.g. MXFP8 on Hopper), estimates use the peak "
        "of the operand format and are labelled hypothetical; a recipe needing a peak the "
        "GPU lacks entirely is shown as not computable.",
    ),
    Note(
        "fp4 GEMM scale reads counted at fp4 width",
        "For fp4 GEMMs torchao multiplies the one-byte block scales by the fp4 element size "
        "(0.5 B), undercounting scale traffic by 2×. Kept for parity with torchao; the missing "
        "bytes are 1/32 (MX) or 1/16 (NV) of the fp4 operand bytes.",
        "torchao roofline_utils.get_individual_gemm_time_sympy",
    ),
)

#: The calibrated model (roofline.calibration): how each of its terms differs from
#: torchao's, how its values are fitted, and what a GPU without data gets.
CALIBRATED: tuple[Note, ...] = (
    Note(
        "GEMM efficiency per format and scaling path",
        "A GEMM's compute time divides its FLOPs by the peak of its operand format times "
        "the efficiency of that format and scaling path: bf16, fp8 with per-tensor or "
        "per-row scales, block-scaled fp8 (MX, 1x128 blocks) and fp4. Where the spec "
        "database has a measured matmul throughput (MAMF), the bf16 and fp8 efficiencies "
        "are that throughput over the peak. torchao's model uses one efficiency for every "
        "format.",
        "roofline/model/calibrated.py; measured_matmul_tflops in the spec database",
    ),
    Note(
        "Block-scaled and fp4 efficiency fitted on B200",
        "No public matmul-throughput sweep covers block-scaled fp8 or fp4 GEMMs, so their "
        "efficiencies are fitted on B200 fit sets whose large shapes are dominated by the "
        "GEMM (the stored values below name them); other GPUs scale them by ratio.",
        "roofline/data/calibration.toml",
    ),
    Note(
        "Fixed latencies fitted on small shapes",
        "Instead of torchao's launch floor (the longest of compute, memory and the floor), "
        "every GEMM adds a fixed latency to the longer of its compute and memory times, "
        "and every cast or pointwise kernel launch adds one too. There is one latency per "
        "kernel kind (bf16 and fp8 GEMMs, block-scaled fp4 GEMMs, casts, amax reductions, "
        "and the grouped and NVFP4 training kernels), model-wide but for the cast launch, "
        "which is per GPU (a tiny cast launches sooner on GeForce and RTX PRO Blackwell than "
        "on B200 or H100) and falls back to the GPU's family, then to every GPU. Each is "
        "pinned by "
        "device-timed measurements of that kernel alone at small sizes (GEMMs at M = 1 to "
        "16, tiny quantize kernels, amax kernels) as well as by the small shapes of the "
        "layer-level fit sets. They make the achieved fraction of peak fall at small "
        "shapes, where torchao's model is optimistic. Libraries differ here: vLLM's "
        "CUTLASS GEMMs start about 2.5 us sooner than torch._scaled_mm, which torchao's "
        "recipes call and the fit follows.",
        "roofline/data/calibration.toml",
    ),
    Note(
        "GEMM tiles run in waves",
        "A dense GEMM's compute runs at its format's efficiency times a wave efficiency: "
        "the output splits into 256 x 128 tiles (the tile of NVIDIA's wave-quantization "
        "example, assumed for every library; a GEMM of fewer than 256 rows runs tiles no "
        "taller than itself, as libraries pick small-M tiles for skinny GEMMs), the GPU "
        "runs sm_count of them at a time, and a partly filled tile or last wave costs a "
        "full one. With fewer tiles than SMs the "
        "libraries split K over the idle SMs, so there is no loss. Real libraries pick "
        "tiles per shape and some use stream-K, which smooths the steps this rule "
        "predicts; a GPU without sm_count is timed without waves. A grouped GEMM runs at "
        "its measured rate factor times the rate of the layer's dense GEMM, waves "
        "included (how its groups fill the SMs is in the measured factor).",
        "roofline/model/calibrated.py wave_efficiency",
    ),
    Note(
        "The output store: hidden on CUDA, exposed on ROCm",
        "A GEMM writes its bf16 output tile by tile. A persistent warp-specialized kernel "
        "(CUTLASS 3 and cuBLAS on Hopper and Blackwell) stores one tile while it computes "
        "the next, so the store is part of the memory time the compute hides; a kernel that "
        "stores each tile after its last K step adds the store to the compute. The share "
        "hidden is a fitted fraction per GPU in [0, 1]: the MI300X, MI325X and MI355X fits "
        "(aiter's and hipBLASLt's kernels at M = 8192 with K from 256 to 8192) put it near "
        "0, and the other ROCm GPUs take their family's. No CUDA GPU has one fitted: they "
        "keep 1, torchao's roofline. It matters for large outputs at shallow K, where "
        "writing M x N bf16 values takes as long as a sizeable share of the math.",
        "roofline/model/calibrated.py calibrated_gemm_time; "
        "https://pytorch.org/blog/cutlass-ping-pong-gemm-kernel/",
    ),
    Note(
        "A small GEMM's K steps run one after another",
        "Each output tile walks K in steps (128 deep here), one after another. A large GEMM "
        "has enough tiles to fill the GPU and hides each step's latency behind the others; "
        "a small one (M = 1 to 128) may have fewer tiles than compute units, and unless the "
        "kernel splits K over the idle ones, the chain of steps paces it. So a dense GEMM's "
        "compute takes at least t_gemm,k x ceil(K / 128). Fitted per GPU on ROCm, where "
        "aiter's CK kernels at M = 16 take 10.8 us at K = 7168 and 3.2 us at K = 256 for "
        "the same weight bytes on MI325X; the other ROCm GPUs take their family's. CUDA "
        "GPUs take 0: cuBLAS and CUTLASS split K (split-K, stream-K) over idle SMs, and a "
        "B200 fit gives 0.002 us.",
        "roofline/model/calibrated.py calibrated_gemm_time; "
        "https://docs.modular.com/max/api/kernels/linalg/matmul/gpu/amd/"
        "amd_4wave_split_k_matmul/; https://arxiv.org/abs/2301.03598",
    ),
    Note(
        "Cast bandwidth per kernel kind",
        "A cast kernel moves its bytes at the bandwidth fraction of its kind, measured on "
        "published cast benchmarks: row (dim0, scales along a row), column (dim1 or a "
        "transposed copy), tile (two-dimensional blocks such as 128 x 128 weight scales) and "
        "reduce (amax reductions). Every kernel of the recipe registry carries its kind. "
        "GEMM operands stream and the bf16 activation kernel runs at the row fraction. "
        "torchao's model times every kernel at one achievable bandwidth fraction.",
        "roofline/recipes/kernels.py",
    ),
    Note(
        "The dynamic nvfp4 amax is its own launch",
        "torchao counts the amax pass of dynamic nvfp4 and the cast as one kernel with one "
        "launch floor; in practice the amax is a separate reduction kernel, so the "
        "calibrated model pays two launches for it, with the same bytes.",
        "roofline/recipes/kernels.py nvfp4_dynamic_inference",
    ),
    Note(
        "Dynamic nvfp4 cannot fuse the activation",
        "With inference fusion torchao's model lets every quantize kernel take the "
        "activation before it as a prologue, so only the bf16 side pays an activation "
        "kernel. Dynamic nvfp4 quantizes with torchao's Triton NVFP4 kernel (the "
        "config's default use_triton_kernel=True), which torch.compile cannot fuse into "
        "(torchao's inference.md names this 'lack of fusion for some recipes'): the "
        "activation runs in its own pass with the amax's first stage and writes its output "
        "for the quantize kernel to read. The calibrated model adds that launch and the "
        "2 M K bytes written to the cast's term.",
        "roofline/recipes/model.py CastKernel.takes_prologue; "
        "roofline/model/calibrated.py unfused_activation_time",
    ),
    Note(
        "The fit",
        "Every value stored in the calibration file as fitted or measured is a free "
        "parameter of one bounded least-squares fit (scipy) of the log of predicted / "
        "measured over every point of every fit set: a log ratio weighs 10% high and 10% "
        "low alike, and speedups and microseconds alike. The command roofline calibrate "
        "reruns the fit and prints it beside the stored values, and a test fails when they "
        "drift apart, so no stored number is tuned by hand. Held-out sets are never used.",
        "roofline/analysis/fit.py",
    ),
    Note(
        "Fallbacks for GPUs without data",
        "A GPU without a stored or measured value gets a stated fallback, labelled assumed "
        "with the range it could plausibly take: the bf16 efficiency is the spec "
        "database's achievable GEMM fraction; the fp8, block-scaled fp8 and fp4 "
        "efficiencies are the GPU's efficiency of the parent format (bf16, fp8, fp8) times "
        "the mean ratio over the GPUs where both are known; a cast kind's fraction is the "
        "mean over the GPUs that measured it, and a kind no GPU measured takes its nearest "
        "measured kind's (the stochastic-rounding RHT cast the round-to-nearest one's, "
        "latency included; any other kind a row kernel's). The range is the span of those "
        "GPUs' values.",
        "roofline/calibration/params.py",
    ),
    Note(
        "Grouped GEMMs at a measured fraction of the dense rate",
        "A grouped GEMM runs at rho times the dense GEMM rate of its format: rho_2D3D for "
        "the output and grad_input GEMMs (tokens x K @ G x K x N), rho_2D2D for grad_weight "
        "(K-grouped). Both are read off kernel measurements: B200 MXFP8 (torchao's MoE "
        "kernel breakdown) and H100 blockwise fp8 (DeepGEMM); other GPUs take their mean, "
        "marked assumed. The bf16 baseline's grouped GEMM (torch._grouped_mm) is another "
        "kernel with its own fraction rho_bf16 of the dense bf16 rate (2D-3D; 2D-2D keeps "
        "the low-precision ratio rho_2D2D / rho_2D3D): measured on GB200 (Marin's TE bf16 "
        "grouped GEMM) and fitted on B200's published MXFP8 / bf16 grouped-GEMM speedups at "
        "8 experts (2 and 4 held out). Balanced routing is "
        "assumed (the time depends on the total tokens only). With one group the factors "
        "are 1: a dense layer.",
        "roofline/model/calibrated.py calibrated_gemm_time; measurements M3, M4",
    ),
    Note(
        "Kernels of their own kind: rearrangements and NVFP4 training casts",
        "Scale rearrangements, the RHT + amax pass, the NVFP4 row + RHT column casts (round "
        "to nearest and stochastic) and the 16 x 16 weight cast each have a bandwidth "
        "fraction and a fixed latency of their own, read off kernel measurements (B200 MoE "
        "kernels; GB200 NVFP4 training kernels at three sizes, a fourth held out). "
        "torchao's K-group rearrangement walks each group's tokens serially, so it also "
        "pays a latency per step of M / (4 x block x G).",
        "roofline/symbols.py; roofline/data/calibration.toml; measurements M4, M5",
    ),
)
