"""Stage 3: the charts as jobs; ``draw/`` holds every matplotlib call (workers only)."""
