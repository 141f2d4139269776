"""Exceptions raised by screwdyn. All derive from :class:`ValueError`, so callers that
catch ``ValueError`` keep working; each message names the argument or model element at fault."""


class ScrewdynError(ValueError):
    """Base class of every error screwdyn raises on bad input."""


class ModelError(ScrewdynError):
    """A model that cannot be built: bad topology, non-physical inertia, unknown names."""


class URDFError(ModelError):
    """A URDF document that is malformed, hostile or uses something unsupported."""


class InputError(ScrewdynError):
    """A call argument with the wrong shape or a NaN/inf value."""
