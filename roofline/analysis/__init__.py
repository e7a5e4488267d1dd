"""What the model is used for: guidance, whole-model plans, validation, fitting, diffs, history."""
