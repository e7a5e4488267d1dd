"""Every matplotlib call of the site, imported only by the chart workers."""
