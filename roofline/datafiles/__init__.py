"""The one framework every data file is loaded and linted with: specs, measurements,
model presets and calibration."""
