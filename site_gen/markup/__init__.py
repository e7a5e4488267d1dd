"""Where values become page text: the escaping boundary, formulas, exports, the calculator."""
