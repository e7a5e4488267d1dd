"""One module per page kind; each ``render(site, ...)`` returns a :class:`base.PageOutput`.

Pages are built from :mod:`site_gen.pages.base` (input, output, templates) and the row and
chart builders one floor down (:mod:`site_gen.pages.rows.speedup`, :mod:`site_gen.pages.rows.specs`,
:mod:`site_gen.charts.jobs`); no page imports another.
"""
