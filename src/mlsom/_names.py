"""Names of features and labels on two sides that must agree.

Where both sides name their columns (a training and a test file, a model and the DataFrame or
dict given to it), they are joined by name, never by position: the names must be the same, in
the same order for columns (a dict's keys may come in any order). Anything else is refused with
an error that shows both sides and what differs; nothing is reordered silently. Names are
unique and not empty wherever they are kept.
"""

_SHOWN = 6  # names shown in a message before "..."


def show(names) -> str:
    """A list of names for a message: all of them, or the first few and how many in all."""
    names = list(names)
    if len(names) <= _SHOWN:
        return repr(names)
    head = ", ".join(repr(n) for n in names[: _SHOWN - 1])
    return f"[{head}, ... ({len(names)} names)]"


def duplicated(names) -> list:
    """The names given more than once, each once, in order of their second appearance."""
    seen, twice = set(), {}
    for n in names:
        if n in seen:
            twice.setdefault(n, None)
        seen.add(n)
    return list(twice)


def bad_names(names) -> str | None:
    """What makes ``names`` unusable for a join by name (duplicated or empty names), or None."""
    twice = duplicated(names)
    if twice:
        return f"the name(s) {show(twice)} appear more than once"
    if any(isinstance(n, str) and n == "" for n in names):
        return "a name is empty"
    return None


def difference(got, expected, *, ordered=True) -> str:
    """How the names ``got`` differ from ``expected`` (which they do): the duplicated, missing
    and unknown ones, or, with the same names once each, the first place where the order
    differs."""
    got, expected = list(got), list(expected)
    parts = []
    twice = duplicated(got)
    if twice:
        parts.append(f"duplicated {show(twice)}")
    got_set, expected_set = set(got), set(expected)
    missing = [n for n in expected if n not in got_set]
    unknown = [n for n in got if n not in expected_set]
    if missing or unknown:
        parts.append(f"missing {show(missing)}, unknown {show(unknown)}")
    if not parts and ordered:
        k = next((i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), None)
        if k is not None:
            parts.append(
                f"the same names in another order (column {k} is {got[k]!r}, not {expected[k]!r})"
            )
    if not parts:
        parts.append(f"{len(got)} names against {len(expected)}")
    return "; ".join(parts)


def string_columns(X):
    """The column names of a DataFrame-like X when all are strings, else None."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    try:
        names = list(cols)
    except TypeError:
        return None
    return names if all(isinstance(c, str) for c in names) else None
