"""Table rows of the pages, built from gathered results."""
