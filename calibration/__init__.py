"""calibration: measure any judge against human labels. Knows nothing of the `judge` package."""
