"""Stage 3: the charts as jobs (``queue``: how the build starts drawing them as pages ask);
``draw/`` holds every matplotlib call (workers only)."""
