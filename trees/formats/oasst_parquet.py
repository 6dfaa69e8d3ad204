"""Open-Assistant's message rows as Parquet, in the Hugging Face hub's schema
(``OpenAssistant/oasst1``, ``oasst2``), read and written a batch at a time.

The hub stores ``emojis`` and ``labels`` as structs of lists — ``{name: [...], count:
[...]}`` and ``{name: [...], value: [...], count: [...]}`` — where Open-Assistant's JSONL
has ``{"+1": 3}`` and ``{"spam": {"value": 0.0, "count": 3}}``. Rows are read as the
structs they are (their order survives any database; ``oasst_rows`` gives them to JSON
as mappings), and mappings from JSONL are written as structs.

Reading takes the file in batches of ``BATCH_ROWS`` rows, never the whole table, and
refuses a file over ``max_decompressed_bytes`` once decompressed, as its row groups say,
or a row whose text is longer than ``max_line_bytes`` (``trees.formats.bounds``).
Writing holds ``GROUP_ROWS`` rows at a time, a row group each. Parquet has only the hub's
18 columns: other metadata keys, or values of another type than the column's, are not
written (JSONL keeps them).

pyarrow is an optional extra (``pip install -e '.[parquet]'``): without it, reading
or writing Parquet is refused, naming the extra.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from trees.formats import oasst_rows
from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds
from trees.formats.records import FormatError, ImportIssue
from trees.storable import json_problems

MAGIC = b"PAR1"
DEPTH_SETTING = "BRANCHPOINT_MAX_JSON_DEPTH"
BATCH_ROWS = 2_000
GROUP_ROWS = 10_000
MISSING_PYARROW = (
    "Parquet needs pyarrow, which is not installed: pip install -e '.[parquet]' (Branchpoint's parquet extra)"
)
_STRING, _INT, _BOOL, _FLOAT = "string", "int32", "bool", "float64"
DETOXIFY = (
    "toxicity",
    "severe_toxicity",
    "obscene",
    "identity_attack",
    "insult",
    "threat",
    "sexual_explicit",
)
# The hub's features, in its order: a column's type, or a struct's fields.
COLUMNS: tuple[tuple[str, Any], ...] = (
    ("message_id", _STRING),
    ("parent_id", _STRING),
    ("user_id", _STRING),
    ("created_date", _STRING),
    ("text", _STRING),
    ("role", _STRING),
    ("lang", _STRING),
    ("review_count", _INT),
    ("review_result", _BOOL),
    ("deleted", _BOOL),
    ("rank", _INT),
    ("synthetic", _BOOL),
    ("model_name", _STRING),
    ("detoxify", {name: _FLOAT for name in DETOXIFY}),
    ("message_tree_id", _STRING),
    ("tree_state", _STRING),
    ("emojis", {"name": [_STRING], "count": [_INT]}),
    ("labels", {"name": [_STRING], "value": [_FLOAT], "count": [_INT]}),
)


class ParquetUnavailable(Exception):
    """pyarrow is not installed."""


def available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ParquetUnavailable(MISSING_PYARROW) from None
    return pyarrow, pyarrow.parquet


def _arrow_type(pa: Any, spec: Any) -> Any:
    if isinstance(spec, dict):
        return pa.struct([(name, _arrow_type(pa, inner)) for name, inner in spec.items()])
    if isinstance(spec, list):
        return pa.list_(_arrow_type(pa, spec[0]))
    return {_STRING: pa.string(), _INT: pa.int32(), _BOOL: pa.bool_(), _FLOAT: pa.float64()}[spec]


def _feature(spec: Any) -> Any:
    """The ``datasets`` feature of a column, as the hub's files declare it."""
    if isinstance(spec, dict):
        fields = {
            name: _feature(inner[0] if isinstance(inner, list) else inner) for name, inner in spec.items()
        }
        if all(isinstance(inner, list) for inner in spec.values()):
            return {"feature": fields, "_type": "Sequence"}
        return fields
    return {"dtype": spec, "_type": "Value"}


def hub_schema() -> Any:
    """The hub's Arrow schema, with the ``huggingface`` metadata that ``datasets`` reads."""
    pa, _ = _pyarrow()
    features = {name: _feature(spec) for name, spec in COLUMNS}
    metadata = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([(name, _arrow_type(pa, spec)) for name, spec in COLUMNS], metadata=metadata)


# -- reading ------------------------------------------------------------------------------------


def _seekable(stream: IO[bytes]) -> IO[bytes]:
    """``stream`` itself when it can seek (Parquet's index is at its end), else a copy of it
    in a temporary file (standard input, a gzip file)."""
    try:
        if stream.seekable():
            return stream
    except (AttributeError, ValueError):
        pass
    copy = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 - closed with the reading
    shutil.copyfileobj(stream, copy, 1 << 20)
    copy.seek(0)
    return copy  # type: ignore[return-value]


def _issue(row: int | None, message: str) -> ImportIssue:
    return ImportIssue(row, "", message, "row")


def iter_rows(stream: IO[bytes], bounds: ReadBounds = DEFAULT_BOUNDS) -> Iterator[tuple[int, Any]]:
    """Yield ``(row number, row)`` for each row (numbered from 1), in the JSONL shapes; a row
    holding what cannot be stored, or nesting too deeply, yields ``(row, ImportIssue)``.

    Raises ``FormatError`` when the file is not Parquet, is too large once decompressed or
    holds a text over the line bound, and ``ParquetUnavailable`` without pyarrow.
    """
    pa, pq = _pyarrow()
    source = _seekable(stream)
    try:
        try:
            parquet = pq.ParquetFile(source)
        except (pa.ArrowException, OSError, ValueError) as error:
            raise FormatError(_issue(None, f"not a Parquet file ({error})")) from None
        metadata = parquet.metadata
        size = sum(metadata.row_group(group).total_byte_size for group in range(metadata.num_row_groups))
        limit = bounds.max_decompressed_bytes
        if limit is not None and size > limit:
            raise FormatError(
                _issue(
                    None,
                    f"the file is over {limit:,} bytes once decompressed ({size:,} by its row groups; "
                    "BRANCHPOINT_MAX_DECOMPRESSED_BYTES)",
                )
            )
        yield from _batches(pa, parquet, bounds)
    finally:
        if source is not stream:
            source.close()


def _batches(pa: Any, parquet: Any, bounds: ReadBounds) -> Iterator[tuple[int, Any]]:
    import pyarrow.compute as pc

    number = 0
    # Arrow's strings are UTF-8 (no lone surrogate reads back), and the schema bounds the
    # nesting: only a NUL, or a schema nesting past the bound, needs each row walked.
    depth = bounds.max_json_depth
    walk_all = _nesting(parquet.schema_arrow) > depth
    try:
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            _check_texts(pc, batch, number, bounds.max_line_bytes)
            walk = walk_all or _holds_nul(pc, batch)
            for row in batch.to_pylist():
                number += 1
                problems = json_problems(row, max_depth=depth, depth_setting=DEPTH_SETTING) if walk else None
                if problems:
                    first = problems[0]
                    yield number, ImportIssue(number, first.path, first.message, "row")
                else:
                    yield number, row
    except (pa.ArrowException, OSError) as error:
        raise FormatError(_issue(number + 1, f"the Parquet file cannot be read here ({error})")) from None
    except UnicodeDecodeError as error:
        raise FormatError(_issue(number + 1, f"not UTF-8 text ({error.reason})")) from None


def _check_texts(pc: Any, batch: Any, before: int, limit: int) -> None:
    """Refuse a row whose text (or any string column) is longer than the line bound."""
    for index, column in enumerate(batch.columns):
        name = batch.schema.field(index).name
        if not _is_text(column.type):
            continue
        lengths = pc.binary_length(column)
        longest = pc.max(lengths).as_py()
        if longest is not None and longest > limit:
            at = pc.index(lengths, longest).as_py()
            raise FormatError(
                ImportIssue(
                    before + at + 1,
                    name,
                    f"is longer than {limit:,} bytes (BRANCHPOINT_MAX_LINE_BYTES)",
                    "row",
                )
            )


def _nesting(schema: Any) -> int:
    """How deep the schema's values nest, as JSON would: a row is one level, and each struct,
    list or map one more."""
    import pyarrow.types as types

    deepest = 1
    stack = [(schema.field(index).type, 2) for index in range(len(schema))]
    while stack:
        arrow_type, depth = stack.pop()
        if types.is_struct(arrow_type) or types.is_list(arrow_type) or types.is_large_list(arrow_type):
            deepest = max(deepest, depth)
            stack.extend((arrow_type.field(index).type, depth + 1) for index in range(arrow_type.num_fields))
        elif types.is_map(arrow_type):
            deepest = max(deepest, depth)
            stack.append((arrow_type.item_type, depth + 1))
    return deepest


def _holds_nul(pc: Any, batch: Any) -> bool:
    """Whether any text in the batch, however nested, holds a NUL character."""
    import pyarrow.types as types

    arrays = list(batch.columns)
    while arrays:
        array = arrays.pop()
        kind = array.type
        if _is_text(kind):
            if pc.any(pc.match_substring(array, "\x00")).as_py():
                return True
        elif types.is_struct(kind):
            arrays.extend(array.flatten())
        elif types.is_list(kind) or types.is_large_list(kind):
            arrays.append(array.flatten())
        elif types.is_map(kind):
            arrays.extend([array.keys, array.items])
    return False


def _is_text(arrow_type: Any) -> bool:
    import pyarrow.types as types

    return bool(types.is_string(arrow_type) or types.is_large_string(arrow_type))


# -- writing ------------------------------------------------------------------------------------


class _Pieces:
    """Where the Parquet writer writes: bytes kept until they are handed on."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def _column(pa: Any, values: list[Any], arrow_type: Any) -> Any:
    """The column of ``values``; a value that is not of the column's type is written as null."""
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        kept = []
        for value in values:
            try:
                pa.array([value], type=arrow_type)
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                value = None
            kept.append(value)
        return pa.array(kept, type=arrow_type)


def write_rows(rows: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The Parquet file of ``rows`` (dicts in the JSONL shapes), in pieces: one row group
    of up to ``GROUP_ROWS`` rows a piece, then the footer."""
    pa, pq = _pyarrow()
    schema = hub_schema()
    sink = _Pieces()
    writer = pq.ParquetWriter(sink, schema, compression="snappy")
    pending: list[dict[str, Any]] = []

    def flush() -> bytes:
        columns = []
        for index, (name, _) in enumerate(COLUMNS):
            values = [row.get(name) for row in pending]
            if name == "emojis":
                values = [oasst_rows.emojis_to_struct(value) for value in values]
            elif name == "labels":
                values = [oasst_rows.labels_to_struct(value) for value in values]
            columns.append(_column(pa, values, schema.field(index).type))
        writer.write_table(pa.Table.from_arrays(columns, schema=schema))
        pending.clear()
        return sink.take()

    try:
        for row in rows:
            pending.append(row)
            if len(pending) >= GROUP_ROWS:
                yield flush()
        if pending:
            yield flush()
    finally:
        writer.close()
    yield sink.take()
