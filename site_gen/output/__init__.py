"""Stage 4: the only code that writes: guard, private folders, mkdocs, math, assets."""
