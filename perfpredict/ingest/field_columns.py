"""The readers of :mod:`perfpredict.ingest.fields` for whole columns at once.

Each reader handles the common, strict spelling of its field with numpy and says ``ok``
False for anything else; the parser reads those rows with the scalar reader, which gives
either the value or the error message. So the scalar readers stay the definition of each
rule, and the tests check that both agree wherever a column reader says ok.
:func:`map_distinct` covers fields with few distinct values (states, partitions, TRES
lists) by calling the scalar code once per distinct value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from perfpredict.ingest._text.blocks import ByteColumn
from perfpredict.ingest.fields import MAX_COUNT, MAX_EPOCH_S, FieldError

_SIZE_FACTORS = {ord(unit): 1024.0**power for power, unit in enumerate("KMGTP", start=1)}
# Byte positions in "2024-05-01T12:00:00".
_TIME_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_TIME_SEPARATORS = {4: "-", 7: "-", 10: "T", 13: ":", 16: ":"}
_TIME_WIDTH = 19
#: Years a wall-clock time the column readers convert may have: around those of the
#: epochs stored (1970 to 2100, MAX_EPOCH_S), whatever the zone's offset.
MIN_YEAR, MAX_YEAR = 1969, 2100
#: Digits of a decimal that :func:`decimals` reads exactly (below 2**53 as an integer).
_EXACT_DIGITS = 15
_POWERS_OF_TEN = np.array([10.0**k for k in range(_EXACT_DIGITS + 2)])


def _uppercase(column: ByteColumn) -> ByteColumn:
    matrix = column.matrix
    lower = (matrix >= ord("a")) & (matrix <= ord("z"))
    return ByteColumn(np.where(lower, matrix - 32, matrix).astype(np.uint8), column.lengths)


def _digit_values(column: ByteColumn, max_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer value of fields that are 1 to ``max_digits`` ASCII digits, and which are.
    Horner's rule one byte position at a time: a few vector operations per position,
    instead of a (rows, digits) matrix of digits times powers of ten."""
    matrix, lengths = column.matrix, column.lengths
    values = np.zeros(len(lengths), dtype=np.int64)
    ok = (lengths >= 1) & (lengths <= max_digits)
    for k in range(min(matrix.shape[1], max_digits)):
        digit = matrix[:, k] - np.uint8(ord("0"))  # wraps to >= 208 below "0"
        inside = k < lengths
        ok &= ~inside | (digit <= 9)
        values = np.where(inside, values * 10 + digit, values)
    return values, ok


def all_digits(column: ByteColumn) -> np.ndarray:
    """Which fields are one or more ASCII digits (of any length)."""
    inside = np.arange(column.matrix.shape[1]) < column.lengths[:, None]
    digit = (column.matrix >= ord("0")) & (column.matrix <= ord("9"))
    return (column.lengths > 0) & np.all(digit | ~inside, axis=1)


def decimals(column: ByteColumn) -> tuple[np.ndarray, np.ndarray]:
    """``float`` of ``-?D+(.D+)?`` with at most :data:`_EXACT_DIGITS` digits, and which
    rows are so spelled. Exactly ``float``'s value: the digits as one integer and the
    power of ten are both exact doubles, and one IEEE division rounds correctly."""
    matrix, lengths = column.matrix, column.lengths
    n_rows = len(lengths)
    negative = (lengths > 1) & (matrix[:, 0] == ord("-"))
    mantissa = np.zeros(n_rows, dtype=np.int64)
    n_digits = np.zeros(n_rows, dtype=np.int64)
    n_dots = np.zeros(n_rows, dtype=np.int64)
    after_dot = np.zeros(n_rows, dtype=np.int64)
    odd = lengths > _EXACT_DIGITS + 2  # sign, digits and a dot at most
    for k in range(min(matrix.shape[1], _EXACT_DIGITS + 2)):  # Horner, one byte at a time
        value = matrix[:, k] - np.uint8(ord("0"))  # wraps to >= 208 below "0"
        inside = (k < lengths) & ((k > 0) | ~negative)
        digit = inside & (value <= 9)
        dot = inside & (matrix[:, k] == ord("."))
        odd |= inside & ~digit & ~dot
        mantissa = np.where(digit, mantissa * 10 + value, mantissa)
        after_dot += digit & (n_dots > 0)
        n_dots += dot
        n_digits += digit
    ok = (~odd & (n_digits >= 1) & (n_digits <= _EXACT_DIGITS)
          & ((n_dots == 0) | ((n_dots == 1) & (after_dot >= 1) & (n_digits > after_dot))))
    # "-0" is 0.0, as fields.number reads it: + 0.0 turns IEEE's -0.0 into 0.0
    values = np.where(negative, -1.0, 1.0) * (mantissa / _POWERS_OF_TEN[after_dot]) + 0.0
    return np.where(ok, values, np.nan), ok


def whole_numbers(column: ByteColumn) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~perfpredict.ingest.fields.count` of plain digits: values as floats (NaN:
    empty, which ``count`` reads as None) and which rows were read."""
    values, digits_ok = _digit_values(column, max_digits=10)
    empty = column.lengths == 0
    ok = empty | (digits_ok & (values <= MAX_COUNT))
    return np.where(empty, np.nan, values.astype(np.float64)), ok


def sizes_bytes(column: ByteColumn) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~perfpredict.ingest.fields.memory_bytes` of ``231092K``, ``32G`` or plain
    bytes: values (NaN: empty) and which rows were read."""
    rows = np.arange(len(column.lengths))
    last = column.matrix[rows, np.maximum(column.lengths - 1, 0)]
    factor = np.ones(len(rows))
    for code, size in _SIZE_FACTORS.items():
        factor[last == code] = size
    suffixed = factor != 1.0
    values, ok = _digit_values(ByteColumn(column.matrix, column.lengths - suffixed), 15)
    empty = column.lengths == 0
    return np.where(empty, np.nan, values * factor), empty | ok


def key_values(column: ByteColumn, key: bytes) -> tuple[ByteColumn, np.ndarray, np.ndarray]:
    """:func:`~perfpredict.ingest.fields.tres_value` of lists like
    ``cpu=00:57:00,fs/disk=29671118931``: the values, where the key is present, and which
    rows were read (the key at most once, as a whole item)."""
    occurrences, first = column.find(key)
    rows = np.arange(len(first))
    value_start = first + len(key) + 1
    before = column.matrix[rows, np.maximum(first - 1, 0)]
    after = column.matrix[rows, np.minimum(value_start - 1, column.matrix.shape[1] - 1)]
    whole_item = (first == 0) | (before == ord(","))
    present = occurrences == 1
    ok = (occurrences == 0) | (present & whole_item & (after == ord("="))
                               & (value_start <= column.lengths))
    offsets = np.arange(column.matrix.shape[1])
    commas = (column.matrix == ord(",")) & (offsets >= value_start[:, None])
    next_comma = commas.argmax(axis=1)  # 0 also when no comma follows: checked below
    value_end = np.where(commas[rows, next_comma], next_comma, column.lengths)
    value_start = np.where(ok & present, value_start, 0)
    value_end = np.where(ok & present, value_end, 0)
    return column.slice(value_start, value_end), present & ok, ok


def local_epochs_s(column: ByteColumn, zone: ZoneInfo) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~perfpredict.ingest.fields.local_epoch_s` of ``2024-05-01T12:00:00``,
    epoch seconds, ``Unknown``, ``None`` and empty: epoch seconds UTC (NaN: not set) and
    which rows were read. Wall-clock times that occur twice or never in ``zone`` (DST
    changes) are left to the per-row rules, which read a time twice met by its Start or
    End (:func:`~perfpredict.ingest.sacct.rows.times`) and refuse one never met."""
    upper = _uppercase(column)
    unset = (column.lengths == 0) | upper.equals(b"UNKNOWN") | upper.equals(b"NONE")
    matrix = np.zeros((len(column.lengths), _TIME_WIDTH), dtype=np.int64)
    width = min(column.matrix.shape[1], _TIME_WIDTH)
    matrix[:, :width] = column.matrix[:, :width]
    digits = matrix - ord("0")
    ok = (column.lengths == _TIME_WIDTH) & np.all(
        (digits[:, _TIME_DIGITS] >= 0) & (digits[:, _TIME_DIGITS] <= 9), axis=1)
    for position, separator in _TIME_SEPARATORS.items():
        ok &= matrix[:, position] == ord(separator)

    def number(*positions: int) -> np.ndarray:
        value = np.zeros(len(matrix), dtype=np.int64)
        for position in positions:
            value = value * 10 + digits[:, position]
        return value

    year, month, day = number(0, 1, 2, 3), number(5, 6), number(8, 9)
    hour, minute, second = number(11, 12), number(14, 15), number(17, 18)
    month_index = (year - 1970) * 12 + np.clip(month, 1, 12) - 1
    first_day = month_index.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    next_first = (month_index + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    # Years far from the ones stored (9999, 0001) are left to the per-row rules, which
    # refuse them: pandas cannot localize a time whose UTC falls outside the calendar.
    ok &= ((year >= MIN_YEAR) & (year <= MAX_YEAR) & (month >= 1) & (month <= 12)
           & (day >= 1) & (day <= next_first - first_day) & (hour < 24) & (minute < 60)
           & (second < 60))
    local_s = (first_day + day - 1) * 86400 + hour * 3600 + minute * 60 + second
    epochs = local_s.astype(np.float64)
    if zone.key != "UTC" and ok.any():
        local = pd.DatetimeIndex(np.where(ok, local_s, 0).astype("datetime64[s]"))
        utc = local.tz_localize(zone, ambiguous="NaT", nonexistent="NaT").tz_convert(None)
        moments = np.asarray(utc.values, dtype="datetime64[s]")
        ok &= ~np.isnat(moments)
        epochs = np.where(ok, moments.astype(np.int64), 0).astype(np.float64)
    # SLURM_TIME_FORMAT=%s: epoch seconds, UTC whatever the zone; 0 is "not set"
    epoch_digits, is_epoch = _digit_values(column, 10)
    unset |= is_epoch & (epoch_digits == 0)
    epochs = np.where(is_epoch, epoch_digits, epochs).astype(np.float64)
    ok = (ok | is_epoch) & (epochs > 0) & (epochs <= MAX_EPOCH_S)
    return np.where(unset, np.nan, epochs), unset | ok


def nullable_floats(values: np.ndarray) -> list[float | None]:
    """Floats with NaN for None as the list a :class:`~perfpredict.ingest.records.RunBatch`
    holds (NaN replaced where numpy finds it, not tested value by value in Python)."""
    out: list[float | None] = values.tolist()
    for i in np.flatnonzero(np.isnan(values)).tolist():
        out[i] = None
    return out


def nullable_ints(values: np.ndarray) -> list[int | None]:
    """Whole floats with NaN for None as ints and None."""
    return [None if math.isnan(v) else int(v) for v in values.tolist()]


@dataclass
class Factorized:
    """A column as codes into its distinct values (ASCII text, or numbers)."""

    codes: np.ndarray
    values: list[Any]

    @classmethod
    def of(cls, column: ByteColumn) -> Factorized:
        # Exact codes from 8-byte words (numbers hash much faster than bytes objects).
        n_rows, width = column.matrix.shape
        padded = np.zeros((n_rows, -(-width // 8) * 8), dtype=np.uint8)
        padded[:, :width] = column.matrix
        codes = np.zeros(n_rows, dtype=np.int64)
        for k, word in enumerate(padded.view(np.uint64).T):
            word_codes, distinct = pd.factorize(word)
            # the first word's codes are numbered by first appearance already
            codes = (word_codes.astype(np.int64) if k == 0
                     else pd.factorize(codes * len(distinct) + word_codes)[0])
        firsts = _first_rows(codes)
        texts = [bytes(column.matrix[row, :column.lengths[row]]).decode("ascii") for row in firsts]
        return cls(codes, texts)

    @classmethod
    def of_numbers(cls, values: np.ndarray, whole: bool = False) -> Factorized:
        """Floats (NaN: None) by value; ``whole`` gives the distinct values as ints. By
        value, -0.0 would merge with 0.0: the readers read "-0" as 0.0 (:func:`decimals`,
        :func:`perfpredict.ingest.fields.number`), so no value is -0.0."""
        codes, distinct = pd.factorize(values, use_na_sentinel=False)
        return cls(codes, nullable_ints(distinct) if whole else nullable_floats(distinct))


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Where each code first appears, for codes numbered in order of first appearance
    (as pandas.factorize numbers them): the rows where a new maximum appears."""
    seen_before = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]]))
    return np.flatnonzero(codes > seen_before)


#: Results a :data:`RuleMemo` keeps before it starts afresh: accounting logs have few
#: distinct combinations, but a column of unique job names must not grow it unbounded.
MEMO_ENTRIES = 4096
#: A rule's results by the tuple of column values it was given (:func:`map_distinct`).
RuleMemo = dict[tuple[Any, ...], Any]
_UNSEEN = object()
_FAILED = object()  # the rule raised FieldError on these values


@dataclass
class DistinctMap:
    """A scalar rule applied once per distinct combination of column values: ``results``
    per combination (None where it raised :class:`FieldError`), ``codes`` per row."""

    results: list[Any]
    codes: np.ndarray
    failed: np.ndarray

    def column(self, part: int | None = None) -> np.ndarray:
        """The result per row (or its element ``part`` when results are tuples) as an
        object array; rows whose rule failed hold None."""
        chosen = np.empty(len(self.results), dtype=object)
        for i, result in enumerate(self.results):
            chosen[i] = result if part is None or result is None else result[part]
        return chosen[self.codes]


def map_distinct(rule: Callable[..., Any], columns: list[Factorized], rows: np.ndarray,
                 memo: RuleMemo | None = None) -> DistinctMap:
    """``rule(*values)`` on ``rows`` once per distinct combination of the columns' values,
    broadcast to those rows; a :class:`FieldError` marks the combination's rows failed.

    ``memo`` holds the rule's results from earlier calls (the blocks before), so that a
    file's combinations, mostly the same from block to block, go through the rule once.
    Its keys compare values with ``==``: text columns only (-0.0 equals 0.0)."""
    if not len(rows):
        return DistinctMap([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
    combined = np.zeros(len(rows), dtype=np.int64)
    for column in columns:
        combined = pd.factorize(combined * len(column.values) + column.codes[rows])[0]
    first_rows = _first_rows(combined)
    memo = {} if memo is None else memo
    results: list[Any] = []
    failed = np.zeros(len(first_rows), dtype=bool)
    for i, row in enumerate(rows[first_rows]):
        values = tuple(column.values[column.codes[row]] for column in columns)
        result = memo.get(values, _UNSEEN)
        if result is _UNSEEN:
            try:
                result = rule(*values)
            except FieldError:
                result = _FAILED
            if len(memo) >= MEMO_ENTRIES:
                memo.clear()
            memo[values] = result
        failed[i] = result is _FAILED
        results.append(None if failed[i] else result)
    return DistinctMap(results, combined, failed[combined])
