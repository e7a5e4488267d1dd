"""The models' terms: torchao's (exact) and the calibrated one, built from the same pieces."""
