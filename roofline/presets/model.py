"""The types of the model presets: a model's linear layers as GEMMs, per block of layers.

A :class:`ModelPreset` is a whole model as the roofline sees it: blocks of identical
decoder layers (:class:`LayerBlock`), each listing every linear layer of one layer as a
:class:`PresetGemm` (``K`` input features, ``N`` output features: the weight is ``K x N``
and the forward GEMM is ``M x K @ K x N``), plus the output head as a block of one layer.
:meth:`ModelPreset.gemm_instances` turns it into the GEMMs one training or inference step
runs on one device, for ``tokens`` tokens per device and expert parallelism ``ep``.

The lint (:mod:`roofline.presets.lint`) builds these values only from files that passed
every rule, so consumers can trust every field.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from roofline.datafiles.sources import Source
from roofline.errors import RooflineError, unknown
from roofline.shapes import MAX_DIM


class LinearKind(enum.StrEnum):
    """How a linear layer meets the tokens of a step."""

    DENSE = "dense"  # runs on all M tokens (attention projections, dense MLPs, the router)
    EXPERT = "expert"  # a routed expert: one grouped GEMM over the block's experts
    SHARED = "shared"  # a shared expert: a dense GEMM on all tokens (DeepSeek, Llama 4)


class ParameterError(RooflineError, ValueError):
    """A step parameter (tokens per device, expert parallelism) a preset cannot take."""


@dataclass(frozen=True)
class PresetGemm:
    """One linear layer of one decoder layer: ``K`` input and ``N`` output features,
    ``count`` copies of it per layer (2 for two projections of the same shape kept as one
    entry), its kind, and a note (e.g. that an implementation fuses it with another)."""

    name: str
    K: int
    N: int
    count: int = 1
    kind: LinearKind = LinearKind.DENSE
    note: str = ""


@dataclass(frozen=True)
class LayerBlock:
    """``layers`` identical layers, each running ``gemms``; ``experts`` and ``top_k`` are
    set exactly when the block has routed-expert GEMMs (None otherwise)."""

    name: str
    layers: int
    gemms: tuple[PresetGemm, ...]
    experts: int | None = None
    top_k: int | None = None

    @property
    def is_moe(self) -> bool:
        """True when the block routes tokens to experts."""
        return self.experts is not None


@dataclass(frozen=True)
class GemmInstance:
    """One GEMM of one step on one device.

    ``M`` is the rows of the whole GEMM: all tokens for a dense or shared GEMM, the routed
    tokens ``tokens x top_k`` for an expert GEMM, split over ``groups`` experts (balanced
    routing: ``M / groups`` rows each); ``count`` is how many times it runs per step
    (per-layer count x the block's layers).
    """

    block: str
    name: str
    kind: LinearKind
    M: int
    K: int
    N: int
    groups: int
    count: int

    @property
    def key(self) -> str:
        """``block.name``: unique within a model."""
        return f"{self.block}.{self.name}"


@dataclass(frozen=True)
class ModelPreset:
    """A model's linear layers, with the sources of its dimensions."""

    name: str
    display_name: str
    blocks: tuple[LayerBlock, ...]
    sources: tuple[Source, ...]
    notes: str = ""

    @property
    def is_moe(self) -> bool:
        """True when any block routes tokens to experts."""
        return any(block.is_moe for block in self.blocks)

    @property
    def experts(self) -> int | None:
        """The routed experts of the MoE blocks (the lint makes them agree); None if dense."""
        return next((b.experts for b in self.blocks if b.experts is not None), None)

    def gemm_instances(self, tokens: int, ep: int = 1) -> tuple[GemmInstance, ...]:
        """Every GEMM of one step on one device, in file order.

        ``tokens``: M, the micro-batch x sequence length on the device. ``ep``: expert
        parallelism; each device holds ``experts / ep`` experts and, with balanced routing,
        receives ``tokens x top_k`` routed tokens. Raises :class:`ParameterError` naming the
        parameter when either cannot apply to this model.
        """
        _check_tokens(tokens)
        _check_ep(self, ep)
        return tuple(
            _instance(block, gemm, tokens, ep) for block in self.blocks for gemm in block.gemms
        )


def _instance(block: LayerBlock, gemm: PresetGemm, tokens: int, ep: int) -> GemmInstance:
    count = gemm.count * block.layers
    if gemm.kind is LinearKind.EXPERT and block.experts is not None and block.top_k is not None:
        rows = tokens * block.top_k
        if rows > MAX_DIM:
            raise ParameterError(
                f"tokens: expected tokens x top_k (the routed rows of {block.name}.{gemm.name},"
                f" top_k={block.top_k}) at most {MAX_DIM}, received tokens={tokens},"
                f" which routes {rows}"
            )
        groups = block.experts // ep
        return GemmInstance(block.name, gemm.name, gemm.kind, rows, gemm.K, gemm.N, groups, count)
    return GemmInstance(block.name, gemm.name, gemm.kind, tokens, gemm.K, gemm.N, 1, count)


def _check_tokens(tokens: object) -> None:
    if type(tokens) is not int or not 1 <= tokens <= MAX_DIM:
        raise ParameterError(
            f"tokens: expected a positive integer up to {MAX_DIM} (micro-batch x sequence"
            f" length per device), received {tokens!r}"
        )


def _check_ep(preset: ModelPreset, ep: object) -> None:
    if type(ep) is not int or ep < 1:
        raise ParameterError(
            f"ep: expected a positive integer (devices sharing the experts), received {ep!r}"
        )
    if not preset.is_moe:
        if ep != 1:
            raise ParameterError(
                f"ep: expert parallelism applies to MoE models; {preset.name} has no experts,"
                f" so expected 1, received {ep}"
            )
        return
    for block in preset.blocks:
        if block.experts is not None and block.experts % ep:
            raise ParameterError(
                f"ep: expected a divisor of the {block.experts} experts of {preset.name}"
                f" (block {block.name}), received {ep}"
            )


class ModelDatabase:
    """Every preset of a model file, in file order; ``origin`` names the file."""

    def __init__(self, models: tuple[ModelPreset, ...], origin: str = "") -> None:
        self.models = tuple(models)
        self.origin = origin
        self._by_name = {m.name.lower(): m for m in self.models}

    def get(self, name: str) -> ModelPreset:
        """The preset called ``name`` (case-insensitive); UnknownNameError lists the names
        and the nearest one otherwise."""
        found = self._by_name.get(name.lower()) if isinstance(name, str) else None
        if found is None:
            raise unknown("model", str(name), self.names())
        return found

    def names(self) -> list[str]:
        """Every preset name, in file order."""
        return [m.name for m in self.models]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def __iter__(self) -> Iterator[ModelPreset]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __repr__(self) -> str:
        return f"ModelDatabase({len(self)} models from {self.origin or 'text'})"
