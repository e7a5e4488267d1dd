"""Which library runs each recipe's low-precision GEMMs on each platform, as torchao 0.18
calls them (the registry passes these to :class:`~roofline.recipes.model.Recipe`).

``*_KERNELS`` map a platform to the library whose kernel runs the GEMM there; a platform
left out has no kernel torchao 0.18 uses, and ``*_GAPS`` say why in a clause that names
what exists instead. :mod:`roofline.capability` turns them into the software part of a
GPU x recipe verdict. Each claim's source is in the comment above it: torchao 0.18's code
(read in the installed package) or the PyTorch / torchao thread that states it.
"""

from __future__ import annotations

from collections.abc import Mapping

from roofline.recipes.model import GroupedStack, Platform

CUDA, ROCM = Platform.CUDA, Platform.ROCM

# Per-tensor scales: torch._scaled_mm dispatches to cuBLASLt on CUDA (pytorch/pytorch
# issue #153555: "Per-Tensor scaling -> CublasLT") and to hipBLASLt on ROCm (torchao
# float8/config.py: "ROCm supports 1. fnuz variants in MI300. 2. OCP F8 variants in MI350").
TENSORWISE_KERNELS: Mapping[Platform, str] = {CUDA: "cuBLAS", ROCM: "hipBLASLt"}

# Per-row scales: PyTorch's CUTLASS rowwise kernel on CUDA sm_89/90/100 (issue #153555:
# "Per-Row scaling -> RowWise Cutlass kernel"); hipBLASLt on ROCm (pytorch/pytorch PR
# #144432: "hipblaslt added rowwise f8 gemm support ... rowwise f8 gemm is an mi300
# feature only"). GeForce Blackwell's failure (issue #192707) is a per-GPU software gap.
ROWWISE_KERNELS: Mapping[Platform, str] = {CUDA: "CUTLASS", ROCM: "hipBLASLt"}

# torchao's Float8BlockwiseLinear (prototype/blockwise_fp8_training/linear.py) runs
# F.scaled_mm with 1x128 / 128x128 scales (cuBLAS) or, with use_triton=True, torchao's
# Triton kernels; its constructor asserts is_sm_at_least_90(), which needs
# torch.version.cuda: false on ROCm (and on sm_89, a per-GPU gap).
BLOCKWISE_KERNELS: Mapping[Platform, str] = {CUDA: "cuBLAS or torchao's Triton kernels"}
BLOCKWISE_GAPS: Mapping[Platform, str] = {
    ROCM: "torchao 0.18's blockwise training asserts CUDA SM90+, and its Triton GEMM for "
    "MI300/MI350 is an open pull request (pytorch/ao #4130)"
}

# MXFP8: torch._scaled_mm with e8m0 scales dispatches to cuBLAS's block-scaled GEMM on
# CUDA capability 10.0+ (pytorch/pytorch PR #146655; torchao's README: "On NVIDIA B200
# machines, we use the cuBLAS mxfp8 gemm exposed via torch._scaled_mm"). On ROCm,
# hipBLASLt has an MX-FP8 GEMM (PR #147553: "require AMD gfx950 && ROCm 6.5+"), but
# torchao 0.18 swizzles MX scales into cuBLAS's blocked layout and has no hipBLASLt
# kernel choice (pytorch/ao PR #2066, which adds one, is open).
MXFP8_KERNELS: Mapping[Platform, str] = {CUDA: "cuBLAS"}
MXFP8_GAPS: Mapping[Platform, str] = {
    ROCM: "there is no cuBLAS, and torchao 0.18 does not select hipBLASLt's MX-FP8 GEMM "
    "for gfx950 (pytorch/ao #2066, which would, is open)"
}

# Emulated MX (mx_tensor.py _addmm_mx_dispatch, KernelPreference.EMULATED): both operands
# are dequantized to bf16 and multiplied with torch.mm, i.e. the platform's bf16 GEMM.
EMULATED_KERNELS: Mapping[Platform, str] = {CUDA: "cuBLAS", ROCM: "hipBLASLt"}

# torchao's roofline (testing/training/roofline_utils.py) models this recipe as "mxfp8 gemm
# with TN, NT, TT, NN formats supported (not in PyTorch right now)".
FLEXIBLE_LAYOUT_GAPS: Mapping[Platform, str] = {
    p: "no MXFP8 GEMM in PyTorch takes the TN, NT, TT and NN layouts this recipe assumes "
    "(torchao's roofline: 'not in PyTorch right now')"
    for p in Platform
}

# torchao 0.18's MX training config has no 32x32 weight-scale option for linear layers:
# 32x32 blocks appear only in its MoE kernels (prototype/moe_training/kernels/mxfp8), which
# quantize 3D expert weights; the recipe is torchao's roofline's what-if.
SQUARE_WEIGHT_GAPS: Mapping[Platform, str] = {
    p: "torchao 0.18 has no linear-layer recipe with 32x32 weight scales (only its MoE "
    "kernels quantize expert weights in 32x32 blocks)"
    for p in Platform
}

# MXFP4: torchao 0.18 calls F.scaled_mm with BlockWise1x32 scales and NVIDIA's
# SWIZZLE_32_4_4 layout; on CUDA that is FBGEMM's CUTLASS f4f4bf16 kernel (pytorch/pytorch
# PR #166526, "Add CUDA MXFP4 scaled mm support via. FBGEMM"; the recipe's name is from
# torchao's own earlier CUTLASS kernel). hipBLASLt gained gfx950 MXFP4 (pytorch/pytorch PR
# #165528; ROCm/rocm-libraries PR #6499), but gfx950 kernels take unswizzled scales
# (PR #194511: "BlockWise1x32 along K, NO_SWIZZLE") and no public ROCm run of torchao's
# path was found.
MXFP4_KERNELS: Mapping[Platform, str] = {CUDA: "CUTLASS"}
MXFP4_GAPS: Mapping[Platform, str] = {
    ROCM: "there is no CUTLASS; hipBLASLt has a gfx950 MXFP4 GEMM, but torchao 0.18 passes "
    "the scales in NVIDIA's swizzled layout and no ROCm run of this path is public"
}

# NVFP4: torch._scaled_mm with fp4 operands and e4m3 scales calls cuBLAS's fp4 GEMM
# (pytorch/pytorch PR #148792); torchao gates it on sm_100+ ("NVFP4 DYNAMIC mode is only
# supported on sm100+ machines"). AMD's CDNA has no NVFP4 format.
NVFP4_KERNELS: Mapping[Platform, str] = {CUDA: "cuBLAS"}
NVFP4_GAPS: Mapping[Platform, str] = {
    ROCM: "torchao 0.18's NVFP4 GEMM is cuBLAS's, and it calls no NVFP4 GEMM in ROCm's stack"
}


# -- grouped (mixture-of-experts) GEMMs ------------------------------------------------
# A recipe's grouped GEMMs (2D-3D and 2D-2D, roofline.model.grouped) are separate kernels from
# its dense ones. Sources: pytorch/pytorch aten/src/ATen/native/cuda/GroupedBlas.cpp
# (commit 00d4eaf9327928137f4cc437b17e5cf54623565f): torch._scaled_grouped_mm runs on
# "CUDA devices with compute capability = [9.0, 10.0], or ROCm MI300+"; its fp8 rowwise
# kernel is CUTLASS written for sm90 only (f8f8bf16_grouped_gemm_impl_sm90), MXFP8 runs
# FBGEMM's mx8mx8bf16_grouped_mm (sm100), and the fp4 kernels (f4f4bf16_grouped_mm) are
# reachable only through the v2 op, which no torchao training path calls.
# deepseek-ai/DeepGEMM README (commit 0274ad7b911b99b4eb6f8d796403811cf1e18f3d): blockwise
# fp8 M- and K-grouped GEMMs on "NVIDIA SM90 or SM100"; torchao wraps it for blockwise fp8
# MoE training (the M3 measurements). torchao's MoE training README: "For MXFP8 MoE
# training, CUDA 12.8+ and SM100+"; "For FP8 rowwise MoE training ... SM89+" (the core op's
# gate is sm90/sm100, which is what is modelled).


_HOPPER, _BLACKWELL, _ULTRA = "Hopper", "Blackwell", "Blackwell Ultra"
ROWWISE_GROUPED: Mapping[Platform, GroupedStack] = {
    CUDA: GroupedStack("CUTLASS (torch._scaled_grouped_mm)", (_HOPPER,)),
    ROCM: GroupedStack("FBGEMM (torch._scaled_grouped_mm)", ("CDNA3",)),
}
BLOCKWISE_GROUPED: Mapping[Platform, GroupedStack] = {
    CUDA: GroupedStack("DeepGEMM", (_HOPPER, _BLACKWELL)),
}
MXFP8_GROUPED: Mapping[Platform, GroupedStack] = {
    CUDA: GroupedStack("FBGEMM (torch._scaled_grouped_mm)", (_BLACKWELL, _ULTRA)),
}
# bf16 torch._grouped_mm: CUTLASS on sm90 and sm100 (pytorch/pytorch PR #156203), CK on
# gfx942/gfx950 (pytorch/pytorch PR #162419); elsewhere a loop of mm calls (not a kernel).
EMULATED_GROUPED: Mapping[Platform, GroupedStack] = {
    CUDA: GroupedStack("CUTLASS (torch._grouped_mm, bf16)", (_HOPPER, _BLACKWELL, _ULTRA)),
    ROCM: GroupedStack("CK (torch._grouped_mm, bf16)", ("CDNA3", "CDNA4")),
}
#: Why a recipe with a dense kernel has no grouped one (the clause follows "on CUDA, ").
GROUPED_GAPS: Mapping[str, str] = {
    "tensorwise": "torchao's MoE training runs no per-tensor fp8 grouped GEMM (its fp8 "
    "grouped path is rowwise)",
    "fp4": "PyTorch's fp4 grouped GEMM (FBGEMM f4f4bf16_grouped_mm) is reachable only "
    "through the v2 scaled_grouped_mm op, which no torchao training path calls",
}
