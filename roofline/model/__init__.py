"""The models: torchao's (exact) and the calibrated one, built from the same pieces.

:mod:`~roofline.model.terms` holds what both share (quantities, terms, the model, the timing
protocol, the GEMM traffic rule, the term list); :mod:`~roofline.model.torchao` and
:mod:`~roofline.model.calibrated` each time those terms their own way;
:mod:`~roofline.model.build` picks one (:func:`~roofline.model.build.build_model`) and sets
``MODEL_VERSION``; :mod:`~roofline.model.compiled` compiles a model to numpy functions.
:mod:`~roofline.model.grouped` adds the grouped (MoE) shapes and
:mod:`~roofline.model.torchao_compat` torchao's function names.
"""
