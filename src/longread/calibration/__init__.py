"""Calibration: plant a known positive (a copy of the answer in the distant context) and check that
longread's own context controls find it, lose it and keep it where they should (``longread calibrate``)."""
