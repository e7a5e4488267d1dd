"""The calculator's grouped layers and model presets: their part of ``data.js``.

A grouped (mixture-of-experts) layer is the calculator's ``G`` input; its messages are
the evaluator's own (:func:`roofline.evaluate.evaluate_terms` with ``groups=``, which
the CLI's ``--groups`` also checks with), as templates. The model-preset picker fills
M, K, N and G from :meth:`roofline.presets.ModelPreset.gemm_instances`: per model, each
GEMM's rows per token, K, N and runs per step at one token, its group count for every
expert parallelism the preset accepts (the ones ``gemm_instances`` does not refuse), and
the messages ``gemm_instances`` raises for a ``tokens`` value it refuses, as templates.

Names and labels come from a model file: they are carried as JSON data only (the page
shows them through ``textContent``), never written into markup here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from roofline.errors import ShapeError
from roofline.evaluate import check_groups, evaluate_terms
from roofline.presets import LinearKind, ModelDatabase, ModelPreset, ParameterError
from roofline.recipes import Mode
from roofline.shapes import MAX_DIM
from roofline.specs import GpuSpec

_VALUE = -987654321  # a value no message holds elsewhere; its repr becomes ``{value}``
_TOKENS = "\x00TOKENS\x00"  # placeholders substituted in the browser
_ROWS = "\x00ROWS\x00"


def template(text: str, **placeholders: str) -> str:
    """``text`` with each marker replaced by ``{name}``; braces already in it (a GPU named
    ``X {name}``) are doubled, and calculator.js's ``fill`` turns ``{{`` back into ``{``."""
    text = text.replace("{", "{{").replace("}", "}}")
    for marker, name in placeholders.items():
        text = text.replace(marker, "{" + name + "}")
    return text


_M_PROBE, _G_PROBE = 7654321, 9876543


def _groups_error(groups: int) -> str:
    """The message :func:`roofline.evaluate.evaluate` gives for ``groups`` (G)."""
    probe = GpuSpec("probe", 1.0, 1.0, 1.0, 1.0, fp8_peak_tops=1.0, fp4_peak_tops=1.0)
    try:
        evaluate_terms(probe, Mode.TRAINING, "rowwise", 1, 1, 1, groups=groups)
    except ShapeError as exc:
        return str(exc)
    raise AssertionError(f"evaluate accepts groups={groups!r}")


def groups_messages() -> dict[str, str]:
    """The evaluator's messages for a group count that is not a positive integer, and for
    one past the largest dimension, with ``{value}`` for the value."""
    return {
        "positive": template(_groups_error(_VALUE), **{repr(_VALUE): "value"}),
        "too_large": template(_groups_error(MAX_DIM + 1), **{repr(MAX_DIM + 1): "value"}),
        "above_m": _above_m_message(),
    }


def _above_m_message() -> str:
    """``roofline eval --groups``'s message for more experts than tokens (G > M), with
    ``{value}`` for G and ``{m}`` for M."""
    try:
        check_groups(_M_PROBE, _G_PROBE)
    except ShapeError as exc:
        return template(str(exc), **{str(_G_PROBE): "value", str(_M_PROBE): "m"})
    raise AssertionError("check_groups accepts G > M")


def _refusal(preset: ModelPreset, tokens: int, ep: int = 1) -> str | None:
    """The message of ``preset.gemm_instances(tokens, ep)``'s ParameterError, else None."""
    try:
        preset.gemm_instances(tokens, ep)
    except ParameterError as exc:
        return str(exc)
    return None


def tokens_message() -> str:
    """``gemm_instances``'s message for a tokens value that is not a positive integer up to
    the largest dimension (checked before anything of the model), ``{value}`` its repr."""
    empty = ModelPreset(name="probe", display_name="probe", blocks=(), sources=())
    message = _refusal(empty, _VALUE)
    assert message is not None and repr(_VALUE) in message
    return template(message, **{repr(_VALUE): "value"})


def _routed_message(preset: ModelPreset, block_name: str, gemm_name: str) -> str | None:
    """For an expert GEMM routing several rows per token: ``gemm_instances``'s message
    when its routed rows pass the largest dimension, with ``{tokens}`` and ``{rows}``
    (read off the GEMM alone: the message names only its block, GEMM and top_k)."""
    block = next(b for b in preset.blocks if b.name == block_name)
    gemm = next(g for g in block.gemms if g.name == gemm_name)
    if block.top_k is None or block.top_k < 2:
        return None  # tokens x 1 never passes the largest dimension tokens may take
    alone = dataclasses.replace(preset, blocks=(dataclasses.replace(block, gemms=(gemm,)),))
    tokens = MAX_DIM // block.top_k + 1
    message = _refusal(alone, tokens)
    assert message is not None, (preset.name, block_name, gemm_name)
    # Names hold no "=" or space: these markers occur once, where the numbers are.
    message = message.replace(f"tokens={tokens},", f"tokens={_TOKENS},")
    message = message.replace(f"routes {tokens * block.top_k}", f"routes {_ROWS}")
    assert _TOKENS in message and _ROWS in message, message
    return template(message, **{_TOKENS: "tokens", _ROWS: "rows"})


def _model_data(preset: ModelPreset) -> dict[str, Any]:
    """One preset as the picker reads it (see the module docstring)."""
    at_one = preset.gemm_instances(1)
    eps = [ep for ep in range(1, (preset.experts or 1) + 1) if _refusal(preset, 1, ep) is None]
    gemms = []
    for gemm in at_one:
        expert = gemm.kind is LinearKind.EXPERT
        routed = _routed_message(preset, gemm.block, gemm.name) if expert else None
        gemms.append(
            {
                "key": gemm.key,
                "kind": gemm.kind.value,
                "rows": gemm.M,
                "K": gemm.K,
                "N": gemm.N,
                "count": gemm.count,
                "routed": routed,
            }
        )
    # M grows with tokens in proportion (tokens, or tokens x top_k routed rows).
    assert [g.M for g in preset.gemm_instances(7)] == [7 * g.M for g in at_one], preset.name
    return {
        "name": preset.name,
        "label": preset.display_name,
        "experts": preset.experts,
        "eps": eps,
        "groups": {str(ep): [g.groups for g in preset.gemm_instances(1, ep)] for ep in eps},
        "gemms": gemms,
    }


def preset_data(models: ModelDatabase) -> dict[str, Any]:
    """The picker's data: every preset of ``models`` and the tokens message."""
    return {
        "max": MAX_DIM,
        "tokens": tokens_message(),
        "models": [_model_data(preset) for preset in models],
    }
