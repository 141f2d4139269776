"""Exceptions and warnings of screwdyn, in this one module.

Every exception derives from :class:`ValueError`, so callers that catch ``ValueError`` keep
working; each message names the argument or model element at fault. Every warning derives from
:class:`ScrewdynWarning` (a :class:`UserWarning`): something screwdyn did with its input that the
user should know of, said once, naming the element."""


class ScrewdynError(ValueError):
    """Base class of every error screwdyn raises on bad input."""


class ModelError(ScrewdynError):
    """A model that cannot be built: bad topology, non-physical inertia, unknown names."""


class URDFError(ModelError):
    """A URDF document that is malformed, hostile or uses something unsupported."""


class SDFError(ModelError):
    """An SDFormat document that is malformed, hostile or uses something unsupported."""


class InputError(ScrewdynError):
    """A call argument with the wrong shape or a NaN/inf value."""


class TooLargeError(InputError, MemoryError):
    """A call whose result (and the copies of its inputs) would not fit in the memory available;
    raised before any work starts. Also a :class:`MemoryError`."""


class ScrewdynWarning(UserWarning):
    """Base class of every warning screwdyn gives."""


class InertiaWarning(ScrewdynWarning):
    """An inertia that is physically implausible (principal moments breaking the triangle
    inequality), or not positive semi-definite and loaded anyway (clamped when the negative
    moment is round-off, else kept as written)."""


class URDFWarning(ScrewdynWarning):
    """A URDF element loaded other than as written, or dropped (a mimic or transmission naming a
    joint the robot does not have), or a convention to know of (mimic joints kept independent)."""


class MJCFWarning(ScrewdynWarning):
    """Part of an MJCF model that the screwdyn model leaves out (see :mod:`screwdyn.io.mjcf`)."""


class SDFWarning(ScrewdynWarning):
    """Part of an SDFormat model that the screwdyn model leaves out (see :mod:`screwdyn.io.sdf`)."""


class VisualWarning(ScrewdynWarning):
    """Visual geometry that cannot be shown (a mesh not found or unreadable, an unknown geometry).
    The model's dynamics are not affected."""


class CollisionWarning(ScrewdynWarning):
    """Collision geometry loaded other than as written (a mesh kept as its convex hull is not
    worth a warning; an ellipsoid kept as a polytope, a height field dropped, a mesh not found)."""
