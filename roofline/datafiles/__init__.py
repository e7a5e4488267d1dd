"""The one framework every data file is loaded and linted with: specs, measurements,
model presets and calibration (each a schema on it, in its own package).

* :mod:`.core`: reading a file (size cap, no FIFO or device, UTF-8), the limits, the
  invisible-character and number rules;
* :mod:`.text`: the text rules, how a received value is quoted, TOML reading and the
  last pass over every key and string of a file;
* :mod:`.sources`: the one rule of a source entry (URL, date read, commit, note);
* :mod:`.problems`: the collector every loader reports its problems to; the record is
  :class:`roofline.errors.Problem`, printed one way for every kind of file.
"""
