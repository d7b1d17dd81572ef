"""Nests of tensors (tuples, lists, dicts, namedtuples, None) as flat
tuples and back, for bptt_msm.torch.scan."""
import torch

from ._common import _NAME


# ---- nests of tensors ---------------------------------------------------------
# A nest's structure (its "spec") is "T" for a tensor, "N" for None, or a
# tuple (kind, ...) for a tuple, list, namedtuple or dict of nests.  Dicts
# go by sorted keys (their order is not part of the structure), as
# jax.lax.scan's.

def _flatten(value, what, out=None, path=""):
    """value's tensors in order (appended to out) and its spec."""
    if out is None:
        out = []
        return out, _flatten(value, what, out, path)
    if isinstance(value, torch.Tensor):
        out.append(value)
        return "T"
    if value is None:
        return "N"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return ("nt", type(value), tuple(
            _flatten(v, what, out, "%s.%s" % (path, f))
            for f, v in zip(type(value)._fields, value)))
    if isinstance(value, (tuple, list)):
        return ("list" if isinstance(value, list) else "tuple", tuple(
            _flatten(v, what, out, "%s[%d]" % (path, k))
            for k, v in enumerate(value)))
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=repr)
        return ("dict", type(value) if type(value) is not dict else dict,
                tuple(keys), tuple(_flatten(value[k], what, out,
                                            "%s[%r]" % (path, k))
                                   for k in keys))
    raise TypeError("%s: %s holds %s at %s: a nest's leaves must be tensors "
                    "or None, in tuples, lists, dicts or namedtuples"
                    % (_NAME, what, _describe(value), path or "its top"))


def _unflatten(spec, it):
    if spec == "T":
        return next(it)
    if spec == "N":
        return None
    kind = spec[0]
    if kind == "tuple":
        return tuple([_unflatten(s, it) for s in spec[1]])
    if kind == "list":
        return [_unflatten(s, it) for s in spec[1]]
    if kind == "nt":
        return spec[1](*[_unflatten(s, it) for s in spec[2]])
    return spec[1](zip(spec[2], [_unflatten(s, it) for s in spec[3]]))


def _flat_tuple(spec):
    """For a spec of a tensor, True; of a tuple of tensors, False; else
    None."""
    if spec == "T":
        return True
    if spec[0] == "tuple" and all(s == "T" for s in spec[1]):
        return False
    return None


def _build(spec, leaves):
    return _unflatten(spec, iter(leaves))


def _describe(value):
    if isinstance(value, (tuple, list)):
        return "a %s of (%s)" % (type(value).__name__,
                                 ", ".join(type(v).__name__ for v in value))
    if isinstance(value, torch.Tensor):
        return "a tensor of shape %s" % (tuple(value.shape),)
    return "a %s" % type(value).__name__


def _spec_text(spec):
    if spec == "T":
        return "tensor"
    if spec == "N":
        return "None"
    kind = spec[0]
    if kind in ("tuple", "list"):
        return "%s(%s)" % (kind, ", ".join(_spec_text(s) for s in spec[1]))
    if kind == "nt":
        return "%s(%s)" % (spec[1].__name__,
                           ", ".join(_spec_text(s) for s in spec[2]))
    return "{%s}" % ", ".join("%r: %s" % (k, _spec_text(s))
                              for k, s in zip(spec[2], spec[3]))


def _needs_grad(t):
    return t.dtype.is_floating_point or t.dtype.is_complex
