"""How a duration in seconds reads in text and is read from it: below every layer that
prints one (the estimate, the advice's job-script header, the reports) or reads one (the
scheduler-log parsers, an option such as ``advise --signal-lead``)."""

from __future__ import annotations

import math
import re

from perfpredict.counts import is_number
from perfpredict.errors import BadInputError

# [DD-[HH:]]MM:SS[.mmm], as Slurm and PBS write a time: days only with hours (sacct never
# prints "D-MM:SS")
_CLOCK = re.compile(
    r"^(?:(?:(?P<days>\d+)-)?(?P<hours>\d+):)?(?P<minutes>\d+):(?P<seconds>\d+(?:\.\d+)?)$"
)


def format_seconds(value_s: float) -> str:
    """``value_s`` as a reader wants it: one decimal from a second up, as jobs are timed,
    and three significant digits below, so that a benchmark timing 0.0386 s a transform
    does not read "0.0 s".

    >>> format_seconds(12345.67), format_seconds(8.46), format_seconds(0.03861)
    ('12,345.7', '8.5', '0.0386')
    """
    return f"{value_s:,.1f}" if abs(value_s) >= 1 else f"{value_s:.3g}"


def duration_text(value_s: float) -> str:
    """``value_s`` in the largest unit under it, to three significant digits: a queue's
    limit, a walltime or a runtime told in a sentence. Hours from an hour up; minutes
    below, where a 10-minute debug queue read "0.167 h"; seconds below a minute.

    >>> duration_text(7200), duration_text(35940), duration_text(86400 * 4)
    ('2 h', '9.98 h', '96 h')
    >>> duration_text(600), duration_text(1830), duration_text(45), duration_text(1)
    ('10 min', '30.5 min', '45 s', '1 s')
    """
    if value_s >= 3600:
        return f"{value_s / 3600:.3g} h"
    if value_s >= 60:
        return f"{value_s / 60:.3g} min"
    return f"{value_s:.3g} s"


def clock_text(value_s: float) -> str:
    """``value_s`` as ``D-HH:MM:SS`` to the nearest second: a runtime shown beside a
    ``--time``, which rounds up to whole minutes as a limit must; so rounded, a job
    predicted to run 3 min 3 s read "0-00:04:00", and one of 49 s a full minute.

    >>> clock_text(183.1), clock_text(48.6), clock_text(26845.6), clock_text(90061)
    ('0-00:03:03', '0-00:00:49', '0-07:27:26', '1-01:01:01')
    """
    minutes, seconds = divmod(round(value_s), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days}-{hours:02d}:{minutes:02d}:{seconds:02d}"


def clock_seconds(text: str) -> float:
    """Seconds of a clock duration ``[DD-[HH:]]MM:SS[.mmm]`` (Slurm's and PBS's form); a
    :class:`ValueError` whose message completes "<text> ..." when ``text`` is none.

    >>> clock_seconds("2-22:03:04"), clock_seconds("00:15.057"), clock_seconds("144:00:00")
    (252184.0, 15.057, 518400.0)

    PBS walltimes may have more than 24 hours (``144:00:00``), so hours are bounded only
    when days are given.
    """
    match = _CLOCK.match(text.strip())
    if match is None:
        raise ValueError("is not a duration like [DD-[HH:]]MM:SS[.mmm]")
    days = int(match["days"] or 0)
    hours = int(match["hours"] or 0)
    minutes, seconds = int(match["minutes"]), float(match["seconds"])
    if seconds >= 60 or (match["hours"] is not None and minutes >= 60) or (
        match["days"] is not None and hours >= 24
    ):
        raise ValueError("has a field out of range (minutes and seconds must be below 60, "
                         "hours below 24 after a day count)")
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def option_seconds(option: str, text: str | float) -> float:
    """A duration option's value in seconds: a number of seconds (``600``, as text or,
    from a library caller, as a number) or a clock duration (``10:00``, ``1:30:00``,
    ``1-00:00:00``), finite and above zero; else a :class:`BadInputError` naming
    ``option`` (a number was a TypeError, "argument of type 'int' is not iterable").

    >>> option_seconds("--signal-lead", "600"), option_seconds("--signal-lead", "1:30:00")
    (600.0, 5400.0)
    >>> option_seconds("--signal-lead", 600)
    600.0
    """
    if is_number(text):
        value_s = float(text)
    elif not isinstance(text, str):
        value_s = math.nan
    else:
        try:
            value_s = clock_seconds(text) if ":" in text else float(text)
        except ValueError:
            value_s = math.nan
    if not (math.isfinite(value_s) and value_s > 0):
        raise BadInputError(f"{option} must be a duration above zero, in seconds (600) or as "
                            f"[DD-[HH:]]MM:SS (10:00, 1:30:00), got {text!r}")
    return value_s
