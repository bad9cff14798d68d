"""Keep renamed arguments working for one release, with a DeprecationWarning."""

from __future__ import annotations

import functools
import warnings


def renamed_arguments(function, until: str = "0.3", **renames: str):
    """``function`` accepting each old keyword of ``renames`` (old="new") with a warning.

    Like scipy's ``_rename_parameter``. Applied where a function is made public
    (``valuecore.uncertainty``), so that the private definition keeps its
    doctests.
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        for old, new in renames.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{function.__name__}() got both {old!r} and its new name {new!r}")
                warnings.warn(
                    f"{function.__name__}(): the argument {old!r} is now called {new!r}; "
                    f"the old name goes in release {until}",
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
        return function(*args, **kwargs)

    return wrapper
