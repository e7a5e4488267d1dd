"""Stage 1: evaluate the models over the site's grids (dense, grouped, models, validation)."""
