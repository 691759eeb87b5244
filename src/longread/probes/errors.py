"""What the probes raise on settings they cannot use."""

from __future__ import annotations

from longread.errors import LongreadError


class ProbeSettingsError(LongreadError):
    """A probe setting out of range or a rule that cannot be read; the message names the option."""
