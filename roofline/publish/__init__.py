"""How the model is published: LaTeX, JavaScript, citations, site paths, slugs, notes, tables."""
