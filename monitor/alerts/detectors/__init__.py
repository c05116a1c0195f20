"""Pure alert detectors: one series in, one evaluation per observation out."""
