"""The checks the Python tests share: each failure is kept in FAILS and
written to stderr as it happens; the test exits 1 when FAILS is not empty."""
import sys

FAILS = []


def check(cond, what):
    """cond must hold; what says what failed."""
    if not cond:
        FAILS.append(what)
        sys.stderr.write("FAIL: %s\n" % what)
    return bool(cond)


def raises(exc, fn, what, needle=None):
    """fn() must raise exc, whose message holds needle; the exception, or
    None where it did not."""
    try:
        fn()
    except exc as e:
        check(needle is None or needle in str(e),
              "%s: message %r lacks %r" % (what, str(e), needle))
        return e
    except Exception as e:  # the wrong kind
        check(False, "%s: raised %s (%s), not %s" % (what, type(e).__name__,
                                                     e, exc.__name__))
        return None
    check(False, "%s: no %s raised" % (what, exc.__name__))
    return None
